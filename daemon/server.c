/* SPDX-License-Identifier: MIT */
/* The socket side of berthd: the listening socket (bound here, or passed by
 * systemd), connections checked with SO_PEERCRED, newline framing with the
 * line limit, and replies. A connection is served one request at a time, in
 * order (PROTOCOL.md): while an acquire waits, later lines stay in the input
 * buffer, which is read only while it holds less than one line (INPUT_MAX):
 * a client that pipelines too much stops being read, and nothing it sends
 * can make berthd buffer more. The socket is read here, not by the
 * bufferevent (which only writes): the bufferevent's reads ask the kernel
 * how much is waiting first (FIONREAD), one more system call per request.
 * Replies
 * are bounded the same way: a client that does not read them stops being
 * served once CONN_OUTPUT_PAUSE bytes wait for it, and is closed if it reads
 * none of them for --output-stall. A client that shuts down its sending side
 * (a half-close) is still answered; its connection ends when it holds, waits
 * for and watches nothing, or when the client is gone altogether. */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <systemd/sd-daemon.h>

#include "berthd.h"
#include "ops.h"
#include "server.h"
#include "shared_text.h"
#include "sockdir.h"

/* Input held at most: one line past the limit, enough to tell a line that
 * is too long. */
#define INPUT_MAX ((size_t) PROTO_MAX_LINE + 1)
/* Asked of the socket per read: a few pipelined requests at once. */
#define READ_CHUNK ((size_t) 16384)

/* A connection's life, in order; it only moves forward, and any state may
 * end in CONN_DEAD. */
enum conn_state {
    CONN_OPEN,                    /* requests read and served */
    CONN_CLOSING,                 /* read no more; linger once written */
    CONN_LINGERING,               /* written and shut for writing: discard
                                     input until the peer closes */
    CONN_DEAD,                    /* to be freed from the deferred event */
};

/* One client connection. */
struct conn {
    struct client cl;             /* first: the ops' view, and the answer
                                     callback's argument */
    struct server *s;
    struct bufferevent *bev;      /* its replies (and the socket) */
    struct evbuffer *in;          /* request bytes read, not yet served */
    struct event *read_ev;        /* the socket readable: read here, not
                                     through the bufferevent */
    enum conn_state state;        /* where it is on its way to being freed */
    bool eof;                     /* the client sends no more (half-closed);
                                     stays set while it closes, for hup_cb and
                                     s->nhalfclosed */
    bool answer_due;              /* its request waits in the queue: later
                                     lines stay unread until it is answered */
    bool awaits_end;              /* its request needs the job's end, being
                                     asked: it stays unread until then and is
                                     served again */
    bool paused;                  /* unread output over CONN_OUTPUT_PAUSE:
                                     its requests wait unread (in any state) */
    bool processing;              /* conn_process is reading its lines (a
                                     guard against re-entry, not a state) */
    bool watching;                /* subscribed to events */
    struct event *stall_ev;       /* closes it if it stays paused */
    size_t stall_mark;            /* unsent bytes when last checked */
    size_t history_left;          /* bytes of the events log queued for it
                                     (on disk, not in memory) */
    struct evbuffer_cb_entry *drained;   /* counts history_left down, and
                                            s->pending */
    size_t counted;               /* its output in memory, as s->pending has
                                     it (0 once it is dead) */
    double behind_since;          /* monotonic: since when its client has
                                     read none of its output (it had some) */
    struct event *deferred;
    struct conn *prev, *next;
    struct conn *wprev, *wnext;   /* among the watchers */
};

struct server {
    struct berthd *d;             /* the ops' argument; its cfg */
    struct event_base *base;
    struct evconnlistener *listener;
    bool own_socket;              /* we bound it: remove it on exit */
    size_t pending;               /* unread output in memory, all of them */
    size_t pending_peak;          /* since memory was last given back */
    bool trim_due;                /* a malloc_trim is scheduled */
    double accept_failure_said;   /* monotonic: when accept's failure was
                                     last logged (0: never) */
    unsigned long long accept_failures;   /* since then */
    struct conn *conns;           /* every open connection */
    struct conn *watchers;        /* those watching: an event is sent to
                                     them without walking the others */
    int nconns, nwatchers;
    int nhalfclosed;              /* connections whose client has shut down
                                     its sending side */
    struct event *hup_ev;         /* checks those once a second */
    uint64_t next_conn;
    unsigned long reads;          /* reads from clients so far */
};

/* States only move forward (see enum conn_state): a request to close a
 * connection that already lingers or is dead leaves it so. */
static void conn_advance (struct conn *c, enum conn_state s)
{
    if (c->state < s)
        c->state = s;
}

static void conn_drop_holdings (struct conn *c)
{
    if (c->cl.waiters || lease_book_held (c->s->d->book, &c->cl))
        ops_client_gone (c->s->d, &c->cl);
    c->answer_due = false;
}

static void maybe_trim (struct server *s);

