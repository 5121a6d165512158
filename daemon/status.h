/* SPDX-License-Identifier: MIT */
/* What status and resources report (status.c): every figure `berth status`
 * prints, read from the daemon's parts. */
#ifndef BERTHD_STATUS_H
#define BERTHD_STATUS_H

#include <jansson.h>
#include <sys/types.h>

struct berthd;
struct lease;

json_t *status_allocation (struct berthd *d);
json_t *status_leases (struct berthd *d);
json_t *status_queue (struct berthd *d);
/* A person's view ("brief": k): the allocation's members and sums with its
 * k busiest nodes (ledger_busiest), the k oldest leases, the first k
 * entries of the queue. Each costs k, not the job. */
json_t *status_allocation_brief (struct berthd *d, int k);
json_t *status_leases_oldest (struct berthd *d, int k);
json_t *status_queue_head (struct berthd *d, int k);
/* The queue entries of pid's requests only (a progress poll: costs a walk
 * of the waiters, not the queue's JSON), by position. */
json_t *status_queue_of_pid (struct berthd *d, pid_t pid);
json_t *status_daemon (struct berthd *d);
struct proto_outcome;
/* A step that failed, kept for status's "failed" (the latest few). */
void status_note_failure (struct berthd *d, const char *lease, const char *label,
                          double time, const struct proto_outcome *o);
void status_failures_free (struct berthd *d);
json_t *status_failed (struct berthd *d);
/* What the status shows now, as the memo's key (status_memo.h). */
void status_key_of (struct berthd *d, struct status_key *key);
json_t *resources_lease (struct berthd *d, const struct lease *ls);
json_t *resources_allocation (struct berthd *d);

#endif
