/* SPDX-License-Identifier: MIT */
/* The fast lane of request decoding: acquire and release, the requests that
 * every step sends, decoded from json_scan tokens without building a jansson
 * tree. proto_decode_request tries it first; whatever it declines goes the
 * jansson way, which also words every refusal. */
#ifndef BERTH_PROTO_REQUEST_FAST_H
#define BERTH_PROTO_REQUEST_FAST_H

#include <stdbool.h>
#include <stddef.h>

#include "codec.h"

/* 0 when line (len bytes, a trailing newline allowed) is an acquire or
 * release that the jansson path accepts: *req is then filled exactly as
 * proto_decode_request fills it (req->id a new reference). 1 when it
 * declines (any other op, any member, value or form it does not take, or
 * memory running out): nothing is allocated and *req is untouched. It never
 * refuses a request; the jansson path does that. */
int proto_decode_request_fast (const char *line, size_t len,
                               struct proto_request *req);

/* proto_decode_request without the fast lane: the reference the fast lane
 * is tested against (unit tests, fuzz_codec). */
int proto_decode_request_jansson (const char *line, size_t len,
                                  struct proto_request *req, berth_error_t *err);

/* Do a and b (decoded requests) hold the same op, id and values, reals bit
 * for bit? When not, why names the first member that differs. For the
 * differential tests of the fast lane against the jansson path. */
bool proto_request_same (const struct proto_request *a,
                         const struct proto_request *b, char *why, size_t size);

#endif