static void conn_free (struct conn *c)
{
    struct server *s = c->s;
    conn_drop_holdings (c);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    s->d->connections = s->nconns;
    if (c->watching) {
        if (c->wprev)
            c->wprev->wnext = c->wnext;
        else
            s->watchers = c->wnext;
        if (c->wnext)
            c->wnext->wprev = c->wprev;
        s->nwatchers--;
    }
    if (c->eof)
        s->nhalfclosed--;
    if (c->stall_ev)
        event_free (c->stall_ev);
    if (c->drained)
        evbuffer_remove_cb_entry (bufferevent_get_output (c->bev), c->drained);
    s->pending -= c->counted;
    maybe_trim (s);
    event_free (c->deferred);
    /* before the bufferevent closes the socket it watches */
    event_free (c->read_ev);
    evbuffer_free (c->in);
    bufferevent_free (c->bev);
    free (c);
}

static void conn_kill (struct conn *c)
{
    c->state = CONN_DEAD;
    event_del (c->read_ev);
    bufferevent_disable (c->bev, EV_WRITE);
    /* its unsent output will never be sent: its memory goes now, not when
     * the connection is freed later in the loop (the total bound counts a
     * dead connection's output as gone) */
    struct evbuffer *out = bufferevent_get_output (c->bev);
    evbuffer_unfreeze (out, 1);   /* the bufferevent holds its draining end */
    evbuffer_drain (out, evbuffer_get_length (out));
    evbuffer_freeze (out, 1);
    event_active (c->deferred, 0, 0);
}

/* Watch the socket for requests while they may be read: not once the
 * client has stopped sending or is being closed, not while its replies
 * back up (paused), not while a full line waits. Added and removed only
 * when that changes: each is an epoll_ctl. (A lingering connection is
 * watched by conn_linger.) */
static void conn_update_reading (struct conn *c)
{
    if (c->state == CONN_LINGERING)
        return;
    bool want = c->state == CONN_OPEN && !c->eof && !c->paused
                && evbuffer_get_length (c->in) < INPUT_MAX;
    if (want == (event_pending (c->read_ev, EV_READ, NULL) != 0))
        return;
    if (!want)
        event_del (c->read_ev);
    else if (event_add (c->read_ev, NULL) < 0) {
        log_msg (LOG_ERR, "cannot watch connection %llu for requests; "
                 "closing it", (unsigned long long) c->cl.serial);
        conn_kill (c);
    }
}

static void conn_resume (struct conn *c)
{
    /* conn_process goes on by itself when it is the one answering */
    if (c->state != CONN_DEAD && !c->processing)
        event_active (c->deferred, 0, 0);
}

#define LINGER_SECONDS 2

/* All is written: say end-of-file, then discard what the peer still sends
 * until it closes (or briefly). Closing a socket with unread input makes the
 * kernel answer with a reset, which can destroy the last reply before the
 * peer has read it. */
static void conn_linger (struct conn *c)
{
    struct timeval tv = { LINGER_SECONDS, 0 };
    conn_drop_holdings (c);
    conn_advance (c, CONN_LINGERING);
    if (shutdown (bufferevent_getfd (c->bev), SHUT_WR) < 0) {
        conn_kill (c);
        return;
    }
    evbuffer_drain (c->in, evbuffer_get_length (c->in));
    /* the timeout restarts with each read (a persistent event) */
    if (event_add (c->read_ev, &tv) < 0)
        conn_kill (c);
}

/* Write the replies now, while the client waits for them, instead of on
 * the next turn of the loop. Everything a reply speaks of is journaled
 * before it is queued, so it may leave at once. The bufferevent writes only
 * what the socket would not take here: its write event is enabled for that
 * alone, since watching for writability after every reply cost two
 * epoll_ctl calls and a wake-up per request. */
static void conn_write_now (struct conn *c)
{
    struct evbuffer *out = bufferevent_get_output (c->bev);
    evutil_socket_t fd = bufferevent_getfd (c->bev);
    if (c->state >= CONN_LINGERING || fd < 0 || evbuffer_get_length (out) == 0)
        return;
    /* the bufferevent holds the draining end; take it for this write */
    evbuffer_unfreeze (out, 1);
    while (evbuffer_get_length (out) > 0 && evbuffer_write (out, fd) > 0)
        ;
    evbuffer_freeze (out, 1);
    if (evbuffer_get_length (out) > 0) {
        /* the rest when the client reads (write_cb) */
        bufferevent_enable (c->bev, EV_WRITE);
        return;
    }
    if (bufferevent_get_enabled (c->bev) & EV_WRITE)
        bufferevent_disable (c->bev, EV_WRITE);
    /* drained here, the bufferevent will not call write_cb for it */
    if (c->state == CONN_CLOSING)
        conn_linger (c);
}

