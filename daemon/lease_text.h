/* SPDX-License-Identifier: MIT */
/* A grant's lease object as JSON text, encoded once per grant and spliced
 * into the acquire reply, the granted event and the journal record. It is
 * the object the codec builds (proto_lease_json: same members, same order,
 * same nulls), written straight to text: jansson spent most of a grant
 * building and dumping it (a value per member, and a loop check per
 * container that formats its address). tests/unit/test_lease_text.c holds
 * the two to the same JSON. */
#ifndef BERTHD_LEASE_TEXT_H
#define BERTHD_LEASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "ledger.h"

struct lease_text {
    char *body;                   /* the lease object, without "env" */
    size_t len;
    char *env;                    /* the "env" object; NULL: none */
    size_t envlen;
    char time[40];                /* the grant time as a JSON real */
};

/* From the lease as the codec describes it (its env, if any, goes to
 * t->env). -1 when out of memory or a string is not valid UTF-8. */
int lease_text_build (const struct proto_lease *pl, struct lease_text *t);
void lease_text_free (struct lease_text *t);

/* head, the lease's members (with "env" when asked and there is one), tail,
 * and a newline: a new string, *len its length; NULL when out of memory. */
char *lease_text_line (const struct lease_text *t, const char *head,
                       bool with_env, const char *tail, size_t *len);

/* The codec's "released" event (proto_event_released) as a line; NULL when
 * out of memory or a string is not UTF-8. The _at form takes the time
 * already written (json_real_text), to share it with the journal record. */
char *released_event_line (double time, const char *lease, const char *label,
                           const char *reason, size_t *len);
char *released_event_line_at (const char *time, const char *lease,
                              const char *label, const char *reason,
                              size_t *len);

/* The journal's grant record (what journal.c's restore reads: the op, id,
 * time, shape, layout, detached, expires, owner, peer_pid, peer_start, uid,
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
    int owner, peer_pid, uid;
    uint64_t peer_start;          /* the holder's start time (pidstart.h) */
    uint64_t wait;                /* the wait record it ends; 0: none */
    const char *request;          /* the request's id as JSON text; NULL:
                                     none */
    const struct ledger_lease *held;
};
char *grant_record_line (const struct lease_text *t,
                         const struct grant_record_facts *g, size_t *len);

/* The journal's release record {"op":"release","id":..,"time":..,
 * "reason":..} as a line; time as json_real_text writes it. */
char *release_record_line (uint64_t id, const char *time, const char *reason,
                           size_t *len);

/* The codec's release reply (proto_release_reply) as a line: id is the
 * request's (NULL: null). */
char *release_reply_line (const json_t *id, const char *lease, size_t *len);

/* v as jansson writes a real: 17 significant digits, and a dot or an
 * exponent always, so that it reads back as a real. */
void json_real_text (double v, char *buf, size_t size);

#endif
