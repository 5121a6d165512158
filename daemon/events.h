/* SPDX-License-Identifier: MIT */
/* The events log (events.c): one JSON line per grant, wait, release and
 * refusal, appended to <state dir>/events.jsonl a few milliseconds after it
 * happens, and handed at once to a sink (the server, which copies it to the
 * connections that watch). It knows nothing of connections: a watcher's
 * replay is asked for as a range of the file (events_history), which the
 * caller queues itself. */
#ifndef BERTHD_EVENTS_H
#define BERTHD_EVENTS_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>
#include <event2/event.h>

#include "allocation.h"
#include "error.h"

struct events;

/* Called with every event line as it is emitted (newline included); the
 * line is the log's: copy what is kept. */
typedef void (*events_sink_fn) (void *arg, const char *line, size_t len);

/* Open (create) state_dir/events.jsonl for appending; this run's events
 * begin at its current end. Once it holds max bytes (0: no bound) it is
 * renamed events.jsonl.1 and a new one begun with the allocation line.
 * NULL (err) when it cannot be opened. */
struct events *events_create (struct event_base *base, const char *state_dir,
                              size_t max, berth_error_t *err);
/* Write out what is gathered, then close (NULL: nothing). */
void events_destroy (struct events *ev);
void events_set_sink (struct events *ev, events_sink_fn fn, void *arg);
void events_flush (struct events *ev);     /* the log up to date, now */
/* SIGHUP: a log rotated away is started anew (this run's history with it). */
void events_reopen (struct events *ev);
/* Both steal what they are given (ev NULL: the event is dropped). */
void events_emit (struct events *ev, json_t *event);
void events_emit_line (struct events *ev, char *line, size_t len);
/* The "allocation" event: what berthd serves, first of each run. */
void events_allocation (struct events *ev, const struct allocation *alloc,
                        const char *machine_name);
/* What this run has logged so far, after a flush: an open descriptor of the
 * log (*fd, the caller's to close or hand on), and the range *offset, *len.
 * *len 0 (and *fd -1): nothing logged yet. -1 when the log cannot be read. */
int events_history (struct events *ev, int *fd, off_t *offset, size_t *len);

#endif
