/* SPDX-License-Identifier: MIT */
/* The allocation's ledger: per node the usable core
 * ids, which are free, free GPU indices, credited and unbudgeted memory, and
 * the leases that hold the rest. Pure logic: no I/O, no clock. */
#ifndef BERTH_LEDGER_H
#define BERTH_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "placement.h"
#include "step.h"

/* One node as the allocation gives it. */
struct ledger_node_spec {
    const char *name;
    const int *cores;         /* usable core ids, any order, unique */
    int ncores;               /* >= 1 */
    int gpus;                 /* indices 0..gpus-1; 0..64 */
    int64_t memory;           /* MB credited; -1: unknown */
};

/* Who fixes which node runs how many tasks of a spanning step. */
enum ledger_layout {
    LEDGER_CPU_BINDING,       /* the launcher: exact block layout per node */
    LEDGER_SCHEDULER,         /* the scheduler: reserve ceil(n/nodes) each */
};

struct ledger_lease_node {
    int node;                 /* index into the ledger's nodes */
    int *cores;               /* ascending ids; on a spanning lease a prefix
                                 of node 0's list */
    int ncores;
    int *gpus;                /* ascending indices, prefix likewise */
    int ngpus;
    int64_t memory;           /* MB charged here; 0 when not accounted */
};

struct ledger_lease {
    uint64_t id;              /* "L<id>" */
    struct ledger_lease_node *nodes;   /* placement order */
    int nnodes;
    struct step_shape shape;  /* what was asked (after cutting to fit) */
    enum ledger_layout layout;
    double est_end;           /* when it is expected to end, on the caller's
                                 clock (ledger_lease_set_end); < 0: unknown */
};

/* Read-only view of one node, for status. */
struct ledger_node_info {
    const char *name;
    int cores, free_cores;
    int gpus, free_gpus;
    int64_t memory, unbudgeted;   /* -1 when unknown */
    int leases;                   /* leases resident on the node */
};

/* The sums over every node, kept as leases come and go: what a person's
 * status shows without a walk of the nodes. */
struct ledger_totals {
    int nodes;
    int full;                     /* no core free */
    int idle;                     /* no lease resident */
    int64_t resident;             /* leases resident, summed over nodes */
    int64_t cores, free_cores, gpus, free_gpus;
    int64_t memory, unbudgeted;   /* MB; -1 when some node's is unknown */
};

struct ledger;

/* Build the ledger. local_node: the daemon's own node (index), or -1 when it
 * runs elsewhere (then local steps never fit). Errors name the node. */
struct ledger *ledger_create (const struct ledger_node_spec *nodes,
                              int nnodes, int local_node, berth_error_t *err);
void ledger_destroy (struct ledger *l);

/* The figures to cut steps against: nodes, the fewest usable cores and GPUs
 * on any node, the least memory (-1 if any node's is unknown). mpi_allowed
 * is the caller's to set. */
void ledger_capacity (const struct ledger *l, struct step_capacity *cap);

/* Place a step now. 0: granted, *id set. 1: does not fit now; why (may be
 * NULL) says why in a user's words ("no 2 nodes with 128 free cores (best:
 * 96, 32)"). -1: error (invalid shape, out of memory); nothing changed. */
int ledger_acquire (struct ledger *l, const struct step_shape *shape,
                    enum ledger_layout layout, uint64_t *id, char *why,
                    size_t whysize, berth_error_t *err);

/* Hold nodes back for a request that waits (the wait queue's starvation
 * bound): the fewest nodes that could hold the shape, those nearest to
 * holding it, are kept out of every placement until ledger_unreserve, so
 * that they drain for it while the rest of the allocation is still used.
 * Their indices go to nodes (room for max). Returns how many were reserved:
 * 0 when none can be (too few nodes left unreserved, or the shape never fits
 * one). Reserving again adds to what is held.
 * Chosen first: the nodes expected to hold the shape soonest by the
 * estimated ends of their leases (a lease past its estimate may end at any
 * moment: now); nodes that wait on a lease with no estimate come after,
 * nearest to holding it first. */
int ledger_reserve_for_at (struct ledger *l, const struct step_shape *shape,
                           enum ledger_layout layout, double now, int *nodes,
                           int max);
/* Hold these nodes back again (a reservation kept from one round to the
 * next, so that what has drained stays drained); -1 and nothing held when
 * one is out of range or already held. */
int ledger_reserve_nodes (struct ledger *l, const int *nodes, int n);
void ledger_unreserve (struct ledger *l);

