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

struct report_run {
    struct report_step *steps;  /* in grant order */
    int nsteps;
    struct report_node *nodes;  /* allocation order, else order of first use */
    int nnodes;
    int refused;                /* requests refused */
    double t0, t1;              /* first and last event */
};

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

void report_summarise (const struct report_run *run, struct report_summary *s);

void report_run_free (struct report_run *run);   /* contents, not run */

#endif
