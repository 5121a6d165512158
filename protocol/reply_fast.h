/* SPDX-License-Identifier: MIT */
/* The client's fast lane for the two hot replies: a grant (acquire and
 * reclaim answer with the lease) and a release, decoded straight from the
 * line with json_scan instead of through a jansson tree. A line is decoded
 * only when the jansson path (proto_parse_message, proto_reply_status,
 * proto_decode_lease) would accept it and read exactly the same; everything
 * else -- an error reply, an event, a member this file does not know (such
 * as "warning"), a value out of range -- is declined, and the caller decodes
 * the line with jansson as before. */
#ifndef BERTH_PROTO_REPLY_FAST_H
#define BERTH_PROTO_REPLY_FAST_H

#include <stdbool.h>
#include <stddef.h>

#include "codec.h"

/* What a reply says besides its body. The fast lane reads only integer ids
 * (the ones clients send) and only "ok": true (error replies are declined). */
struct proto_fast_reply {
    long long id;
    bool ok;
};

/* A successful lease reply: {"id": N, "ok": true, "lease": ..., "placement":
 * ..., and any of the other members proto_decode_lease reads}. 0 with *r and
 * *lease set (free with proto_lease_free); 1 when declined (also when memory
 * runs out), with nothing allocated and *lease untouched. */
int proto_fast_lease_reply (const char *line, size_t len,
                            struct proto_fast_reply *r, struct proto_lease *lease);

/* A successful release reply: exactly {"id": N, "ok": true, "lease": "L1"},
 * in any order. 0 with *r set, 1 when declined. */
int proto_fast_release_reply (const char *line, size_t len,
                              struct proto_fast_reply *r);

#endif
