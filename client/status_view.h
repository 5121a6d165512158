/* SPDX-License-Identifier: MIT */
/* berth status for people: berthd's status reply (PROTOCOL.md "status") as
 * a header, a table of nodes with a bar each, the leases and the queue.
 * Pure: the status, the time and the window's size come in, text goes out. */
#ifndef BERTH_STATUS_VIEW_H
#define BERTH_STATUS_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Past this many nodes the view summarises them (nodes by state, the
 * busiest) unless all_nodes; past STATUS_VIEW_ROWS leases or waiting
 * requests an unlimited view cuts the rest with "... N more". */
#define STATUS_VIEW_NODE_TABLE 32
#define STATUS_VIEW_BUSIEST 5
#define STATUS_VIEW_ROWS 50

struct status_view_opts {
    int width;          /* terminal cells per line; 0: no limit */
    int height;         /* lines in all; 0: no limit (then STATUS_VIEW_ROWS) */
    bool unicode;       /* bars of block characters, else '#' and '.' */
    bool all_nodes;     /* a row per node however many (--nodes all) */
};

/* now: Unix seconds (for ages). Members the status lacks are left out.
 * Lines never pass o->width (cut with an ellipsis); a section that does not
 * fit o->height ends in "... N more"; columns stay aligned whatever the
 * labels hold. */
void status_view_render (FILE *f, const json_t *status, double now,
                         const struct status_view_opts *o);

/* The unlimited view (scripts, pipes): status_view_render without a window. */
void status_view_print (FILE *f, const json_t *status, double now, bool unicode);

/* A queue entry's reason in a few words: the obstacle without the figures
 * of the best nodes and without the queue head's story ("behind #1 ..."),
 * "held for #N", "never fits" for a request the allocation cannot place. */
void status_view_short_why (const char *why, char *buf, size_t size);

/* One line (len bytes, no newline) cut to width characters with an
 * ellipsis; width 0: whole. */
void status_view_clip_line (FILE *f, const char *line, size_t len, int width);

#endif
