/* SPDX-License-Identifier: MIT */
/* The connection layer: the listening socket (bound here, or passed by
 * systemd), connections, newline framing, and the only writes to clients.
 * Each request line goes to ops_serve; what it returns is written here. */
#ifndef BERTHD_SERVER_H
#define BERTHD_SERVER_H

#include <stddef.h>

#include "error.h"

struct berthd;
struct server;

/* A connection whose unread output (replies, events) passes
 * CONN_OUTPUT_PAUSE is not served further until its client has read it
 * down; it is closed when it reads none of it for cfg.output_stall seconds,
 * or at once past CONN_OUTPUT_MAX. The events log a watcher asked to replay
 * is queued from its file and does not count. */
#define CONN_OUTPUT_PAUSE (1u << 20)
#define CONN_OUTPUT_MAX (64u << 20)
/* All connections' unread output together (--output-max, default
 * 128 MiB): past it, the connection
 * furthest behind is closed (the one that has read nothing for longest: a
 * watcher that never reads, most often; not a client reading a large reply
 * as it comes), its output dropped at once, so that berthd's memory stays
 * near this however many clients stop reading.
 * Once the output of such a burst is gone, berthd gives its memory back to
 * the system (malloc_trim). */
#define SERVER_TRIM_AFTER (8u << 20)

/* Listen on d->socket_path (or the socket systemd passed, whose path is
 * then written there). */
struct server *server_create (struct berthd *d, berth_error_t *err);
/* Write what each client has queued, once, without waiting, close the
 * socket and every connection (conn_free ends their connection-bound
 * leases, as any close does). */
void server_destroy (struct server *s);
/* Reads from clients so far (the event loop polls after each). */
unsigned long server_reads (const struct server *s);
/* An event line for every watching connection (copied). */
void server_broadcast (void *server, const char *line, size_t len);
/* The job's end is known: requests that waited for it are served again. */
void server_end_known (void *server);

#endif
