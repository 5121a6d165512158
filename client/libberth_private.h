/* SPDX-License-Identifier: MIT */
/* Inside libberth: the objects behind the public handles, and the helpers
 * its files share. Not installed. */
#ifndef BERTH_LIBBERTH_PRIVATE_H
#define BERTH_LIBBERTH_PRIVATE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "berth/berth.h"
#include "codec.h"
#include "error.h"

struct berth_client {
    int fd;
    char *path;
    char *buf;             /* bytes read and not yet consumed */
    size_t len, cap;
    json_t *events;        /* events read while waiting for a reply */
    bool watching;
    long long next_id;
    double spin;           /* seconds to poll for a reply before sleeping */
    /* Reconnecting after berthd restarts (PROTOCOL.md "Reconnecting after a
     * restart"): how long to keep trying (0: never), the connection-bound
     * leases this handle holds, to reclaim by id, and those a reclaim found
     * gone, with why. */
    double reconnect;
    double answer;         /* seconds a reply may take (0: no bound) */
    char **held;
    int nheld, capheld;
    char **lost;
    int nlost, caplost;
};

struct berth_request {
    struct proto_acquire a;
};

struct berth_launch {
    struct launch l;
};

/* BERTH_* variables derived from the placement (berthd sent none). */
struct lease_env {
    struct env_set_item *items;
    int n;
};

struct berth_lease {
    struct proto_lease l;  /* its launch moved to `launch` */
    struct berth_launch launch;
    /* The lease object as berthd sent it; or, when the reply was read by
     * the fast lane (reply_fast.h), NULL and the reply line itself, parsed
     * only when berth_lease_json asks. */
    json_t *json;
    char *line;
    size_t linelen;
    /* Derived on first use when l.env is NULL (most callers never look):
     * set once by whichever reader gets there first, hence atomic. */
    _Atomic (struct lease_env *) derived;
};

struct berth_event {
    struct proto_event ev;
    berth_lease_t *lease;  /* granted only */
    json_t *json;
};

/* Copy an internal error into the public struct (err may be NULL); code
 * overrides e->code when not NULL. Returns -1. */
int client_error (berth_client_error_t *err, const berth_error_t *e,
                  const char *code);
/* printf into the public struct. Returns -1. */
int client_errorf (berth_client_error_t *err, const char *code,
                   const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/* Lease from an acquire reply or a lease object (borrowed); NULL on a
 * malformed one (code protocol). */
berth_lease_t *lease_from_json (json_t *o, berth_client_error_t *err);
/* Lease from a reply the fast lane decoded: takes *decoded (emptied) and
 * line (malloc'd, len bytes, the whole reply), in every case. */
berth_lease_t *lease_from_fast (struct proto_lease *decoded, char *line, size_t len,
                                berth_client_error_t *err);
/* Event from an event message (borrowed). */
berth_event_t *event_from_json (json_t *o, berth_client_error_t *err);

/* The BERTH_* variables of a placement when berthd did not send them:
 * appends to l->l.env. */
int lease_derive_env (struct proto_lease *l, berth_error_t *err);

/* The request line of an acquire or release written directly, exactly as
 * proto_line (proto_encode_request ()) would write it, when every string
 * in it is plain (printable ASCII, nothing to escape); NULL otherwise (or
 * out of memory): then the codec writes it. */
char *request_line_fast (const struct proto_request *req, long long id);

/* The socket berth_connect uses when given none and $BERTH_SOCKET is not
 * set: berthd's default for this user and job (socket_path.h); also shown
 * by the CLI's --help. */
int client_default_socket (char *buf, size_t size, berth_client_error_t *err);

#endif
