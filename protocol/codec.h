/* SPDX-License-Identifier: MIT */
/* The berthd wire protocol (protocol/PROTOCOL.md): newline-delimited JSON
 * objects over a Unix stream socket. This codec turns request lines into C
 * structs (strictly: unknown keys, wrong types and absurd figures are
 * refused, naming the field; codec_request.c) and builds the replies
 * (codec_reply.c) and watch events (codec_event.c); clients (libberth,
 * berth) decode replies and events with it (codec_client.c) and encode
 * requests (codec_request_encode.c). The ops are one table (op_table.c). No
 * I/O: callers read and write the lines. */
#ifndef BERTH_PROTO_CODEC_H
#define BERTH_PROTO_CODEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "outcome.h"
#include "placement.h"
#include "render.h"
#include "step.h"

#define PROTO_VERSION 1                   /* the version this build speaks */
#define PROTO_MAX_LINE (64 * 1024)        /* bytes per request line, '\n' excluded */
#define PROTO_MAX_REPLY (64 * 1024 * 1024) /* bytes per reply or event line */

/* Bounds on request figures: anything above is a mistake, not a request. */
#define PROTO_MAX_COUNT (1 << 20)                 /* tasks, cores, GPUs, ids */
#define PROTO_MAX_MEMORY_MB ((int64_t) 1 << 40)   /* MB */
#define PROTO_MAX_SECONDS (366.0 * 24 * 3600)     /* timeouts, ttl, durations */
#define PROTO_MAX_PRIORITY (1 << 20)              /* |priority| */
#define PROTO_MAX_PID (1 << 22)                   /* Linux PID_MAX_LIMIT */
#define PROTO_MAX_NAME 255                        /* bytes: labels, node names, lease and string ids */
#define PROTO_MAX_ARGS 4096                       /* argv items */

/* Stable error codes (error.code of a reply): their one definition.
 * libberth's public header repeats them as BERTH_ERR_* so that it stays
 * self-contained for users; PROTO_ERROR_NAMES ties the two: libberth.c
 * refuses to build when a public name is missing or of another length, and
 * tests/unit/test_error_codes.c checks that each equals its PROTO_ERR_*. */
#define PROTO_ERR_INVALID_REQUEST "invalid_request"
#define PROTO_ERR_UNSATISFIABLE "unsatisfiable"
#define PROTO_ERR_TIMEOUT "timeout"
#define PROTO_ERR_NOT_FOUND "not_found"
#define PROTO_ERR_FORBIDDEN "forbidden"
#define PROTO_ERR_TOO_LARGE "too_large"
#define PROTO_ERR_SHUTTING_DOWN "shutting_down"
#define PROTO_ERR_UNSUPPORTED_VERSION "unsupported_version"
#define PROTO_ERR_BUSY "busy"
#define PROTO_ERR_INTERNAL "internal"

/* Every code above, as X (NAME) for PROTO_ERR_##NAME: the tables of known
 * codes and the checks against libberth's are built from this list. */
#define PROTO_ERROR_NAMES(X)                                              \
    X (INVALID_REQUEST) X (UNSATISFIABLE) X (TIMEOUT) X (NOT_FOUND)       \
    X (FORBIDDEN) X (TOO_LARGE) X (SHUTTING_DOWN) X (UNSUPPORTED_VERSION) \
    X (BUSY) X (INTERNAL)

/* The stable constant equal to code, or NULL when code is not one of them. */
const char *proto_error_code (const char *code);

/* Every op, once, as X (ENUM, name): PROTO_##ENUM is its enum proto_op and
 * name its "op" on the wire. The op table (op_table.c) is built from this
 * list, with codec_decode_##name and codec_encode_##name for each, and so is
 * berthd's table of handlers (daemon/dispatch.c: handle_##name): adding an
 * op is a line here, its decoder and encoder, and its handler; a missing one
 * fails the build. */
#define PROTO_OPS(X)                                                         \
    X (HELLO, hello) X (ACQUIRE, acquire) X (RELEASE, release)               \
    X (RENDER, render) X (RESOURCES, resources) X (STATUS, status)           \
    X (WATCH, watch) X (SHUTDOWN, shutdown)                                  \
    X (RECLAIM, reclaim)    /* take back a lease orphaned by a restart */    \
    X (PLACED, placed)      /* a step tells the CPUs it really got */

