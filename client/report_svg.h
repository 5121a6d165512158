/* SPDX-License-Identifier: MIT */
/* berth report's pictures: a run (report_events.h) as a timeline in SVG,
 * written by hand, or as a small HTML page around it; and its summary as
 * text. Pure: the run comes in laid out, text goes to f. */
#ifndef BERTH_REPORT_SVG_H
#define BERTH_REPORT_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "report_events.h"

struct report_picture {
    bool cores;                 /* one row per core instead of per node */
    const char *title;          /* NULL: "berth run" */
};

/* The summary figures, one per line ("makespan 12m03s", ...). */
void report_summary_print (FILE *f, const struct report_run *run,
                           const struct report_summary *s);

/* run must have been through report_layout. */
void report_svg (FILE *f, const struct report_run *run, const struct report_summary *s,
                 const struct report_picture *o);
void report_html (FILE *f, const struct report_run *run, const struct report_summary *s,
                  const struct report_picture *o);

#endif
