/* SPDX-License-Identifier: MIT */
/* The events log: one JSON line per grant, wait, release and refusal, in the
 * state directory (events.jsonl), for `berth status` history and timelines;
 * the same events go to the sink (the server: every connection that
 * watches). Lines are gathered and written a few milliseconds later, many
 * in one write: the log is history (the journal is what recovery reads),
 * and a write per event was a good part of what a grant cost. A status
 * request, a watch with history and every stop bring the log up to date
 * first. Connections are not known here: a watcher's history is handed out
 * as a range of the file, and live lines through the sink. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "allocation_json.h"
#include "clock.h"
#include "codec.h"
#include "events.h"
#include "log.h"

#define EVENTS_DELAY_US 5000
#define EVENTS_MAX_BUFFERED (256 * 1024)

struct events {
    char path[PATH_MAX + 16];     /* state_dir/events.jsonl */
    int fd;                       /* appended to; -1: none */
    off_t start;                  /* where this run's events begin */
    off_t max;                    /* past it the log is rotated; 0: never */
    off_t next_try;               /* a rotation failed: not before this size */
    char *first;                  /* the allocation line, first of each file */
    size_t first_len;
    struct evbuffer *buf;         /* events not yet in the log */
    struct event *flush_ev;       /* writes them out soon */
    events_sink_fn sink;
    void *sink_arg;
};

static int open_log (const struct events *ev, berth_error_t *err)
{
    int fd = open (ev->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return errprintf (err, "cannot open the events log %s: %s", ev->path,
                          strerror (errno));
    return fd;
}

/* A new file of the log starts with the allocation line. */
static void begin_file (const struct events *ev, int fd)
{
    if (ev->first
        && write (fd, ev->first, ev->first_len) != (ssize_t) ev->first_len)
        log_msg (LOG_WARNING, "the new events log %s lacks its allocation "
                 "line: %s", ev->path, strerror (errno));
}

/* Past --events-max the log becomes events.jsonl.1 (one older file kept,
 * so the disk holds at most twice the bound) and a new one starts with the
 * allocation line, so that a reader of either knows every node. A watch's
 * history is then what the new file holds. */
static void rotate (struct events *ev, off_t size)
{
    char old[sizeof (ev->path) + 2];
    berth_error_t err;
    snprintf (old, sizeof (old), "%s.1", ev->path);
    int fd = -1;
    if (rename (ev->path, old) < 0)
        errprintf (&err, "cannot rename the events log %s to %s: %s",
                   ev->path, old, strerror (errno));
    else if ((fd = open_log (ev, &err)) >= 0)
        begin_file (ev, fd);
    if (fd < 0) {
        ev->next_try = size + ev->max / 8 + 1;
        log_msg (LOG_ERR, "%s; the events log (%lld MiB) goes on growing, "
                 "rotated again once %lld MiB", err.text,
                 (long long) (size >> 20), (long long) (ev->next_try >> 20));
        return;
    }
    close (ev->fd);
    ev->fd = fd;
    ev->start = 0;
    ev->next_try = 0;
    log_msg (LOG_INFO, "the events log reached %lld MiB (--events-max "
             "%lld): kept as %s, a new one begun", (long long) (size >> 20),
             (long long) (ev->max >> 20), old);
}

static void bound_size (struct events *ev)
{
    struct stat st;
    if (ev->max > 0 && ev->fd >= 0 && fstat (ev->fd, &st) == 0
        && st.st_size >= ev->max && st.st_size >= ev->next_try)
        rotate (ev, st.st_size);
}

void events_flush (struct events *ev)
{
    if (!ev)
        return;
    off_t end = ev->fd >= 0 ? lseek (ev->fd, 0, SEEK_END) : -1;
    size_t written = 0;
    while (evbuffer_get_length (ev->buf) > 0) {
        if (ev->fd < 0) {
            evbuffer_drain (ev->buf, evbuffer_get_length (ev->buf));
            break;
        }
        int w = evbuffer_write (ev->buf, ev->fd);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            log_msg (LOG_ERR, "writing the events log: %s; %zu bytes of "
                     "events lost", strerror (w < 0 ? errno : EIO),
                     evbuffer_get_length (ev->buf));
            evbuffer_drain (ev->buf, evbuffer_get_length (ev->buf));
            /* A full disk: cut off what this flush wrote, so that readers
             * of the log find whole lines only. */
            if (written > 0 && end >= 0 && ftruncate (ev->fd, end) < 0)
                log_msg (LOG_ERR, "the events log keeps a partial line: %s",
                         strerror (errno));
            break;
        }
        written += (size_t) w;
    }
    if (written > 0)
        bound_size (ev);
}

static void flush_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    events_flush (arg);
}

