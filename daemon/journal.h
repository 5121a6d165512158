/* SPDX-License-Identifier: MIT */
/* The journal as an object: grants and releases, and the requests that
 * wait, recorded before anyone hears of them; restored after a crash,
 * compacted while running (journal.c says how). It builds the ledgers as
 * the journal left them, then restores the lease records into the book and
 * arms their watches; from then on it reads the ledger and the book (both
 * the caller's, and they must outlive it) to compact. It knows no
 * connection: a waiting request is recorded by its process's identity. */
#ifndef BERTHD_JOURNAL_H
#define BERTHD_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "allocation.h"
#include "error.h"
#include "lease_book.h"
#include "lease_text.h"
#include "lease_watch.h"
#include "ledger.h"

/* A request that waits, as the journal records it: by its process's
 * identity, with the acquire request as its client sent it, so that after a
 * restart the queue puts it back in its place (reserving as any waiter's
 * does) until that process sends it again. */
struct place {
    uint64_t wait_id;
    double since;                 /* wall clock */
    pid_t pid;
    uint64_t start;               /* 0: unknown */
    uid_t uid;
    char *request;                /* the request line's JSON (owned) */
};

struct journal_config {
    const char *state_dir;        /* the journal is journal.jsonl there */
    int max_records;              /* compact past this many records (and
                                     4x the live leases) */
    double reclaim_grace;         /* seconds a restored lease whose holder
                                     cannot be watched, and a place, wait */
    bool discard;                 /* set another allocation's journal aside
                                     even while holders of its leases run
                                     (--discard-journal) */
};

/* What status shows of it. */
struct journal_stats {
    const char *path;
    off_t bytes;                  /* of whole records */
    int records;
    unsigned long compactions;
    bool dirty;                   /* a record could not be written */
};

struct journal;

/* Nothing opened yet. ended: a restored lease that is over already (its
 * ttl, owner or holder gone), for the caller to end once every lease is
 * back. NULL when out of memory. */
struct journal *journal_create (struct event_base *base,
                                const struct journal_config *cfg,
                                lease_ended_fn *ended, void *arg);
/* Closes the file; the ledger and the book stay the caller's. */
void journal_destroy (struct journal *j);

/* Read the journal and build the ledgers (*ledger, *empty: the caller's to
 * destroy) as it left them, or set it aside and start a fresh one. On
 * failure both are NULL and nothing is built. */
int journal_open_ledger (struct journal *j, const struct allocation *a,
                         struct ledger **ledger, struct ledger **empty,
                         berth_error_t *err);
/* Once the event loop and the queue exist: the lease records into book,
 * watched by watch, and the places of the requests that waited. */
int journal_restore_leases (struct journal *j, struct lease_book *book,
                            struct lease_watch *watch, berth_error_t *err);

/* Fails (nothing recorded) when the grant cannot be written, with code
 * JOURNAL_ERR_NO_SPACE when the disk is full (room may come back: the
 * queue holds its grants until then); wait (0: none) is the request's wait
 * record, which the grant ends. request: its
 * id as JSON text, or NULL for ls->request. */
int journal_grant (struct journal *j, const struct lease *ls,
                   const struct lease_text *lt, uint64_t wait,
                   const char *request, berth_error_t *err);
/* A request that waits in the queue, recorded under a new wait id (0 when
 * it could not be: it then only loses its place in a restart); and one
 * that left the queue ungranted (wait_id 0: nothing). */
uint64_t journal_wait (struct journal *j, double since, pid_t pid,
                       uint64_t start, uid_t uid, const char *request,
                       size_t request_len);
void journal_unwait (struct journal *j, uint64_t wait_id);
/* The requests that waited when berthd went away and still may (their
 * processes live), restored by journal_restore_leases in wait id order: each
 * waits again under its wait id (journal_unwait ends it). Valid until
 * journal_forget_restored, which the queue calls once it has them. */
const struct place *journal_restored_places (const struct journal *j,
                                             size_t *n);
void journal_forget_restored (struct journal *j);
/* Fails when the release could not be recorded (the journal is then
 * rewritten before the next grant). time: the release's wall clock as
 * json_real_text writes it. */
int journal_release (struct journal *j, uint64_t id, const char *time,
                     const char *reason, berth_error_t *err);
/* A restored lease reclaimed by another process than the one recorded: its
 * new holder, for the next restart. */
int journal_reclaim (struct journal *j, const struct lease *ls,
                     berth_error_t *err);
/* The ids a local step reported (op placed) for lease ls, p, recorded
 * apart from its grant (for status after a restart; never fed to the
 * ledger). Fails when they could not be written (the next compaction writes
 * them, once ls holds them). */
int journal_placed (struct journal *j, const struct lease *ls,
                    const struct placement *p, berth_error_t *err);
void journal_stats (const struct journal *j, struct journal_stats *out);
/* Keep room for a compaction beside the journal (journal.reserve), if it
 * can be had now; a shortfall is logged once. */
void journal_keep_reserve (struct journal *j);

#endif