enum proto_op {
#define PROTO_OP_ENUM(e, name) PROTO_##e,
    PROTO_OPS (PROTO_OP_ENUM)
#undef PROTO_OP_ENUM
};

/* How many ops there are (an int, not an enum proto_op, so that switches
 * over the ops need no case for it). */
#define PROTO_OP_COUNT_ONE(e, name) + 1
#define PROTO_NOPS (0 PROTO_OPS (PROTO_OP_COUNT_ONE))

const char *proto_op_name (enum proto_op op);

enum proto_shutdown_mode { PROTO_SHUTDOWN_DRAIN, PROTO_SHUTDOWN_FORCE };

struct proto_acquire {
    struct step_request step;   /* timeout < 0: wait without limit */
    bool wait;                  /* default true: queue until it fits */
    bool detach;                /* lease outlives the connection */
    double ttl;                 /* seconds, < 0: none (detached leases only) */
    int owner_pid;              /* 0: none (detached leases only) */
    bool env;                   /* reply also carries the BERTH_* variables */
    double duration;            /* seconds the step expects to run; < 0: not
                                   stated (checked against the job's end) */
    bool resume;                /* sent again after a restart of berthd: take
                                   back its place (PROTOCOL.md "Reconnecting") */
};

struct proto_render {
    struct placement placement;
    int ntasks;                 /* default 1 */
    int cpus_per_task;          /* 0: not given */
    int64_t memory_cap;         /* MB per node, < 0: none */
    char **argv;                /* NULL-terminated, never empty */
};

struct proto_request {
    enum proto_op op;
    json_t *id;                 /* the client's id (a reference), NULL when unreadable */
    union {
        struct { int version; bool pipeline; } hello;   /* version 0: not
                                                            given */
        struct proto_acquire acquire;
        struct { char *lease; struct proto_outcome *outcome; } release;
        struct proto_render render;
        struct { char *lease; } resources;          /* NULL: the whole allocation */
        struct { bool history; } watch;
        /* time_left: find the job's end even if that costs one scheduler
         * query (otherwise status shows it only when already known);
         * queue_only: the queue without the allocation and the leases
         * (cheap enough to ask once a second while a request waits);
         * pid > 0: as queue_only, the queue holding that process's
         * requests only (a progress poll; 0: every request);
         * brief > 0: a person's view, the sums with the first `brief`
         * nodes, leases and waiting requests (PROTOCOL.md) */
        struct { bool time_left, queue_only; int pid, brief; } status;
        struct { enum proto_shutdown_mode mode; } shutdown;
        struct { char *lease; } reclaim;
        /* the real core ids (and GPU indices, ngpu_ids < 0: not stated)
         * of a local step the scheduler placed */
        struct { char *lease; int *cores; int ncores; int *gpu_ids; int ngpu_ids; } placed;
    };
};

/* Empty request of this op with every default set. */
void proto_request_init (struct proto_request *req, enum proto_op op);
void proto_request_free (struct proto_request *req);   /* contents, not req */

/* Decode one request line (len bytes, a trailing newline allowed). On
 * failure err has the code too_large (len > PROTO_MAX_LINE) or
 * invalid_request with a message naming the field, and *req holds nothing but
 * req->id: the request's id when it was readable, else NULL, to be echoed in
 * the error reply. Call proto_request_free in both cases. */
int proto_decode_request (const char *line, size_t len,
                          struct proto_request *req, berth_error_t *err);

/* The request as a JSON object (what a client sends); NULL on bad input. */
json_t *proto_encode_request (const struct proto_request *req);

/* A grant, as the daemon describes it in acquire replies, granted events
 * and status. */
struct proto_lease {
    char *id;                     /* "L17" */
    char *label;                  /* NULL: none */
    struct placement placement;
    int64_t memory_cap;           /* MB per node, declared; < 0: none */
    int64_t budget_mb;            /* accounted MB; < 0: unknown */
    struct launch launch;         /* rendered argv (NULL: none) and env delta */
    struct env_set_item *env;     /* BERTH_* variables, when asked; else NULL */
    int nenv;
    int owner_pid;                /* 0: not stated */
    double granted;               /* Unix time; < 0: not stated */
};

