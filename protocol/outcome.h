/* SPDX-License-Identifier: MIT */
/* How a step ended: the "outcome" member of the release request and of the
 * released event (PROTOCOL.md "release"), its one home on the wire. */
#ifndef BERTH_PROTO_OUTCOME_H
#define BERTH_PROTO_OUTCOME_H
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

/* The reasons berth stops a step for, as the wire spells them. */
#define PROTO_STOPPED_REASONS "signal, time-limit, timeout, cancel"

struct proto_outcome {
    int status;            /* as a shell reports it: 0..255, 128+N signal N */
    int signal;            /* the signal that ended it, 0: none */
    char *stopped;         /* NULL, or why berth stopped it */
    char *launch_error;    /* NULL, or why the step never started */
    double wall_s, cpu_s;  /* < 0: not known */
    int64_t max_rss_kb;    /* < 0: not known */
};

void proto_outcome_init (struct proto_outcome *o);
/* The strings and o itself (a malloc'd outcome); NULL is fine. */
void proto_outcome_destroy (struct proto_outcome *o);
/* A malloc'd deep copy; NULL when out of memory or o is NULL. */
struct proto_outcome *proto_outcome_copy (const struct proto_outcome *o);
/* The member's value: NULL when o's values are out of range. */
json_t *proto_outcome_json (const struct proto_outcome *o);
/* v (absent: *out stays NULL) into a malloc'd *out. strict: unknown members
 * are errors (berthd reading a request); else skipped (a client reading a
 * later berthd's event). where and code prefix and classify errors. */
int proto_outcome_decode (const json_t *v, bool strict, const char *where,
                          const char *code, struct proto_outcome **out,
                          berth_error_t *err);
/* A step failed: a status other than 0, stopped, or never started. */
bool proto_outcome_failed (const struct proto_outcome *o);
/* "exit 3", "signal 9 (time-limit)", "not started: ..." into buf. */
void proto_outcome_describe (const struct proto_outcome *o, char *buf,
                             size_t size);
#endif
