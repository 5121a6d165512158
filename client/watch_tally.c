/* SPDX-License-Identifier: MIT */
/* Counting a watch's events; the rate is a sliding window over grant times
 * so a burst shows at once and fades when the run goes quiet. */
#include <string.h>
#include <time.h>

#include "watch_tally.h"

void watch_tally_init (struct watch_tally *t, double start)
{
    memset (t, 0, sizeof (*t));
    t->start = start;
}

void watch_tally_add (struct watch_tally *t, const char *kind, double time)
{
    if (!kind)
        return;
    if (!strcmp (kind, "granted")) {
        t->granted++;
        t->grants[t->head] = time;
        t->head = (t->head + 1) % WATCH_RATE_KEEP;
        if (t->n < WATCH_RATE_KEEP)
            t->n++;
    } else if (!strcmp (kind, "waited"))
        t->waited++;
    else if (!strcmp (kind, "released"))
        t->released++;
    else if (!strcmp (kind, "refused"))
        t->refused++;
}

/* The seconds the rate looks back: the window, or the watch's age when
 * that is shorter, at least 1 s. */
static double rate_span (const struct watch_tally *t, double now)
{
    double span = now - t->start;
    if (span > WATCH_RATE_WINDOW)
        span = WATCH_RATE_WINDOW;
    if (span < 1.0)
        span = 1.0;
    return span;
}

double watch_tally_rate (const struct watch_tally *t, double now)
{
    double span = rate_span (t, now);
    int count = 0;
    for (int i = 0; i < t->n; i++) {
        double g = t->grants[i];
        if (g >= now - span && g <= now)
            count++;
    }
    return count / span;
}

void watch_tally_print (FILE *f, const struct watch_tally *t, double now)
{
    char since[16] = "?";
    time_t s = (time_t) t->start;
    struct tm tm;
    if (localtime_r (&s, &tm))
        strftime (since, sizeof (since), "%H:%M:%S", &tm);
    fprintf (f, "since %s: %ld granted, %ld waited, %ld released, %ld refused"
             " \u00b7 %.1f grants/s (last %d s)\n", since, t->granted, t->waited,
             t->released, t->refused, watch_tally_rate (t, now), (int) rate_span (t, now));
}