/* Output was queued: conn_process writes it at its end; outside of it
 * (a grant to a connection that waited, an event to a watcher, a refusal
 * at accept) the connection's deferred event does, in this turn of the
 * loop, without a system call to arrange it. */
static void conn_wants_write (struct conn *c)
{
    if (c->state != CONN_DEAD && !c->processing)
        event_active (c->deferred, 0, 0);
}

/* Read nothing more; close once what is queued has been written. */
static void conn_close_after_write (struct conn *c)
{
    conn_advance (c, CONN_CLOSING);
    if (evbuffer_get_length (bufferevent_get_output (c->bev)) == 0)
        conn_linger (c);
    else {
        conn_update_reading (c);
        conn_wants_write (c);
    }
}

/* Unsent output held in memory: all of it but the part of the events log
 * still queued from its file. */
static size_t output_in_memory (struct conn *c)
{
    size_t all = evbuffer_get_length (bufferevent_get_output (c->bev));
    return all > c->history_left ? all - c->history_left : 0;
}

static void trim_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct server *s = arg;
    s->trim_due = false;
    if (s->pending < SERVER_TRIM_AFTER / 8)
        malloc_trim (0);
}

/* After a burst of output that is gone, the memory it took goes back to the
 * system (a second later, once). */
static void maybe_trim (struct server *s)
{
    if (s->pending > s->pending_peak)
        s->pending_peak = s->pending;
    if (s->pending_peak >= SERVER_TRIM_AFTER && s->pending < SERVER_TRIM_AFTER / 8
        && !s->trim_due) {
        struct timeval tv = { 1, 0 };
        if (event_base_once (s->base, -1, EV_TIMEOUT, trim_cb, s, &tv) == 0) {
            s->trim_due = true;
            s->pending_peak = s->pending;
        }
    }
}

/* c's output in memory into s->pending. */
static void recount (struct conn *c)
{
    struct server *s = c->s;
    size_t now = c->state == CONN_DEAD ? 0 : output_in_memory (c);
    if (!c->counted && now)
        c->behind_since = now_mono ();
    s->pending = s->pending - c->counted + now;
    c->counted = now;
    maybe_trim (s);
}

/* Bytes leave the output in order; count those of the events log off first
 * (what was queued ahead of it is small: the watch reply). */
static void output_drained (struct evbuffer *buf,
                            const struct evbuffer_cb_info *info, void *arg)
{
    (void) buf;
    struct conn *c = arg;
    size_t n = info->n_deleted;
    c->history_left -= n < c->history_left ? n : c->history_left;
    if (n)                    /* its client reads */
        c->behind_since = now_mono ();
    recount (c);
}

/* Over --output-max in all: close the connection furthest behind, the
 * one whose client has read nothing for longest (most unread output among
 * equals): not a client that reads a large reply as it comes. */
static void bound_total (struct server *s)
{
    while (s->pending > s->d->cfg.output_max) {
        struct conn *worst = NULL;
        for (struct conn *c = s->conns; c; c = c->next)
            if (c->state != CONN_DEAD && c->counted
                && (!worst || c->behind_since < worst->behind_since
                    || (c->behind_since == worst->behind_since
                        && c->counted > worst->counted)))
                worst = c;
        if (!worst || !worst->counted)
            return;
        log_msg (LOG_WARNING, "berthd holds %zu MiB of unread output for %d "
                 "connections, over its bound of %zu MiB: closing connection "
                 "%llu (pid %d%s), the furthest behind with %zu MiB unread "
                 "(none read for %.1f s)",
                 s->pending >> 20, s->nconns, s->d->cfg.output_max >> 20,
                 (unsigned long long) worst->cl.serial, (int) worst->cl.pid,
                 worst->watching ? ", a watcher" : "", worst->counted >> 20,
                 now_mono () - worst->behind_since);
        conn_kill (worst);
        recount (worst);
    }
}

#define LINE_BY_REFERENCE (64u << 10)

static void free_line (const void *data, size_t len, void *arg)
{
    (void) len;
    (void) arg;
    free ((void *) data);
}

static void unref_text (const void *data, size_t len, void *arg)
{
    (void) data;
    (void) len;
    shared_text_unref (arg);
}

/* A reply already encoded: line (ending with a newline, or followed by
 * tail, which does), both stolen, freed here. NULL line: a reply could not
 * be encoded, and the connection is closed. */
