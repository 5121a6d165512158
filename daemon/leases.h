/* SPDX-License-Identifier: MIT */
/* The lease lifecycle (leases.c) on the book (lease_book.h), the watch
 * (lease_watch.h) and the journal (journal.h): a grant made a lease with its
 * launch, environment, journal record and event; the ways a lease ends; an
 * orphaned lease rebound to the client that reclaims it. */
#ifndef BERTHD_LEASES_H
#define BERTHD_LEASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct berthd;
struct client;
struct lease;
struct waiter;

/* A local step that the scheduler places (SCHEDULER mode): launched
 * through srun on berthd's node instead of bound by its client. */
bool lease_local_launched (const struct berthd *d, const struct lease *ls);
/* Record the ledger's grant lease_id for w: its lease, launch, journal
 * record and event; the reply line in *reply (NULL when it cannot be
 * encoded). A connection-bound lease is bound to w's client; a restored
 * waiter's (no client) is left for its process to take back. -1: refused
 * (the ledger's grant is given back). */
int lease_grant (struct berthd *d, struct waiter *w, uint64_t lease_id,
                 char **reply, size_t *reply_len, berth_error_t *err);
void lease_end (struct berthd *d, struct lease *ls, const char *reason);
/* The same, with how the step ended as its holder says (NULL: not said):
 * it goes into the released event and, when it failed, into status's
 * recently failed steps. */
void lease_end_outcome (struct berthd *d, struct lease *ls, const char *reason,
                        const struct proto_outcome *outcome);
void lease_end_all (struct berthd *d, const char *reason);
/* Its client went away: its connection-bound leases end. */
void leases_client_gone (struct berthd *d, struct client *cl);
/* An orphaned lease bound to cl from now on (it ends when cl goes); -1
 * when out of memory (nothing changed). */
int lease_rebind (struct berthd *d, struct client *cl, struct lease *ls,
                  berth_error_t *err);
/* Build ls's BERTH_* variables unless it has them; -1 when out of memory
 * (ls unchanged). */
int lease_env (struct berthd *d, struct lease *ls, berth_error_t *err);
/* The book, the watch and the journal (before journal_open_ledger); freed
 * by leases_close. */
int leases_init (struct berthd *d, berth_error_t *err);
void leases_close (struct berthd *d);

#endif
