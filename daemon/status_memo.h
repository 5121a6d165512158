/* SPDX-License-Identifier: MIT */
/* The last large status reply, kept as text for the status requests that
 * follow while nothing has changed: on a job of 10,000 nodes a status
 * costs a tenth of a second or more to build, and many clients polling it
 * (or one sending many requests without reading) must not make everyone
 * else's requests wait behind hundreds of builds. A kept reply is used only
 * while its key (what the daemon's state is) is the same, and for at most
 * STATUS_MEMO_MAX_AGE seconds or twice what it cost to build, whichever is
 * longer: its times (uptime_s, age_s, waited_s) are at most that old, and
 * however many status requests come, berthd spends at most about a third
 * of its time building them. Small replies are never kept. */
#ifndef BERTHD_STATUS_MEMO_H
#define BERTHD_STATUS_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "shared_text.h"

#define STATUS_MEMO_MAX_AGE 0.2
#define STATUS_MEMO_MIN_BYTES (256u << 10)

/* What a status reply shows, in counters that move whenever it would
 * change: the requests served, the ledger, the journal (a client gone ends
 * its leases and waits there), the leases and waiters. The number of
 * connections is not in it: like the times, it may be STATUS_MEMO_MAX_AGE
 * old, so that connections closing do not make each status a new build. */
struct status_key {
    uint64_t changes;             /* requests other than status served */
    uint64_t ledger;              /* ledger_generation */
    off_t journal_bytes;
    unsigned long compactions;
    size_t leases;
    int waiting;
    bool draining;
    double held_since;
    double job_end;
    uint64_t failed;
};

struct status_memo {
    struct status_key key;
    double built;                 /* monotonic: when its build began */
    double fresh_for;             /* seconds from then it may be given */
    struct shared_text *body;     /* the reply after its id: ",..}\n" */
};

/* The reply to request id from the kept text, when key is its key and it
 * is young enough (NULL otherwise, or when out of memory): its head
 * ("{\"id\":" and the id; *len bytes, the caller's to free) and its *tail,
 * the kept text itself, by reference (the caller's to unref), queued
 * after the head: a reply of megabytes given many times is never copied. */
char *status_memo_reply (const struct status_memo *m,
                         const struct status_key *key, const json_t *id,
                         double now, size_t *len, struct shared_text **tail);
/* Keep line, a status reply built with a null id from began to done
 * (monotonic), under key (a small one, or one not of that form, is not
 * kept). */
void status_memo_keep (struct status_memo *m, const struct status_key *key,
                       const char *line, size_t len, double began,
                       double done);
void status_memo_clear (struct status_memo *m);
/* A status reply built with a null id, as the reply to request id; NULL
 * when it is not of that form or out of memory. */
char *status_reply_with_id (const char *line, size_t len, const json_t *id,
                            size_t *out_len);

#endif