static void conn_send_reply (struct conn *c, char *line, size_t len,
                             struct shared_text *tail)
{
    /* a lingering connection is shut for writing: nothing more can reach
     * its client */
    if (c->state >= CONN_LINGERING) {
        free (line);
        shared_text_unref (tail);
        return;
    }
    struct evbuffer *out = bufferevent_get_output (c->bev);
    if (!line) {
        log_msg (LOG_ERR, "could not encode a reply for connection %llu; "
                 "closing it", (unsigned long long) c->cl.serial);
        shared_text_unref (tail);
        conn_kill (c);
        return;
    }
    /* a shared tail counts in full: the bound is on what each client
     * leaves unread, whoever else holds the same text */
    size_t all = len + (tail ? tail->len : 0);
    if (output_in_memory (c) + all > CONN_OUTPUT_MAX) {
        log_msg (LOG_WARNING, "connection %llu (pid %d) reads too slowly: "
                 "%zu bytes unsent; closing it", (unsigned long long) c->cl.serial,
                 (int) c->cl.pid, evbuffer_get_length (out));
        free (line);
        shared_text_unref (tail);
        conn_kill (c);
        return;
    }
    /* a large line is queued as it is, not copied: a status of a big job
     * is megabytes, and a copy per connection is what fills memory */
    int rc = len >= LINE_BY_REFERENCE
             ? evbuffer_add_reference (out, line, len, free_line, NULL)
             : bufferevent_write (c->bev, line, len);
    if (len < LINE_BY_REFERENCE || rc < 0)
        free (line);
    if (tail) {
        /* the buffer takes the reference, and drops it once it is sent */
        if (rc == 0 && evbuffer_add_reference (out, tail->data, tail->len,
                                               unref_text, tail) == 0)
            tail = NULL;
        else
            rc = -1;
        shared_text_unref (tail);
    }
    if (rc < 0) {
        log_msg (LOG_ERR, "out of memory queueing a reply; closing "
                 "connection %llu", (unsigned long long) c->cl.serial);
        conn_kill (c);
    }
    else
        conn_wants_write (c);
    bound_total (c->s);
}

static void conn_send_line (struct conn *c, char *line, size_t len)
{
    conn_send_reply (c, line, len, NULL);
}

static void conn_send_error (struct conn *c, const char *code,
                             const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* An error with no request id: the connection's, not a request's. */
static void conn_send_error (struct conn *c, const char *code,
                             const char *fmt, ...)
{
    struct op_reply r = { 0 };
    va_list ap;
    va_start (ap, fmt);
    op_verror (&r, NULL, code, fmt, ap);
    va_end (ap);
    conn_send_line (c, r.line, r.len);
}

static void too_large (struct conn *c, size_t have)
{
    conn_send_error (c, PROTO_ERR_TOO_LARGE, "request line is over the "
                     "limit of %d bytes per line (%zu bytes read without a "
                     "newline); closing the connection", PROTO_MAX_LINE, have);
    conn_close_after_write (c);
}

static void conn_unpause (struct conn *c);

static void stall_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct conn *c = arg;
    if (c->state == CONN_DEAD || !c->paused)
        return;
    size_t left = evbuffer_get_length (bufferevent_get_output (c->bev));
    if (left <= CONN_OUTPUT_PAUSE / 2) {    /* drained meanwhile */
        conn_unpause (c);
        return;
    }
    if (left < c->stall_mark) {
        /* it reads, slowly: give it another while */
        struct timeval tv = seconds_tv (c->s->d->cfg.output_stall);
        c->stall_mark = left;
        evtimer_add (c->stall_ev, &tv);
        return;
    }
    log_msg (LOG_WARNING, "connection %llu (pid %d) has read none of its "
             "%zu bytes of unsent replies for %.0f s; closing it",
             (unsigned long long) c->cl.serial, (int) c->cl.pid,
             evbuffer_get_length (bufferevent_get_output (c->bev)),
             c->s->d->cfg.output_stall);
    conn_kill (c);
}

/* Too much unread output: read no more requests until the client catches
 * up (write_cb), and close it if it does not within --output-stall. */
static void conn_pause (struct conn *c)
{
    struct timeval tv = seconds_tv (c->s->d->cfg.output_stall);
    c->paused = true;
    c->stall_mark = evbuffer_get_length (bufferevent_get_output (c->bev));
    conn_update_reading (c);
    if ((!c->stall_ev && !(c->stall_ev = evtimer_new (c->s->base, stall_cb,
                                                       c)))
        || evtimer_add (c->stall_ev, &tv) < 0) {
        log_msg (LOG_ERR, "out of memory watching connection %llu; closing "
                 "it", (unsigned long long) c->cl.serial);
        conn_kill (c);
    }
}

static void conn_unpause (struct conn *c)
{
    c->paused = false;
    evtimer_del (c->stall_ev);
    conn_update_reading (c);
    conn_resume (c);
}

/* A half-closed connection that holds, waits for and watches nothing has
 * had all it will get: close it once its replies are written. */
static void conn_finish_if_idle (struct conn *c)
{
    if (c->eof && c->state == CONN_OPEN && !c->paused && !c->answer_due
        && !c->cl.nwaiting && !lease_book_held (c->s->d->book, &c->cl) && !c->watching)
        conn_close_after_write (c);
}

static void conn_process_lines (struct conn *c);

/* A pipelining connection at its bound of waiting acquires reads no more
 * until one is answered. */
static bool conn_at_bound (const struct conn *c)
{
    return c->cl.pipelined
           && c->cl.nwaiting >= c->s->d->cfg.max_leases_per_conn;
}

