/* Inside libberth: the objects behind the public handles, and the helpers
 * its files share. Not installed. */
#ifndef BERTH_LIBBERTH_PRIVATE_H
#define BERTH_LIBBERTH_PRIVATE_H

#include <jansson.h>
#include <stdbool.h>

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
};

struct berth_request {
    struct proto_acquire a;
};

struct berth_launch {
    struct launch l;
};

struct berth_lease {
    struct proto_lease l;  /* its launch moved to `launch` */
    struct berth_launch launch;
    json_t *json;          /* the lease object as berthd sent it */
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
/* Event from an event message (borrowed). */
berth_event_t *event_from_json (json_t *o, berth_client_error_t *err);

/* The BERTH_* variables of a placement when berthd did not send them:
 * appends to l->l.env. */
int lease_derive_env (struct proto_lease *l, berth_error_t *err);

#endif
