/* SPDX-License-Identifier: MIT */
/* berth report, the pure part: berthd's events log (events.jsonl, the
 * events of PROTOCOL.md) read into the steps of a run, their lanes on each
 * node's row of a timeline, and the run's summary figures. No I/O. */
#ifndef BERTH_REPORT_EVENTS_H
#define BERTH_REPORT_EVENTS_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"

struct report_span {            /* one node of a step's placement */
    int node;                   /* index into report_run.nodes */
    int *cores;                 /* core ids, ascending */
    int ncores;
    int lane;                   /* its lane in the node's row (report_layout) */
};

struct report_step {
    char *lease;                /* "L17" */
    char *label;                /* NULL: none */
    double asked;               /* joined the queue; == start when it never waited */
    double start, end;          /* granted; released (or the log's end) */
    bool released;              /* false: still held when the log ends */
    int gpus;
    struct report_span *spans;
    int nspans;
};

struct report_node {
    char *name;
    int *cores;                 /* the core ids: from the allocation, else all seen */
    int ncores;
    int nlanes;                 /* report_layout */
};

struct report_refusal {
    double time;
    char *label;                /* NULL: none */
};

struct report_allocation {      /* an "allocation" event: berthd started */
    double time;
    json_t *nodes;              /* as the event has them (checked by the codec) */
};

struct report_run {
    struct report_step *steps;  /* in grant order */
    int nsteps;
    struct report_node *nodes;  /* allocation order, else order of first use */
    int nnodes;
    int refused;                /* requests refused */
    double t0, t1;              /* first and last event (or the window) */
    struct report_refusal *refusals;
    struct report_allocation *allocs;
    int nallocs;
};

/* Which part of the log to report: a time window, one batch of steps, some
 * labels. */
#define REPORT_RUN_GAP 60.0     /* s with nothing held or waiting between two batches */
struct report_filter {
    double since, until;        /* Unix seconds; NAN: open */
    int run;                    /* 0: all; N > 0: the Nth batch, N < 0: from the end */
    const char *const *labels;  /* shell patterns (fnmatch); a step matching any is kept */
    int nlabels;
};

/* The batches of steps: spans during which something was held or waiting,
 * split where nothing was for REPORT_RUN_GAP seconds or more. *spans holds
 * 2 * *count times (start, end); free it. -1 when out of memory. */
int report_batches (const struct report_run *run, double **spans, int *count);

/* Keeps the steps of the filter (cut to its window), the refusals in it,
 * and the nodes they used; t0, t1 become the window's ends (within the
 * log). An empty selection is an error that names what was asked; the run
 * is then as it was. Call before report_set_allocation. */
int report_select (struct report_run *run, const struct report_filter *f,
                   berth_error_t *err);

/* A time as the options take it: Unix seconds ("1754300000.5"), an offset
 * from the log's start or end ("+90", "+5m", "-1h30m"), or a local date and
 * time ("2026-12-01 21:05[:30]", "2026-12-01T21:05"). */
int report_parse_when (const char *text, double t0, double t1, double *out,
                       berth_error_t *err);

/* The allocation event of the log that covers the window's start (the last
 * at or before it, else the first), or NULL when the log has none. */
const json_t *report_log_allocation (const struct report_run *run);

/* The length of a label's family: the label without its trailing number
 * and the separator before it ("ocean_qu240_17" -> "ocean_qu240",
 * "mesh-3" -> "mesh"). */
size_t report_family_len (const char *label);

/* text: the events log, one JSON event per line (blank lines skipped;
 * events of kinds it does not know are skipped, as PROTOCOL.md asks of
 * clients). A wait is matched to the next grant or refusal of the same
 * label. On error nothing is kept; the message names the line. */
int report_parse (const char *text, struct report_run *run, berth_error_t *err);

/* allocation: berthd's status reply (or its "allocation" member), as
 * `berth status --json` prints it: its nodes and their core ids become the
 * run's, so that cores no step used show as idle. Nodes the log names that
 * the allocation lacks are an error. Call before report_layout. */
int report_set_allocation (struct report_run *run, const json_t *status,
                           berth_error_t *err);
/* The same, from the log's own allocation event: nodes the log names that
 * it lacks (another run of berthd) are kept, after its own. */
int report_add_allocation (struct report_run *run, const json_t *nodes,
                           berth_error_t *err);

/* Lanes within each node's row: a step (its wait included) takes the lowest
 * lane free for its whole time, so steps side by side never overlap. */
void report_layout (struct report_run *run);

struct report_summary {
    double makespan;            /* t1 - t0, s */
    double utilisation;         /* core-seconds held / (cores x makespan), 0..1 */
    long long cores;            /* cores in the run's nodes */
    double longest_wait;        /* s; 0 when nothing waited */
    const char *longest_wait_label;  /* NULL: none or unlabelled */
    int waited;                 /* steps that waited */
    int peak_cores;             /* most cores held at once */
};

/* A count changing at an instant (a step's cores held, a request waiting),
 * for sweeps over a run's time line; report_change_cmp sorts by time, the
 * decreases first at the same instant. */
struct report_change {
    double time;
    int delta;
};
int report_change_cmp (const void *a, const void *b);

void report_summarise (const struct report_run *run, struct report_summary *s);

/* The figures as JSON (berth report --json): the summary, per step its
 * times (seconds from t0), wait, cores and nodes, per label family its
 * steps, core-seconds and waits. NULL when out of memory. */
json_t *report_json (const struct report_run *run, const struct report_summary *s);

void report_run_free (struct report_run *run);   /* contents, not run */

#endif