/* The late answer to a request that waited (struct client's callback). */
static void conn_answer (struct client *cl, char *line, size_t len)
{
    struct conn *c = (struct conn *) cl;
    c->answer_due = false;
    conn_send_line (c, line, len);
    conn_resume (c);
}

/* The connection hears every event from now on; with history, this run's
 * events log is queued first, straight from its file. */
static void conn_watch (struct conn *c, bool history)
{
    struct server *s = c->s;
    if (history) {
        int fd = -1;
        off_t off = 0;
        size_t len = 0;
        /* evbuffer_add_file takes the descriptor over; what it queues is
         * read from the file as it is sent, so it is not held against the
         * connection's output limit */
        if (events_history (s->d->events, &fd, &off, &len) < 0
            || (fd >= 0 && evbuffer_add_file (bufferevent_get_output (c->bev),
                                              fd, off, (ev_off_t) len) < 0))
            log_msg (LOG_WARNING, "could not replay the events log to a "
                     "watcher");
        else if (fd >= 0)
            c->history_left += len;
        recount (c);
    }
    if (!c->watching) {
        c->wnext = s->watchers;
        if (s->watchers)
            s->watchers->wprev = c;
        s->watchers = c;
        s->nwatchers++;
    }
    c->watching = true;
}

/* Serve the complete lines in the input buffer, in order, until one has to
 * wait; then send what they were answered. */
static void conn_process (struct conn *c)
{
    c->processing = true;
    conn_process_lines (c);
    c->processing = false;
    conn_write_now (c);
    /* written here, the bufferevent will not call write_cb for it */
    if (c->paused && c->state != CONN_DEAD
        && evbuffer_get_length (bufferevent_get_output (c->bev))
           <= CONN_OUTPUT_PAUSE / 2)
        conn_unpause (c);
    /* lines served make room to read more; a full line waiting, none */
    conn_update_reading (c);
}

static void conn_process_lines (struct conn *c)
{
    struct evbuffer *in = c->in;
    while (c->state == CONN_OPEN && !c->answer_due && !c->awaits_end
           && !c->s->d->stopping && !conn_at_bound (c)) {
        size_t eol_len = 0;
        if (output_in_memory (c) >= CONN_OUTPUT_PAUSE) {
            if (!c->paused)
                conn_pause (c);
            return;
        }
        struct evbuffer_ptr p = evbuffer_search_eol (in, NULL, &eol_len,
                                                     EVBUFFER_EOL_LF);
        size_t have = evbuffer_get_length (in);
        if (p.pos < 0) {
            if (have > PROTO_MAX_LINE)
                too_large (c, have);
            else
                conn_finish_if_idle (c);
            return;
        }
        if ((size_t) p.pos > PROTO_MAX_LINE) {
            too_large (c, (size_t) p.pos);
            return;
        }
        /* decoded where it lies: contiguous (a copy only when the line
         * spans the buffer's chunks), dropped once it has been served */
        size_t whole = (size_t) p.pos + eol_len;
        const char *line = (const char *) evbuffer_pullup (in, (ev_ssize_t) whole);
        if (!line) {
            log_msg (LOG_ERR, "out of memory reading a request; closing "
                     "connection %llu", (unsigned long long) c->cl.serial);
            conn_kill (c);
            return;
        }
        struct op_reply r;
        enum op_result res = ops_serve (c->s->d, &c->cl, line, (size_t) p.pos,
                                        &r);
        if (res == OP_AGAIN) {
            c->awaits_end = true;
            return;           /* kept: served again once the end is known */
        }
        evbuffer_drain (in, whole);
        if (res == OP_WAITS)
            c->answer_due = !c->cl.pipelined;
        else
            conn_send_reply (c, r.line, r.len, r.tail);
        if (r.close && c->state == CONN_OPEN) {
            conn_close_after_write (c);
            return;
        }
        if (r.watch != OP_WATCH_NONE)
            conn_watch (c, r.watch == OP_WATCH_HISTORY);
    }
}

/* Called whenever the unsent output drops to CONN_OUTPUT_PAUSE / 2 or
 * below (the write low-water mark). */
static void write_cb (struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    size_t left = evbuffer_get_length (bufferevent_get_output (bev));
    /* all written: stop watching for writability (conn_write_now) */
    if (left == 0)
        bufferevent_disable (bev, EV_WRITE);
    if (c->state == CONN_CLOSING && left == 0)
        conn_linger (c);
    else if (c->paused && c->state != CONN_DEAD
             && left <= CONN_OUTPUT_PAUSE / 2)
        conn_unpause (c);
}

/* After a read of end-of-file: has the client closed its socket (gone), or
 * only shut down its sending side (still reading)? A Unix socket whose
 * peer has closed reports a hang-up. */
