/* SPDX-License-Identifier: MIT */
/* Lease watching: what ends a lease by itself, without a request. A
 * detached lease's ttl and owner process; after a restart, the process
 * that held an orphaned connection-bound lease, or where it cannot be
 * watched, the grace its holder has to reclaim it. The watch keeps its own
 * state per lease id (timers, pidfds, the 1 s poll where pidfd_open is
 * missing) and tells its creator, through the callback, when a lease has
 * ended; ending it (the ledger, the journal, the book) is the creator's. */
#ifndef BERTHD_LEASE_WATCH_H
#define BERTHD_LEASE_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

/* Lease id ended for reason: "expired" (its ttl), "owner_exited" (a
 * detached lease's owner process), "disconnected" (the process holding a
 * connection-bound lease: its owner, or after a restart its holder, gone;
 * or the reclaim grace over). The callback normally ends the lease and
 * calls lease_watch_stop; it may stop any lease's watches. */
typedef void lease_ended_fn (uint64_t id, const char *reason, void *arg);

struct lease_watch;

/* NULL when out of memory. */
struct lease_watch *lease_watch_create (struct event_base *base,
                                        lease_ended_fn *ended, void *arg);
/* Every lease's watches with it. */
void lease_watch_destroy (struct lease_watch *w);

/* End lease id at wall-clock time expires (< 0: no ttl, nothing done).
 * 0, or -1 when out of memory (nothing armed). */
int lease_watch_ttl (struct lease_watch *w, uint64_t id, double expires);
/* End lease id when process pid exits (pid <= 0: nothing to watch), as
 * "owner_exited" for a detached lease, else "disconnected". start: the
 * process's start time (pidstart.h) when known, else 0; a pid that now
 * names a process started at another time is gone. 0: watched; 1: pid is
 * already gone; -1: out of resources (nothing watched). */
int lease_watch_pid (struct lease_watch *w, uint64_t id, pid_t pid,
                     uint64_t start, bool detached);
/* After a restart: hold an orphaned connection-bound lease for as long as
 * its holder (pid, and start when known: pidstart.h) lives. 0: watched; 1:
 * the holder is gone (or its pid now names another process); 2: it cannot
 * be watched (no pid: another pid namespace's peer; no pidfd and no /proc
 * entry); -1: out of resources (nothing watched). */
int lease_watch_holder (struct lease_watch *w, uint64_t id, pid_t pid,
                        uint64_t start);
/* End lease id as "disconnected" in seconds unless stopped before (a
 * holder that cannot be watched reclaims it in that time). 0, or -1 when
 * out of memory (nothing armed). */
int lease_watch_grace (struct lease_watch *w, uint64_t id, double seconds);
/* Stop only lease id's grace (its holder took it back; a detached lease
 * keeps its ttl and owner watches). */
void lease_watch_end_grace (struct lease_watch *w, uint64_t id);
/* Whether lease id waits out a reclaim grace. */
bool lease_watch_in_grace (const struct lease_watch *w, uint64_t id);
/* Stop every watch of lease id (it ended, or was reclaimed). */
void lease_watch_stop (struct lease_watch *w, uint64_t id);

/* The process is gone (kill says ESRCH). */
bool process_gone (pid_t pid);

#endif
