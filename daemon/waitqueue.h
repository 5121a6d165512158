/* SPDX-License-Identifier: MIT */
/* Requests that do not fit yet wait here: arrival
 * order (a request sent again after a restart by its first arrival),
 * higher priority first, with backfill (a later request that fits now
 * may start) bounded against starvation (once an entry has been overtaken N
 * times or waited T seconds, freed resources are held for it: the nodes
 * nearest to holding it take nothing new until it starts, while later
 * requests may still start on the other nodes; N = 0 is strict order).
 * Requests that state a duration make the holding cheaper (EASY backfill):
 * grants record when they are expected to end (ledger_lease_set_end), which
 * tells when the held nodes will hold the waiting entry, and a later request
 * expected to end by then may start on the held nodes too, since it gives
 * them back in time.
 * Pure logic: time is a parameter, never read from a clock. */
#ifndef BERTH_WAITQUEUE_H
#define BERTH_WAITQUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "ledger.h"
#include "step.h"

struct waitqueue_config {
    int max_overtakes;        /* N; 0: strict order, no backfill */
    double max_wait;          /* T seconds; < 0: no time bound */
    bool full_rounds;         /* every round tries every entry: the
                                 reference the quick rounds are tested
                                 against */
};

#define WAITQUEUE_DEFAULT_OVERTAKES 16
#define WAITQUEUE_DEFAULT_MAX_WAIT 600.0

struct waitqueue_request {
    struct step_shape shape;  /* already cut to fit */
    enum ledger_layout layout;
    const char *label;        /* copied; may be NULL */
    int priority;             /* higher first; ties by arrival */
    uint64_t owner;           /* the connection, handed back with its grant */
    double duration;          /* seconds it expects to run; <= 0: not stated
                                 (so a zeroed request states none) */
    double since;             /* a request sent again after a restart: when
                                 it first arrived, on now's clock; it takes
                                 its place from then. <= 0, or not before
                                 now: it arrives now */
    const char *why;          /* why it did not fit when tried before it was
                                 queued (copied); NULL: not tried yet */
};

/* A request that left the queue granted. */
struct waitqueue_result {
    uint64_t ticket, owner, lease;
    double waited;            /* seconds */
};

/* A waiting request, for status: position is 1-based in queue order. */
struct waitqueue_entry_info {
    uint64_t ticket, owner;
    int position;
    const char *label;        /* NULL when none */
    const struct step_shape *shape;
    int priority;
    double added;             /* the time it was added */
    int overtaken;
    const char *reason;       /* why it waits, in a user's words */
};

struct waitqueue;

/* cfg NULL: the defaults above. The ledger is borrowed. */
struct waitqueue *waitqueue_create (struct ledger *l,
                                    const struct waitqueue_config *cfg,
                                    berth_error_t *err);
void waitqueue_destroy (struct waitqueue *q);

/* Queue a request at time now; *ticket identifies it. It is tried by the
 * next waitqueue_schedule, not here. */
int waitqueue_add (struct waitqueue *q, const struct waitqueue_request *r,
                   double now, uint64_t *ticket, berth_error_t *err);

/* Drop a waiting request; unknown ticket: error "not_found". */
int waitqueue_cancel (struct waitqueue *q, uint64_t ticket,
                      berth_error_t *err);

/* Start what can start now, in order, acquiring from the ledger. *out is a
 * new array (free it; NULL when *count is 0) of the grants, in grant order;
 * a grant of a request that stated a duration has its expected end set in
 * the ledger. When the ledger is as the last round left it
 * (ledger_generation) and no entry has become due to be held by its wait,
 * only the requests added since are tried (the others cannot start: see
 * waitqueue.c); the grants are those a full round would make. */
int waitqueue_schedule (struct waitqueue *q, double now,
                        struct waitqueue_result **out, int *count,
                        berth_error_t *err);

int waitqueue_length (const struct waitqueue *q);

/* Entry at 0-based index in queue order; -1 when out of range. The
 * reason is composed by the call and lasts until the next call for the
 * same entry or a change of the queue. */
int waitqueue_entry (const struct waitqueue *q, int index,
                     struct waitqueue_entry_info *info);

/* The entry of a ticket, in O(log n); -1 when it does not wait. */
int waitqueue_find (const struct waitqueue *q, uint64_t ticket,
                    struct waitqueue_entry_info *info);

#endif