static bool peer_gone (struct conn *c)
{
    struct pollfd p = { bufferevent_getfd (c->bev), POLLIN, 0 };
    if (p.fd < 0)
        return true;
    return poll (&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

static void hup_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct server *s = arg;
    for (struct conn *c = s->conns; c; c = c->next) {
        if (!c->eof || c->state >= CONN_LINGERING)
            continue;
        if (peer_gone (c)) {
            conn_drop_holdings (c);
            conn_kill (c);
        }
        else
            conn_finish_if_idle (c);
    }
    if (s->nhalfclosed == 0)
        evtimer_del (s->hup_ev);
}

/* The client will send nothing more. What it sent is still served, a last
 * line without its newline included, and the replies written; whether it
 * is gone altogether is checked once a second (hup_cb). */
static void conn_half_closed (struct conn *c)
{
    struct server *s = c->s;
    struct evbuffer *in = c->in;
    size_t have = evbuffer_get_length (in);
    if (!c->eof) {
        struct timeval tv = { 1, 0 };
        c->eof = true;
        if (s->nhalfclosed++ == 0
            && ((!s->hup_ev && !(s->hup_ev = event_new (s->base, -1, EV_PERSIST,
                                                         hup_cb, s)))
                || evtimer_add (s->hup_ev, &tv) < 0))
            log_msg (LOG_ERR, "out of memory watching half-closed "
                     "connections");
    }
    if (have > 0 && have <= PROTO_MAX_LINE) {
        struct evbuffer_ptr last;
        char ch = '\n';
        evbuffer_ptr_set (in, &last, have - 1, EVBUFFER_PTR_SET);
        evbuffer_copyout_from (in, &last, &ch, 1);
        if (ch != '\n' && evbuffer_add (in, "\n", 1) < 0) {
            log_msg (LOG_ERR, "out of memory reading a request; closing "
                     "connection %llu", (unsigned long long) c->cl.serial);
            conn_kill (c);
            return;
        }
    }
    conn_process (c);
}

/* The socket gave end-of-file (error: or failed). */
static void conn_input_ended (struct conn *c, bool error)
{
    /* (a dead connection reads nothing: its read event is deleted and its
     * bufferevent disabled) */
    if (!error && c->state == CONN_OPEN && !peer_gone (c)) {
        conn_half_closed (c);
        return;
    }
    /* The client is gone (or has stopped sending): what it held or waited
     * for ends now; what is still queued for it is written if it can be. */
    conn_drop_holdings (c);
    if (error || evbuffer_get_length (bufferevent_get_output (c->bev)) == 0)
        conn_free (c);
    else
        conn_close_after_write (c);
}

/* Discard what a lingering connection's peer still sends; close when it
 * closes, or has sent nothing for LINGER_SECONDS. */
static void linger_read (struct conn *c, evutil_socket_t fd, short what)
{
    static char sink[16384];
    if (!(what & EV_TIMEOUT)) {
        ssize_t n = read (fd, sink, sizeof (sink));
        if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK
                                || errno == EINTR)))
            return;
    }
    conn_free (c);
}

/* The socket is readable: one read into the input buffer, as much as the
 * socket holds up to READ_CHUNK and the room left below INPUT_MAX (a read
 * that fills what it asked for leaves the rest for the next turn), then
 * serve the complete lines. */
static void read_cb (evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    if (c->state == CONN_LINGERING) {
        linger_read (c, fd, what);
        return;
    }
    size_t have = evbuffer_get_length (c->in);
    if (have >= INPUT_MAX || c->state == CONN_DEAD) {
        conn_update_reading (c);
        return;
    }
    size_t want = INPUT_MAX - have < READ_CHUNK ? INPUT_MAX - have : READ_CHUNK;
    struct evbuffer_iovec v[2];
    int nv = evbuffer_reserve_space (c->in, (ev_ssize_t) want, v, 2);
    if (nv <= 0) {
        log_msg (LOG_ERR, "out of memory reading a request; closing "
                 "connection %llu", (unsigned long long) c->cl.serial);
        conn_kill (c);
        return;
    }
    /* no more than asked for: the space given may be larger */
    size_t left = want;
    for (int i = 0; i < nv; i++) {
        if (v[i].iov_len > left)
            v[i].iov_len = left;
        left -= v[i].iov_len;
    }
    if (nv == 2 && v[1].iov_len == 0)
        nv = 1;
    ssize_t n = nv == 1 ? read (fd, v[0].iov_base, v[0].iov_len)
                        : readv (fd, v, nv);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {             /* end of file, or the client is gone */
        conn_input_ended (c, n < 0);
        return;
    }
    c->s->reads++;
    size_t got = (size_t) n;
    int used = 0;
    for (; used < nv && got > 0; used++) {
        if (v[used].iov_len > got)
            v[used].iov_len = got;
        got -= v[used].iov_len;
    }
    if (evbuffer_commit_space (c->in, v, used) < 0) {
        log_msg (LOG_ERR, "could not keep a request read from connection "
                 "%llu; closing it", (unsigned long long) c->cl.serial);
        conn_kill (c);
        return;
    }
    conn_process (c);
}

