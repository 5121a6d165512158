/* SPDX-License-Identifier: MIT */
/* What a live `berth status --watch` has seen on its event stream: counts of
 * each kind and grants per second over the last few seconds. Pure: events
 * and the time come in, figures and a line of text go out. */
#ifndef BERTH_WATCH_TALLY_H
#define BERTH_WATCH_TALLY_H

#include <stdio.h>

#define WATCH_RATE_WINDOW 10.0      /* seconds the rate looks back */
#define WATCH_RATE_KEEP 4096        /* grant times kept (a ring) */

struct watch_tally {
    long granted, waited, released, refused;
    double start;                   /* Unix seconds the watch began */
    double grants[WATCH_RATE_KEEP]; /* the latest grant times */
    int head, n;
};

void watch_tally_init (struct watch_tally *t, double start);

/* kind: "granted", "waited", "released", "refused"; others are ignored. */
void watch_tally_add (struct watch_tally *t, const char *kind, double time);

/* Grants per second over the last WATCH_RATE_WINDOW seconds, or over the
 * time since the watch began when that is shorter (at least 1 s). */
double watch_tally_rate (const struct watch_tally *t, double now);

/* "since 12:03:04: 12 granted, 3 waited, 10 released, 0 refused · 0.8 grants/s (last 10 s)" */
void watch_tally_print (FILE *f, const struct watch_tally *t, double now);

#endif
