/* SPDX-License-Identifier: MIT */
/* The events log: one JSON line per grant, wait, release and refusal, in the
 * state directory (events.jsonl), for `berth status` history and timelines;
 * the same events go to every connection that watches. Lines are gathered
 * and written a few milliseconds later, many in one write: the log is
 * history (the journal is what recovery reads), and a write per event was a
 * good part of what a grant cost. A status request, a watch with history
 * and every stop bring the log up to date first. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "allocation_json.h"
#include "berthd.h"

static int open_log (struct berthd *d, berth_error_t *err)
{
    char path[PATH_MAX + 16];
    snprintf (path, sizeof (path), "%s/events.jsonl", d->state_dir);
    int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return errprintf (err, "cannot open the events log %s: %s", path,
                          strerror (errno));
    return fd;
}

#define EVENTS_DELAY_US 5000
#define EVENTS_MAX_BUFFERED (256 * 1024)

void events_flush (struct berthd *d)
{
    if (!d->events_buf)
        return;
    off_t end = d->events_fd >= 0 ? lseek (d->events_fd, 0, SEEK_END) : -1;
    size_t written = 0;
    while (evbuffer_get_length (d->events_buf) > 0) {
        if (d->events_fd < 0) {
            evbuffer_drain (d->events_buf, evbuffer_get_length (d->events_buf));
            break;
        }
        int w = evbuffer_write (d->events_buf, d->events_fd);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            log_msg (LOG_ERR, "writing the events log: %s; %zu bytes of "
                     "events lost", strerror (w < 0 ? errno : EIO),
                     evbuffer_get_length (d->events_buf));
            evbuffer_drain (d->events_buf, evbuffer_get_length (d->events_buf));
            /* A full disk: cut off what this flush wrote, so that readers
             * of the log find whole lines only. */
            if (written > 0 && end >= 0 && ftruncate (d->events_fd, end) < 0)
                log_msg (LOG_ERR, "the events log keeps a partial line: %s",
                         strerror (errno));
            break;
        }
        written += (size_t) w;
    }
}

static void flush_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    events_flush (arg);
}

int events_open (struct berthd *d, berth_error_t *err)
{
    int fd = open_log (d, err);
    if (fd < 0)
        return -1;
    d->events_fd = fd;
    d->events_start = lseek (fd, 0, SEEK_END);
    if (!(d->events_buf = evbuffer_new ())
        || !(d->events_ev = evtimer_new (d->base, flush_cb, d)))
        return errprintf (err, "out of memory setting up the events log");
    return 0;
}

/* The first line of each run of berthd: what it serves, so that a report
 * of the log draws every node and core without being told. */
void events_allocation (struct berthd *d)
{
    json_t *a = allocation_to_json (d->alloc), *nodes = json_array (), *n;
    size_t i;
    json_array_foreach (a ? json_object_get (a, "nodes") : NULL, i, n)
        json_array_append_new (nodes, json_pack (
            "{s:O s:O s:O? s:O?}", "name", json_object_get (n, "name"),
            "cores", json_object_get (n, "cores"), "ncores", json_object_get (n, "ncores"),
            "gpus", json_object_get (n, "gpus")));
    json_decref (a);
    if (json_array_size (nodes) == 0) {
        json_decref (nodes);
        return;
    }
    events_emit (d, proto_event_allocation (now_wall (), d->alloc->job_id,
                                            d->machine->name, nodes));
}

/* SIGHUP: a log rotated away is started anew. */
void events_reopen (struct berthd *d)
{
    berth_error_t err;
    struct stat a, b;
    int fd = open_log (d, &err);
    if (fd < 0) {
        log_msg (LOG_ERR, "%s; keeping the old one", err.text);
        return;
    }
    events_flush (d);
    bool same = d->events_fd >= 0 && fstat (d->events_fd, &a) == 0
                && fstat (fd, &b) == 0 && a.st_dev == b.st_dev
                && a.st_ino == b.st_ino;
    if (d->events_fd >= 0)
        close (d->events_fd);
    d->events_fd = fd;
    if (!same)
        d->events_start = 0;
}

void events_close (struct berthd *d)
{
    events_flush (d);
    if (d->events_ev)
        event_free (d->events_ev);
    if (d->events_buf)
        evbuffer_free (d->events_buf);
    d->events_ev = NULL;
    d->events_buf = NULL;
    if (d->events_fd >= 0)
        close (d->events_fd);
    d->events_fd = -1;
}

void events_emit (struct berthd *d, json_t *ev)
{
    char *line = ev ? proto_line (ev) : NULL;
    json_decref (ev);
    if (line)
        events_emit_line (d, line, strlen (line));
}

void events_emit_line (struct berthd *d, char *line, size_t len)
{
    if (!line)
        return;
    if (d->events_fd >= 0 && d->events_buf) {
        if (evbuffer_add (d->events_buf, line, len) < 0)
            log_msg (LOG_ERR, "out of memory logging an event");
        if (evbuffer_get_length (d->events_buf) > EVENTS_MAX_BUFFERED)
            events_flush (d);
        else if (!evtimer_pending (d->events_ev, NULL)) {
            struct timeval tv = { 0, EVENTS_DELAY_US };
            evtimer_add (d->events_ev, &tv);
        }
    }
    if (d->event_sink)
        d->event_sink (d->sink_arg, line, len);
    free (line);
}

/* What this run has logged so far, straight from the file: fd is -1 when
 * there is nothing. */
int events_history (struct berthd *d, int *fdp, off_t *offset, size_t *len)
{
    char path[PATH_MAX + 16];
    events_flush (d);
    *fdp = -1;
    snprintf (path, sizeof (path), "%s/events.jsonl", d->state_dir);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat (fd, &st) < 0) {
        if (fd >= 0)
            close (fd);
        return -1;
    }
    if (st.st_size <= d->events_start) {
        close (fd);
        return 0;
    }
    *fdp = fd;
    *offset = d->events_start;
    *len = (size_t) (st.st_size - d->events_start);
    return 0;
}