/* The bufferevent only writes: what it reports is a failed write. */
static void event_cb (struct bufferevent *bev, short what, void *arg)
{
    (void) bev;
    struct conn *c = arg;
    if (c->state == CONN_LINGERING) {
        conn_free (c);
        return;
    }
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        conn_input_ended (c, (what & BEV_EVENT_ERROR) != 0);
}

static void deferred_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct conn *c = arg;
    if (c->state == CONN_DEAD)
        conn_free (c);
    else
        conn_process (c);
}

static void accept_cb (struct evconnlistener *l, evutil_socket_t fd,
                       struct sockaddr *sa, int salen, void *arg)
{
    (void) l;
    (void) sa;
    (void) salen;
    struct server *s = arg;
    struct berthd *d = s->d;
    struct ucred cred;
    socklen_t clen = sizeof (cred);
    if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
        log_msg (LOG_WARNING, "SO_PEERCRED failed on a new connection (%s); "
                 "closing it", strerror (errno));
        close (fd);
        return;
    }
    struct conn *c = calloc (1, sizeof (*c));
    if (c) {
        c->bev = bufferevent_socket_new (s->base, fd, BEV_OPT_CLOSE_ON_FREE);
        c->in = evbuffer_new ();
        c->read_ev = event_new (s->base, fd, EV_READ | EV_PERSIST, read_cb, c);
        c->deferred = event_new (s->base, -1, 0, deferred_cb, c);
    }
    if (!c || !c->bev || !c->in || !c->read_ev || !c->deferred) {
        log_msg (LOG_ERR, "out of memory accepting a connection");
        if (c) {
            if (c->deferred)
                event_free (c->deferred);
            if (c->read_ev)
                event_free (c->read_ev);
            if (c->in)
                evbuffer_free (c->in);
        }
        if (c && c->bev)
            bufferevent_free (c->bev);
        else
            close (fd);
        free (c);
        return;
    }
    c->s = s;
    c->cl.serial = ++s->next_conn;
    c->cl.pid = cred.pid;
    c->cl.uid = cred.uid;
    c->cl.answer = conn_answer;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    d->connections = s->nconns;
    bufferevent_setcb (c->bev, NULL, write_cb, event_cb, c);
    bufferevent_setwatermark (c->bev, EV_WRITE, CONN_OUTPUT_PAUSE / 2, 0);
    c->drained = evbuffer_add_cb (bufferevent_get_output (c->bev),
                                  output_drained, c);
    if (cred.uid != getuid ()) {
        log_msg (LOG_NOTICE, "refused a connection from uid %u (pid %d): "
                 "berthd serves only uid %u", (unsigned) cred.uid,
                 (int) cred.pid, (unsigned) getuid ());
        conn_send_error (c, PROTO_ERR_FORBIDDEN, "this berthd serves "
                         "uid %u only; your uid is %u (start your own berthd)",
                         (unsigned) getuid (), (unsigned) cred.uid);
        conn_close_after_write (c);
        return;
    }
    if (s->nconns > d->cfg.max_connections + BERTHD_RESERVE_CONNS) {
        conn_send_error (c, PROTO_ERR_BUSY, "berthd has %d connections "
                         "open, its limit (--max-connections %d, and %d kept "
                         "for release and status); try again when some have "
                         "closed", s->nconns - 1, d->cfg.max_connections,
                         BERTHD_RESERVE_CONNS);
        conn_close_after_write (c);
        return;
    }
    c->cl.reserve = s->nconns > d->cfg.max_connections;
    /* writing is enabled only while output waits (conn_write_now) */
    conn_update_reading (c);
}

static void accept_again (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    evconnlistener_enable (arg);
}

static void accept_error_cb (struct evconnlistener *l, void *arg)
{
    struct server *s = arg;
    int e = EVUTIL_SOCKET_ERROR ();
    /* said once a minute at most, with how often meanwhile: at 5 tries a
     * second the log would be nothing else */
    double now = now_mono ();
    s->accept_failures++;
    if (now - s->accept_failure_said >= 60 || s->accept_failure_said == 0) {
        log_msg (LOG_ERR, "accepting a connection failed: %s (%d connections "
                 "open; %llu failures since this was last said); accepting "
                 "pauses 0.2 s each time", evutil_socket_error_to_string (e),
                 s->nconns, s->accept_failures);
        s->accept_failure_said = now;
        s->accept_failures = 0;
    }
    if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
        /* Out of descriptors: pause accepting for a moment instead of
         * spinning on the readable listener. */
        evconnlistener_disable (l);
        struct timeval tv = { 0, 200000 };
        event_base_once (s->base, -1, EV_TIMEOUT, accept_again, l, &tv);
    }
}

