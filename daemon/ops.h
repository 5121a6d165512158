/* SPDX-License-Identifier: MIT */
/* The ops: what berthd does with one decoded request. The connection layer
 * (server.c) hands each request line to ops_serve and writes what it
 * returns; a handler never writes to a socket. An acquire that has to wait
 * answers later, through its client's answer callback, the one way back. */
#ifndef BERTHD_OPS_H
#define BERTHD_OPS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "codec.h"

struct shared_text;

struct berthd;
struct waiter;

/* A connection's client as the ops see it. The connection layer fills in
 * who it is and the answer callback; the ops own `waiter`. */
struct client {
    uint64_t serial;              /* the connection's number, for logs */
    pid_t pid;                    /* SO_PEERCRED */
    uid_t uid;
    uint64_t start;               /* its start time (pidstart.h), read once */
    bool start_read;
    bool reserve;                 /* over --max-connections, in the reserve:
                                     it may not acquire or watch */
    /* A late answer to a waiting request (line stolen). */
    void (*answer) (struct client *cl, char *line, size_t len);
    struct waiter *waiters;       /* the acquires it waits on (one unless it
                                     pipelines); which leases it holds, the
                                     lease book knows */
    int nwaiting;
    bool pipelined;               /* hello's "pipeline": its later lines are
                                     served while acquires wait, up to
                                     --max-leases of them */
    const char *line;             /* the request line being served (during */
    size_t line_len;              /* ops_serve only) */
};

/* The client's start time, read the first time it is needed (0: unknown). */
uint64_t client_start (struct client *cl);

enum op_result {
    OP_ANSWERED,                  /* the reply is in op_reply (or none) */
    OP_WAITS,                     /* answered later, through cl->answer */
    OP_AGAIN,                     /* needs the job's end: serve the same line
                                     again once it is known (server_end_known) */
};

enum op_watch { OP_WATCH_NONE, OP_WATCH, OP_WATCH_HISTORY };

/* What a request is answered with: a line to write, and whether the
 * connection now watches events (with this run's history first). */
struct op_reply {
    char *line;                   /* ends with a newline (unless a tail
                                     follows); the caller frees */
    size_t len;
    struct shared_text *tail;     /* NULL, or the rest of the reply after
                                     line, by reference; the caller unrefs */
    enum op_watch watch;
    bool close;                   /* close the connection once it is sent */
};

enum op_result ops_serve (struct berthd *d, struct client *cl,
                          const char *line, size_t len, struct op_reply *out);
/* The client went away: its waiting request is dropped and its
 * connection-bound leases end. */
void ops_client_gone (struct berthd *d, struct client *cl);
/* w no longer waits for cl (answered, or cancelled). */
void client_unwait (struct client *cl, struct waiter *w);
/* At start, once the leases are restored: the requests that waited when
 * berthd went away are put back in the queue in their places, reserving as
 * any waiter does, until their processes send them again (one that fits
 * now is granted, and its lease kept for that process) or the reclaim
 * grace is over. */
int ops_restore_waits (struct berthd *d, berth_error_t *err);
/* A drain (force: end every lease now). */
void ops_shutdown (struct berthd *d, bool force);

/* For the handlers (dispatch.c, ops_lease.c). */
typedef enum op_result (*op_handler) (struct berthd *d, struct client *cl,
                                      struct proto_request *req,
                                      struct op_reply *out);
/* The reply is msg (stolen); OP_ANSWERED. */
enum op_result op_json (struct op_reply *out, json_t *msg);
/* The reply is an error of code; OP_ANSWERED. */
enum op_result op_error (struct op_reply *out, json_t *id, const char *code,
                         const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
enum op_result op_verror (struct op_reply *out, json_t *id, const char *code,
                          const char *fmt, va_list ap);
/* Whether the request must wait for the job's end, which is being asked. */
bool op_needs_end (struct berthd *d);

#define OP_HANDLER(name) \
    enum op_result handle_##name (struct berthd *d, struct client *cl, \
                                  struct proto_request *req, \
                                  struct op_reply *out)
OP_HANDLER (acquire);
OP_HANDLER (release);
OP_HANDLER (reclaim);
OP_HANDLER (placed);

#endif
