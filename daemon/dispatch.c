/* SPDX-License-Identifier: MIT */
/* One request line -> its handler, through a static table of ops, and the
 * handler's reply back to the connection layer. The small ops live here;
 * the lease ops in ops_lease.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "berthd.h"
#include "status.h"
#include "leases.h"
#include "ops.h"
#include "pidstart.h"
#include "queue.h"

static OP_HANDLER (hello)
{
    int v = req->hello.version;
    if (v != 0 && v != PROTO_VERSION) {
        return op_error (out, req->id, PROTO_ERR_UNSUPPORTED_VERSION,
                         "protocol version %d is not supported; this server "
                         "speaks %d", v, PROTO_VERSION);
    }
    /* once asked, pipelining holds for the connection's life */
    cl->pipelined |= req->hello.pipeline;
    return op_json (out, proto_hello_reply (req->id, PROTO_VERSION,
                                            cl->pipelined
                                            ? d->cfg.max_leases_per_conn : 0));
}

static OP_HANDLER (render)
{
    (void) cl;
    struct proto_render *r = &req->render;
    berth_error_t err;
    struct launch launch;
    struct launch_request lr = {
        .argv = r->argv, .ntasks = r->ntasks,
        .cpus_per_task = r->cpus_per_task, .placement = &r->placement,
        .has_memory_cap = r->memory_cap >= 0, .memory_cap = r->memory_cap,
    };
    if (placement_validate (&r->placement, &err) < 0
        || launch_fit (&lr, &d->capacity, &err) < 0
        || render_launch (&d->machine->par, d->alloc->nnodes, &d->caps, &lr,
                          &launch, &err) < 0) {
        return op_error (out, req->id, PROTO_ERR_INVALID_REQUEST,
                         "render: %s", err.text);
    }
    op_json (out, proto_render_reply (req->id, &launch));
    launch_free (&launch);
    return OP_ANSWERED;
}

static OP_HANDLER (resources)
{
    (void) cl;
    json_t *body;
    if (req->resources.lease) {
        struct lease *ls = lease_book_lookup (d->book, req->resources.lease);
        if (!ls) {
            return op_error (out, req->id, PROTO_ERR_NOT_FOUND, "no lease "
                             "'%s' (released leases are gone)",
                             req->resources.lease);
        }
        body = resources_lease (d, ls);
    }
    else
        body = resources_allocation (d);
    if (!body)
        return op_error (out, req->id, PROTO_ERR_INTERNAL, "out of memory");
    op_json (out, proto_ok_reply (req->id, body));
    json_decref (body);
    return OP_ANSWERED;
}

static OP_HANDLER (status)
{
    (void) cl;
    if (req->status.time_left && op_needs_end (d))
        return OP_AGAIN;
    /* whoever sees the state sees a log up to date with it */
    events_flush (d->events);
    int k = req->status.brief;
    if (req->status.pid || k) {   /* small: built each time, never kept */
        json_t *msg = k ? proto_status_reply (req->id,
                                              status_allocation_brief (d, k),
                                              status_leases_oldest (d, k),
                                              status_queue_head (d, k))
                        : proto_status_reply (req->id, NULL, NULL,
                                              status_queue_of_pid (
                                                  d, req->status.pid));
        if (!msg || json_object_set_new (msg, "daemon", status_daemon (d)) < 0
            || (k && (json_object_set_new (msg, "failed",
                                           status_failed (d)) < 0
                      || json_object_set_new (msg, "brief",
                                              json_integer (k)) < 0))) {
            json_decref (msg);
            return op_error (out, req->id, PROTO_ERR_INTERNAL, "out of memory "
                             "building the status");
        }
        op_json (out, msg);
        return OP_ANSWERED;
    }
    bool all = !req->status.queue_only;
    struct status_memo *memo = &d->status_memo[all ? 0 : 1];
    struct status_key key;
    double now = now_mono ();
    status_key_of (d, &key);
    if ((out->line = status_memo_reply (memo, &key, req->id, now, &out->len,
                                        &out->tail)))
        return OP_ANSWERED;
    /* built with a null id, so that a large one can be kept for the next */
    json_t *msg = proto_status_reply (NULL, all ? status_allocation (d) : NULL,
                                      all ? status_leases (d) : NULL,
                                      status_queue (d));
    if (!msg || json_object_set_new (msg, "daemon", status_daemon (d)) < 0
        || (all && json_object_set_new (msg, "failed", status_failed (d)) < 0)) {
        json_decref (msg);
        return op_error (out, req->id, PROTO_ERR_INTERNAL, "out of memory "
                         "building the status");
    }
    char *line = proto_line (msg);
    size_t len = line ? strlen (line) : 0;
    json_decref (msg);
    if (line) {
        status_memo_keep (memo, &key, line, len, now, now_mono ());
        /* a kept one is given by reference at once; another spliced */
        if (!(out->line = status_memo_reply (memo, &key, req->id, now,
                                             &out->len, &out->tail)))
            out->line = status_reply_with_id (line, len, req->id, &out->len);
    }
    free (line);
    if (!out->line)
        return op_error (out, req->id, PROTO_ERR_INTERNAL, "out of memory "
                         "writing the status");
    return OP_ANSWERED;
}