static int bind_socket (struct server *s, const char *path, int *fdp,
                        berth_error_t *err)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen (path) >= sizeof (sa.sun_path))
        return errprintf (err, "socket path %s is too long (at most %zu "
                          "bytes); give a shorter --socket", path,
                          sizeof (sa.sun_path) - 1);
    char dir[sizeof (sa.sun_path)];
    snprintf (dir, sizeof (dir), "%s", path);
    if (sockdir_secure (dirname (dir), getuid (), 1, err) < 0
        || sockdir_clear_stale (path, err) < 0)
        return -1;
    strcpy (sa.sun_path, path);
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errprintf (err, "socket: %s", strerror (errno));
    mode_t old = umask (0177);
    int rc = bind (fd, (struct sockaddr *) &sa, sizeof (sa));
    umask (old);
    if (rc < 0) {
        errprintf (err, "cannot bind %s: %s", path, strerror (errno));
        close (fd);
        return -1;
    }
    s->own_socket = true;
    if (chmod (path, 0600) < 0 || listen (fd, 512) < 0) {
        errprintf (err, "cannot listen on %s: %s", path, strerror (errno));
        close (fd);
        unlink (path);
        s->own_socket = false;
        return -1;
    }
    *fdp = fd;
    return 0;
}

static int server_listen (struct server *s, berth_error_t *err)
{
    struct berthd *d = s->d;
    int fd = -1, n = sd_listen_fds (1);
    if (n < 0)
        return errprintf (err, "reading the sockets systemd passed: %s",
                          strerror (-n));
    if (n > 1)
        return errprintf (err, "systemd passed %d sockets; berthd listens on "
                          "exactly one (check the .socket unit)", n);
    if (n == 1) {
        fd = SD_LISTEN_FDS_START;
        if (sd_is_socket_unix (fd, SOCK_STREAM, 1, NULL, 0) <= 0)
            return errprintf (err, "the socket systemd passed is not a "
                              "listening Unix stream socket (check the "
                              ".socket unit: ListenStream=<path>)");
        struct sockaddr_un sa;
        socklen_t len = sizeof (sa);
        memset (&sa, 0, sizeof (sa));
        if (getsockname (fd, (struct sockaddr *) &sa, &len) == 0
            && sa.sun_path[0])
            snprintf (d->socket_path, sizeof (d->socket_path), "%s",
                      sa.sun_path);
        evutil_make_socket_nonblocking (fd);
        evutil_make_socket_closeonexec (fd);
    }
    else {
        if (bind_socket (s, d->socket_path, &fd, err) < 0)
            return -1;
    }
    s->listener = evconnlistener_new (s->base, accept_cb, s,
                                      LEV_OPT_CLOSE_ON_FREE
                                      | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
    if (!s->listener) {
        close (fd);
        return errprintf (err, "cannot listen on %s: out of memory",
                          d->socket_path);
    }
    evconnlistener_set_error_cb (s->listener, accept_error_cb);
    return 0;
}

struct server *server_create (struct berthd *d, berth_error_t *err)
{
    struct server *s = calloc (1, sizeof (*s));
    if (!s)
        return errprintf (err, "out of memory"), NULL;
    s->d = d;
    s->base = d->base;
    if (server_listen (s, err) < 0) {
        free (s);
        return NULL;
    }
    return s;
}

/* Write what each client has queued, once, without waiting: the replies to
 * a shutdown and the last refusals should reach their readers. */
static void flush_all (struct server *s)
{
    for (struct conn *c = s->conns; c; c = c->next) {
        struct evbuffer *out = bufferevent_get_output (c->bev);
        evutil_socket_t fd = bufferevent_getfd (c->bev);
        /* bufferevents freeze the draining end of their output; we are
         * the writer now */
        evbuffer_unfreeze (out, 1);
        while (fd >= 0 && evbuffer_get_length (out) > 0
               && evbuffer_write (out, fd) > 0)
            ;
    }
}

void server_destroy (struct server *s)
{
    if (!s)
        return;
    flush_all (s);
    if (s->listener)
        evconnlistener_free (s->listener);
    if (s->own_socket)
        unlink (s->d->socket_path);
    /* a connection's leases end with it, as when its client goes */
    while (s->conns)
        conn_free (s->conns);
    if (s->hup_ev)
        event_free (s->hup_ev);
    free (s);
}

unsigned long server_reads (const struct server *s)
{
    return s->reads;
}

void server_broadcast (void *server, const char *line, size_t len)
{
    struct server *s = server;
    for (struct conn *c = s->watchers; c; c = c->wnext)
        if (c->state != CONN_DEAD) {
            char *copy = malloc (len);
            if (copy)
                memcpy (copy, line, len);
            conn_send_line (c, copy, len);
        }
}

void server_end_known (void *server)
{
    struct server *s = server;
    for (struct conn *c = s->conns; c; c = c->next)
        if (c->awaits_end) {
            c->awaits_end = false;
            conn_resume (c);
        }
}
