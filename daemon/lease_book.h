/* SPDX-License-Identifier: MIT */
/* The lease book: berthd's records of the leases it has granted, by id, and
 * which holder (a connection, as an opaque key) holds each connection-bound
 * one. Pure bookkeeping: no timers, no file descriptors, no system calls;
 * what watches a lease is lease_watch.h's, what records it on disk is
 * journal.h's. Nothing here is thread-safe. */
#ifndef BERTHD_LEASE_BOOK_H
#define BERTHD_LEASE_BOOK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec.h"
#include "error.h"
#include "ledger.h"
#include "placement.h"
#include "render.h"
#include "step.h"

/* One granted lease. The book owns the records it holds. */
struct lease {
    uint64_t id;
    char name[32];
    bool detached, local;
    char *label;
    struct step_shape shape;
    enum ledger_layout layout;
    struct placement placement;   /* where the step runs: the grant's ids,
                                     or those it reported (placed) */
    bool placed;                  /* it reported them: the grant's ids are
                                     then the ledger's alone */
    struct launch launch;         /* argv NULL: no launch rendered */
    struct env_set_item *env;
    int nenv;
    pid_t peer_pid, owner_pid;    /* peer_pid: the process that holds it
                                     (set at grant and at rebind) */
    uint64_t peer_start;          /* the holder's start time (pidstart.h);
                                     0: unknown */
    uint64_t owner_start;         /* owner_pid's start time, read when it
                                     asked: a later process given the pid
                                     does not keep the lease; 0: unknown */
    uid_t uid;
    double granted;               /* wall clock */
    double reclaim_by;            /* wall clock: a restored lease whose holder
                                     cannot be watched is freed then unless
                                     reclaimed; < 0: none */
    double expires;               /* wall clock; < 0: no ttl */
    double expires_boot;          /* the same on CLOCK_BOOTTIME (clock.h),
                                     which a restart in this boot trusts over
                                     the wall clock; < 0: unknown */
    /* The id of the request it answered (a JSON integer or string), kept as
     * a value, not as text: a request sent again after a restart is matched
     * to it with json_equal, which the same id written another way (1 and
     * 1.0, escapes) must not defeat or fool. NULL: unknown. */
    json_t *request;
};

/* A record of the ledger's lease ll (id, name, shape, layout), with no
 * expiry and no reclaim deadline; the grant and a restart fill in the
 * rest. NULL when out of memory. */
struct lease *lease_new (const struct ledger_lease *ll);
/* A record that is in no book (NULL: nothing). */
void lease_free (struct lease *ls);
/* The lease as the codec describes it (borrowed pointers; do not free). */
void lease_to_proto (const struct lease *ls, bool with_env,
                     struct proto_lease *out);

struct lease_book;

struct lease_book *lease_book_create (void);
/* Frees every record still in it. */
void lease_book_destroy (struct lease_book *b);

/* The book takes ls (unbound) under ls->id. -1 when out of memory or when
 * the id is taken (nothing changed: ls stays the caller's). */
int lease_book_add (struct lease_book *b, struct lease *ls,
                    berth_error_t *err);
/* Take the record out of the book (unbound from its holder) and give it
 * back to the caller; NULL when there is none. */
struct lease *lease_book_remove (struct lease_book *b, uint64_t id);
struct lease *lease_book_find (const struct lease_book *b, uint64_t id);
/* By name: "L12" or "12"; NULL for a malformed name or one not held. */
struct lease *lease_book_lookup (const struct lease_book *b, const char *name);
size_t lease_book_count (const struct lease_book *b);

/* Walk the records (in no order): start *pos at 0; each call returns the
 * next one, NULL at the end. The book must not change during the walk. */
struct lease *lease_book_next (const struct lease_book *b, size_t *pos);
/* The ids held now, ascending, for walks that end leases as they go (look
 * each up again: it may be gone). NULL when out of memory; *n is set. */
uint64_t *lease_book_ids (const struct lease_book *b, size_t *n);

/* The first k records in the order the book took them (the oldest grants,
 * restored ones in the journal's order), into v; how many. Costs k. */
size_t lease_book_oldest (const struct lease_book *b, const struct lease **v,
                          size_t k);

/* The holder binding. A holder is an opaque key (berthd's connections);
 * NULL is no holder. Bind lease id to holder (NULL: unbind); -1 when out of
 * memory or the id is not in the book (nothing changed). */
int lease_book_bind (struct lease_book *b, uint64_t id, void *holder,
                     berth_error_t *err);
/* Its holder; NULL when unbound (or not in the book). */
void *lease_book_holder (const struct lease_book *b, uint64_t id);
/* How many leases holder holds (0 for NULL). */
size_t lease_book_held (const struct lease_book *b, const void *holder);
/* One of holder's leases, unbound from it (the most recently bound first),
 * for the caller to end; NULL when it holds none. */
struct lease *lease_book_take (struct lease_book *b, const void *holder);

#endif
