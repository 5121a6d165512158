/* SPDX-License-Identifier: MIT */
/* The journal's records as lines of text (journal_record.c); the reading
 * side of the same format is journal_file.c. */
#ifndef BERTHD_JOURNAL_RECORD_H
#define BERTHD_JOURNAL_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lease_text.h"
#include "text.h"
#include "ledger.h"
#include "step.h"

/* The journal's grant record (what journal.c's restore reads: the op, id,
 * time, shape, layout, detached, expires (and expires_boot with boot_id when
 * known), owner, owner_start when known, peer_pid,
 * peer_start, uid,
 * the lease
 * without its env, which lease_env builds again when asked, and what it
 * holds) as a line, from the lease text and what the journal adds. NULL
 * when out of memory. */
struct grant_record_facts {
    uint64_t id;
    const struct step_shape *shape;
    const char *layout;           /* journal_layout_name */
    bool detached;
    double expires;               /* < 0: null */
    double expires_boot;          /* < 0, or boot_id NULL: not written */
    const char *boot_id;          /* the boot expires_boot is of */
    int owner, peer_pid, uid;
    uint64_t peer_start;          /* the holder's start time (pidstart.h) */
    uint64_t owner_start;         /* the owner's; 0: unknown (not written) */
    uint64_t wait;                /* the wait record it ends; 0: none */
    const char *request;          /* the request's id as JSON text; NULL:
                                     none */
    const struct ledger_lease *held;
    const struct placement *placed;  /* the ids a local step reported (op
                                        placed), kept apart from the
                                        grant's; NULL: none */
};
char *grant_record_line (const struct lease_text *t,
                         const struct grant_record_facts *g, size_t *len);

/* "placed":{"cores":[..],"gpu_ids":[..]}: the ids of node 0 of p, the one
 * node of a local step. The member of a grant record, and (after the id) of
 * a placed record. */
void placed_member_text (struct text_buf *b, const struct placement *p);
/* {"op":"placed","id":..,"time":..,"placed":{..}} as a line. */
char *placed_record_line (uint64_t id, const char *time,
                          const struct placement *p, size_t *len);

/* The journal's wait record {"op":"wait","id":..,"time":..,"peer_pid":..,
 * "peer_start":..,"uid":..,"request":{..}}: a request that waits, by its
 * process's identity, with the acquire request as its client sent it (one
 * JSON object, spliced in as it is; NULL: not written), so that a restart
 * can put it back in its place before its client sends it again. */
char *wait_record_line (uint64_t id, double since, int pid, uint64_t start,
                        int uid, const char *request, size_t *len);

/* The journal's release record {"op":"release","id":..,"time":..,
 * "reason":..} as a line; time as json_real_text writes it. */
char *release_record_line (uint64_t id, const char *time, const char *reason,
                           size_t *len);

#endif