struct events *events_create (struct event_base *base, const char *state_dir,
                              size_t max, berth_error_t *err)
{
    struct events *ev = calloc (1, sizeof (*ev));
    if (!ev) {
        errprintf (err, "out of memory setting up the events log");
        return NULL;
    }
    ev->fd = -1;
    ev->max = (off_t) max;
    if (snprintf (ev->path, sizeof (ev->path), "%s/events.jsonl", state_dir)
        >= (int) sizeof (ev->path)) {
        errprintf (err, "the events log's path is too long: %s/events.jsonl",
                   state_dir);
        free (ev);
        return NULL;
    }
    if ((ev->fd = open_log (ev, err)) < 0) {
        free (ev);
        return NULL;
    }
    ev->start = lseek (ev->fd, 0, SEEK_END);
    if (!(ev->buf = evbuffer_new ())
        || !(ev->flush_ev = evtimer_new (base, flush_cb, ev))) {
        errprintf (err, "out of memory setting up the events log");
        events_destroy (ev);
        return NULL;
    }
    return ev;
}

void events_destroy (struct events *ev)
{
    if (!ev)
        return;
    if (ev->buf)
        events_flush (ev);
    if (ev->flush_ev)
        event_free (ev->flush_ev);
    if (ev->buf)
        evbuffer_free (ev->buf);
    if (ev->fd >= 0)
        close (ev->fd);
    free (ev->first);
    free (ev);
}

void events_set_sink (struct events *ev, events_sink_fn fn, void *arg)
{
    if (!ev)
        return;
    ev->sink = fn;
    ev->sink_arg = arg;
}

/* The first line of each run of berthd: what it serves, so that a report
 * of the log draws every node and core without being told. */
void events_allocation (struct events *ev, const struct allocation *alloc,
                        const char *machine_name)
{
    json_t *nodes = allocation_node_runs (alloc);
    if (json_array_size (nodes) == 0) {
        json_decref (nodes);
        return;
    }
    json_t *event = proto_event_allocation (now_wall (), alloc->job_id,
                                            machine_name, nodes);
    char *line = event ? proto_line (event) : NULL;
    json_decref (event);
    if (!line || !ev) {
        free (line);
        return;
    }
    free (ev->first);             /* kept for the top of a rotated log */
    ev->first_len = strlen (line);
    ev->first = strdup (line);
    events_emit_line (ev, line, ev->first_len);
}

/* SIGHUP: a log rotated away is started anew. */
void events_reopen (struct events *ev)
{
    berth_error_t err;
    struct stat a, b;
    if (!ev)
        return;
    int fd = open_log (ev, &err);
    if (fd < 0) {
        log_msg (LOG_ERR, "%s; keeping the old one", err.text);
        return;
    }
    events_flush (ev);
    bool known = fstat (fd, &b) == 0;
    bool same = known && ev->fd >= 0 && fstat (ev->fd, &a) == 0
                && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    if (ev->fd >= 0)
        close (ev->fd);
    ev->fd = fd;
    if (!same) {
        ev->start = 0;
        if (known && b.st_size == 0)
            begin_file (ev, fd);
    }
}

void events_emit (struct events *ev, json_t *event)
{
    char *line = event ? proto_line (event) : NULL;
    json_decref (event);
    if (line)
        events_emit_line (ev, line, strlen (line));
}

void events_emit_line (struct events *ev, char *line, size_t len)
{
    if (!line)
        return;
    if (!ev) {
        free (line);
        return;
    }
    if (ev->fd >= 0) {
        if (evbuffer_add (ev->buf, line, len) < 0)
            log_msg (LOG_ERR, "out of memory logging an event");
        if (evbuffer_get_length (ev->buf) > EVENTS_MAX_BUFFERED)
            events_flush (ev);
        else if (!evtimer_pending (ev->flush_ev, NULL)) {
            struct timeval tv = { 0, EVENTS_DELAY_US };
            evtimer_add (ev->flush_ev, &tv);
        }
    }
    if (ev->sink)
        ev->sink (ev->sink_arg, line, len);
    free (line);
}

/* Read back from the file rather than kept: the history can be long, and
 * the caller queues it from the descriptor (evbuffer_add_file) without
 * holding it in memory. */
int events_history (struct events *ev, int *fd, off_t *offset, size_t *len)
{
    struct stat st;
    *fd = -1;
    *offset = 0;
    *len = 0;
    if (!ev)
        return -1;
    events_flush (ev);
    int f = open (ev->path, O_RDONLY | O_CLOEXEC);
    if (f < 0 || fstat (f, &st) < 0) {
        if (f >= 0)
            close (f);
        return -1;
    }
    if (st.st_size <= ev->start) {
        close (f);
        return 0;
    }
    *fd = f;
    *offset = ev->start;
    *len = (size_t) (st.st_size - ev->start);
    return 0;
}