/* The connection layer subscribes the connection (and queues the history
 * after this reply). */
static OP_HANDLER (watch)
{
    (void) d;
    (void) cl;
    out->watch = req->watch.history ? OP_WATCH_HISTORY : OP_WATCH;
    return op_json (out, proto_ok_reply (req->id, NULL));
}

static OP_HANDLER (shutdown)
{
    (void) cl;
    op_json (out, proto_ok_reply (req->id, NULL));
    ops_shutdown (d, req->shutdown.mode == PROTO_SHUTDOWN_FORCE);
    return OP_ANSWERED;
}

/* One handler per op, built from the protocol's list of ops (codec.h
 * PROTO_OPS): an op without its handle_<name> fails to build. */
static const op_handler handlers[PROTO_NOPS] = {
#define HANDLER(e, name) [PROTO_##e] = handle_##name,
    PROTO_OPS (HANDLER)
#undef HANDLER
};

enum op_result ops_serve (struct berthd *d, struct client *cl,
                          const char *line, size_t len, struct op_reply *out)
{
    struct proto_request req;
    berth_error_t err;
    enum op_result r;
    *out = (struct op_reply) { 0 };
    if (proto_decode_request (line, len, &req, &err) < 0)
        r = op_json (out, proto_error_reply (req.id, &err));
    else if ((int) req.op < 0 || req.op >= PROTO_NOPS || !handlers[req.op])
        r = op_error (out, req.id, PROTO_ERR_INVALID_REQUEST, "op %s is not "
                      "served by this berthd", proto_op_name (req.op));
    else if (cl->reserve && (req.op == PROTO_ACQUIRE || req.op == PROTO_WATCH)) {
        /* a reserve connection is for the release that frees what the full
         * house waits for: one that would hold or wait is turned away */
        r = op_error (out, req.id, PROTO_ERR_BUSY, "berthd has %d connections "
                      "open, its limit (--max-connections %d); this one is "
                      "kept for release and status: %s waits until some have "
                      "closed", d->connections - 1, d->cfg.max_connections,
                      proto_op_name (req.op));
        out->close = true;
    }
    else {
        if (req.op != PROTO_STATUS)
            d->changes++;
        cl->line = line;
        cl->line_len = len;
        r = handlers[req.op] (d, cl, &req, out);
        cl->line = NULL;
        cl->line_len = 0;
    }
    proto_request_free (&req);
    return r;
}

enum op_result op_json (struct op_reply *out, json_t *msg)
{
    out->line = msg ? proto_line (msg) : NULL;
    out->len = out->line ? strlen (out->line) : 0;
    json_decref (msg);
    return OP_ANSWERED;       /* no line: the connection layer closes it */
}

enum op_result op_verror (struct op_reply *out, json_t *id, const char *code,
                          const char *fmt, va_list ap)
{
    berth_error_t e;
    verrprintf_code (&e, code, fmt, ap);
    return op_json (out, proto_error_reply (id, &e));
}

enum op_result op_error (struct op_reply *out, json_t *id, const char *code,
                         const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    op_verror (out, id, code, fmt, ap);
    va_end (ap);
    return OP_ANSWERED;
}

uint64_t client_start (struct client *cl)
{
    if (!cl->start_read && cl->pid > 0 && pidstart_read (cl->pid, &cl->start) < 0)
        cl->start = 0;
    cl->start_read = true;
    return cl->start;
}

bool op_needs_end (struct berthd *d)
{
    return !d->draining && !jobend_ready (d->jobend);
}

void client_unwait (struct client *cl, struct waiter *w)
{
    if (w->cprev)
        w->cprev->cnext = w->cnext;
    else
        cl->waiters = w->cnext;
    if (w->cnext)
        w->cnext->cprev = w->cprev;
    w->cprev = w->cnext = NULL;
    cl->nwaiting--;
}

void ops_client_gone (struct berthd *d, struct client *cl)
{
    while (cl->waiters) {
        struct waiter *w = cl->waiters;
        client_unwait (cl, w);
        queue_cancel (d->queue, w);
        queue_free_waiter (d->queue, w);
    }
    leases_client_gone (d, cl);
}