/* Record when a lease is expected to end (now + the duration its request
 * stated), on the caller's clock; end < 0 forgets it. -1 for an unknown id.
 * Only ledger_ready_at and ledger_reserve_for_at read it. */
int ledger_lease_set_end (struct ledger *l, uint64_t id, double end);

/* The earliest time at which every one of these nodes could hold the
 * shape's largest per-node demand (the ids aside), if each lease on them
 * ends by its estimate: a lease with none, or one already past it, is taken
 * to end now, so that the answer never comes after the time they really
 * will hold it while the estimates hold (a request expected to end by then
 * cannot delay one waiting for them). now when they hold it already; -1 when
 * a node could never hold it, or memory is short. */
double ledger_ready_at (const struct ledger *l, const struct step_shape *shape,
                        enum ledger_layout layout, const int *nodes, int n,
                        double now);

/* When the shape could start, at the earliest, if every lease ends by its
 * estimate (requests waiting before it aside): the time the fewest nodes
 * that could hold it would hold it. -1 when that is not known: a lease it
 * waits on stated no duration, or it never fits. For people (berth run
 * -v); the queue itself uses ledger_ready_at. */
double ledger_start_estimate (const struct ledger *l,
                              const struct step_shape *shape,
                              enum ledger_layout layout, double now);

/* Free a lease. An unknown or already released id is an error (code
 * "not_found") and changes nothing. */
int ledger_release (struct ledger *l, uint64_t id, berth_error_t *err);

const struct ledger_lease *ledger_lease_find (const struct ledger *l,
                                              uint64_t id);

/* Put back a lease exactly as it was recorded (crash recovery, where the
 * journal holds the placement, not the history that led to it): its id,
 * shape, layout and per node the core ids (in their order), GPU indices and
 * MB charged. Every id must be usable and free, the memory unbudgeted (0
 * where the node's memory is unknown), the lease id unused. On failure
 * (code "conflict" when something is already held, "invalid" otherwise) the
 * message names the node and id, and nothing changes. Later grants get ids
 * above it. */
int ledger_restore (struct ledger *l, const struct ledger_lease *want,
                    berth_error_t *err);

/* The id the next grant gets. Raising it (never lowering) keeps ids handed
 * out before a restart from being handed out again. */
uint64_t ledger_next_id (const struct ledger *l);
void ledger_raise_next_id (struct ledger *l, uint64_t next);

/* Leases in id order: *v is a new array of borrowed pointers (free it). */
int ledger_leases (const struct ledger *l, const struct ledger_lease ***v,
                   int *count, berth_error_t *err);

int ledger_nnodes (const struct ledger *l);

/* Why the shape does not fit now, in ledger_acquire's words (nothing is
 * placed; what is reserved counts as taken). */
void ledger_explain (struct ledger *l, const struct step_shape *shape,
                     enum ledger_layout layout, char *why, size_t whysize);
/* How many explanations the ledger has composed (each scans every node):
 * what tests and benchmarks count the work of a round by. */
uint64_t ledger_explained (const struct ledger *l);

/* A count that changes whenever what is free or the expected ends of
 * leases change (an acquire, a release, a restore, an expected end set);
 * reserving does not change it. Equal counts: the same ledger state. */
uint64_t ledger_generation (const struct ledger *l);
void ledger_node_info (const struct ledger *l, int node,
                       struct ledger_node_info *info);
void ledger_totals (const struct ledger *l, struct ledger_totals *t);
/* Up to k nodes that hold a lease, fewest free cores first, ties in node
 * order, into nodes; every node, in order, when there are at most k. Costs
 * the nodes returned (and the free-count buckets), not the allocation.
 * Returns how many. */
int ledger_busiest (const struct ledger *l, int *nodes, int k);

/* A lease as a placement for rendering: node names and core ids per node,
 * gpus the step's total, gpu_ids node 0's indices (every other node holds the
 * same list or, in a block layout with fewer GPUs there, a prefix of it).
 * Free with placement_free. */
int ledger_lease_placement (const struct ledger *l,
                            const struct ledger_lease *ls,
                            struct placement *p, berth_error_t *err);

/* "L42". */
int ledger_lease_name (uint64_t id, char *buf, size_t size);

/* Check that every id is free or held by exactly one lease, free counts,
 * buckets, memory budgets and the totals add up. 0 when they do. */
int ledger_check_invariants (const struct ledger *l, berth_error_t *err);

#endif
