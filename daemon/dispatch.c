/* SPDX-License-Identifier: MIT */
/* One request line -> its handler, through a static table of ops. The small
 * ops live here; acquire and release with the leases (leases.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "berthd.h"

static void handle_hello (struct conn *c, struct proto_request *req)
{
    int v = req->hello.version;
    if (v != 0 && v != PROTO_VERSION) {
        conn_send_error (c, req->id, PROTO_ERR_UNSUPPORTED_VERSION,
                         "protocol version %d is not supported; this server "
                         "speaks %d", v, PROTO_VERSION);
        return;
    }
    conn_send (c, proto_hello_reply (req->id, PROTO_VERSION));
}

static void handle_render (struct conn *c, struct proto_request *req)
{
    struct berthd *d = c->d;
    struct proto_render *r = &req->render;
    berth_error_t err;
    struct launch out;
    struct launch_request lr = {
        .argv = r->argv, .ntasks = r->ntasks,
        .cpus_per_task = r->cpus_per_task, .placement = &r->placement,
        .has_memory_cap = r->memory_cap >= 0, .memory_cap = r->memory_cap,
    };
    if (placement_validate (&r->placement, &err) < 0
        || launch_fit (&lr, &d->capacity, &err) < 0
        || render_launch (&d->machine->par, d->alloc->nnodes, &d->caps, &lr,
                          &out, &err) < 0) {
        conn_send_error (c, req->id, PROTO_ERR_INVALID_REQUEST, "render: %s",
                         err.text);
        return;
    }
    conn_send (c, proto_render_reply (req->id, &out));
    launch_free (&out);
}

static void handle_resources (struct conn *c, struct proto_request *req)
{
    struct berthd *d = c->d;
    json_t *body;
    if (req->resources.lease) {
        struct lease *ls = lease_lookup (d, req->resources.lease);
        if (!ls) {
            conn_send_error (c, req->id, PROTO_ERR_NOT_FOUND, "no lease '%s' "
                             "(released leases are gone)",
                             req->resources.lease);
            return;
        }
        body = resources_lease (d, ls);
    }
    else
        body = resources_allocation (d);
    if (!body) {
        conn_send_error (c, req->id, PROTO_ERR_INTERNAL, "out of memory");
        return;
    }
    conn_send (c, proto_ok_reply (req->id, body));
    json_decref (body);
}

static void handle_status (struct conn *c, struct proto_request *req)
{
    struct berthd *d = c->d;
    if (req->status.time_left && conn_await_end (c))
        return;
    /* whoever sees the state sees a log up to date with it */
    events_flush (d->events);
    bool all = !req->status.queue_only;
    json_t *msg = proto_status_reply (req->id, all ? status_allocation (d)
                                                   : NULL,
                                      all ? status_leases (d) : NULL, status_queue (d));
    if (!msg || json_object_set_new (msg, "daemon", status_daemon (d)) < 0) {
        json_decref (msg);
        conn_send_error (c, req->id, PROTO_ERR_INTERNAL, "out of memory "
                         "building the status");
        return;
    }
    conn_send (c, msg);
}

static void handle_watch (struct conn *c, struct proto_request *req)
{
    int fd;
    off_t off;
    size_t len;
    conn_send (c, proto_ok_reply (req->id, NULL));
    if (req->watch.history
        && (events_history (c->d->events, &fd, &off, &len) < 0
            || (len > 0 && conn_send_file (c, fd, off, len) < 0)))
        log_msg (LOG_WARNING, "could not replay the events log to a watcher");
    if (!c->watching)
        c->d->nwatchers++;
    c->watching = true;
}

static void drain_timeout_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct berthd *d = arg;
    log_msg (LOG_WARNING, "drain timeout (%.0f s): ending the %zu leases "
             "still held", d->cfg.drain_timeout, idmap_count (d->leases));
    lease_end_all (d, "forced");
    berthd_check_drained (d);
}

void dispatch_shutdown (struct berthd *d, bool force)
{
    if (!d->draining) {
        d->draining = true;
        log_msg (LOG_NOTICE, "%s: %zu leases held, %d requests waiting",
                 force ? "shutting down now" : "draining",
                 idmap_count (d->leases), d->npending);
        notify_stopping (d->notify);
        queue_refuse_all (d, PROTO_ERR_SHUTTING_DOWN, "berthd is shutting "
                          "down; no new leases");
        server_resume_awaiting (d);   /* a drain waits for no query */
        if (d->cfg.drain_timeout >= 0) {
            d->drain_timer = evtimer_new (d->base, drain_timeout_cb, d);
            struct timeval tv = seconds_tv (d->cfg.drain_timeout);
            if (d->drain_timer)
                evtimer_add (d->drain_timer, &tv);
        }
    }
    if (force)
        lease_end_all (d, "forced");
    berthd_check_drained (d);
}

static void handle_shutdown (struct conn *c, struct proto_request *req)
{
    conn_send (c, proto_ok_reply (req->id, NULL));
    dispatch_shutdown (c->d, req->shutdown.mode == PROTO_SHUTDOWN_FORCE);
}

typedef void (*handler_fn) (struct conn *c, struct proto_request *req);

/* One handler per op, built from the protocol's list of ops (codec.h
 * PROTO_OPS): an op without its handle_<name> fails to build. */
static const handler_fn handlers[PROTO_NOPS] = {
#define HANDLER(e, name) [PROTO_##e] = handle_##name,
    PROTO_OPS (HANDLER)
#undef HANDLER
};

void dispatch_line (struct conn *c, const char *line, size_t len)
{
    struct proto_request req;
    berth_error_t err;
    if (proto_decode_request (line, len, &req, &err) < 0) {
        conn_send (c, proto_error_reply (req.id, &err));
        proto_request_free (&req);
        return;
    }
    if ((int) req.op < 0 || req.op >= PROTO_NOPS || !handlers[req.op])
        conn_send_error (c, req.id, PROTO_ERR_INVALID_REQUEST, "op %s is not "
                         "served by this berthd", proto_op_name (req.op));
    else
        handlers[req.op] (c, &req);
    proto_request_free (&req);
}