void proto_lease_init (struct proto_lease *l);
void proto_lease_free (struct proto_lease *l);     /* contents, not l */

/* Replies. id may be NULL (sent as null). All return a new object or NULL
 * when the input is unusable (an invalid placement or launch). */
json_t *proto_error_reply (json_t *id, const berth_error_t *err);
/* max_waiting > 0: the connection pipelines acquires, that many waiting. */
json_t *proto_hello_reply (json_t *id, int version, int max_waiting);
json_t *proto_acquire_reply (json_t *id, const struct proto_lease *lease);
json_t *proto_release_reply (json_t *id, const char *lease);
/* reclaim answers with the lease, as acquire does: proto_acquire_reply. */
json_t *proto_render_reply (json_t *id, const struct launch *launch);
/* {"id","ok":true} plus every member of body (may be NULL); body is not
 * stolen. For resources, watch, shutdown and the daemon's own shapes. */
json_t *proto_ok_reply (json_t *id, json_t *body);
/* The most rows a brief status may ask for. */
#define PROTO_STATUS_BRIEF_MAX 1000

/* status: allocation view, leases (array of lease objects), queue; the
 * arguments are stolen references (NULL: empty). */
json_t *proto_status_reply (json_t *id, json_t *allocation, json_t *leases,
                            json_t *queue);
/* One lease as an object (the members of an acquire reply without id/ok). */
json_t *proto_lease_json (const struct proto_lease *lease);

/* Watch events. */
enum proto_event_kind {
    PROTO_EV_GRANTED,
    PROTO_EV_WAITED,
    PROTO_EV_RELEASED,
    PROTO_EV_REFUSED,
    PROTO_EV_ALLOCATION,          /* berthd started: the allocation it serves */
};

struct proto_event {
    enum proto_event_kind kind;
    double time;                  /* Unix time */
    struct proto_lease lease;     /* granted: all of it; released: id, label */
    char *label;                  /* waited, refused: the request's label or NULL */
    int position;                 /* waited: place in the queue, 1 = next */
    char *why;                    /* waited: why; released: the reason */
    struct proto_outcome *outcome; /* released: how the step ended, or NULL */
    berth_error_t error;          /* refused */
    char *job_id, *machine;       /* allocation: either may be NULL */
    json_t *nodes;                /* allocation: [{name, cores (id set text),
                                   * ncores, gpus}], each checked, one a
                                   * node (a logged run expanded) */
};

json_t *proto_event_waited (double time, const char *label, int position,
                            const char *why);
/* reason: "released", "disconnected", "expired", "owner_exited", "forced" */
json_t *proto_event_released (double time, const char *lease,
                              const char *label, const char *reason);
json_t *proto_event_refused (double time, const char *label,
                             const berth_error_t *why);
/* nodes: taken over (see struct proto_event). */
json_t *proto_event_allocation (double time, const char *job_id, const char *machine,
                                json_t *nodes);

/* A message as one line: compact JSON and '\n', malloc'd; NULL on failure. */
char *proto_line (const json_t *msg);

/* Client side. Parse one reply or event line (at most PROTO_MAX_REPLY). */
int proto_parse_message (const char *line, size_t len, json_t **msg,
                         berth_error_t *err);
bool proto_is_event (const json_t *msg);
/* 0 for {"ok":true}; -1 for {"ok":false} with err holding the reply's code
 * (a PROTO_ERR_* constant; unknown codes read "error") and message, or for
 * a malformed reply (code internal). */
int proto_reply_status (const json_t *msg, berth_error_t *err);
/* Decoders of successful replies; on failure nothing is left allocated. */
int proto_decode_hello_reply (const json_t *msg, int *version,
                              berth_error_t *err);
int proto_decode_lease (const json_t *msg, struct proto_lease *lease,
                        berth_error_t *err);   /* acquire reply or lease object */
/* A placement object as a render request takes it (nodes may be left out). */
int proto_decode_placement (const json_t *v, struct placement *out,
                            berth_error_t *err);
int proto_decode_render_reply (const json_t *msg, struct launch *launch,
                               berth_error_t *err);
int proto_decode_event (const json_t *msg, struct proto_event *ev,
                        berth_error_t *err);
void proto_event_free (struct proto_event *ev);   /* contents, not ev */

#endif
