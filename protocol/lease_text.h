/* SPDX-License-Identifier: MIT */
/* A grant's lease object as JSON text, encoded once per grant and spliced
 * into the acquire reply, the granted event (both here) and the journal
 * record (daemon/journal_record.h). It is
 * the object the codec builds (proto_lease_json: same members, same order,
 * same nulls), written straight to text: jansson spent most of a grant
 * building and dumping it (a value per member, and a loop check per
 * container that formats its address). tests/unit/test_lease_text.c holds
 * the two to the same JSON. */
#ifndef BERTH_LEASE_TEXT_H
#define BERTH_LEASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "text.h"

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
/* The same with the step's outcome (outcome.h) when not NULL. */
char *released_event_line_outcome (const char *time, const char *lease,
                                   const char *label, const char *reason,
                                   const struct proto_outcome *outcome,
                                   size_t *len);

/* The codec's release reply (proto_release_reply) as a line: id is the
 * request's (NULL: null). */
char *release_reply_line (const json_t *id, const char *lease, size_t *len);

/* The acquire reply: request is the request's id as JSON text (NULL:
 * null), warning a text to add (NULL: none). NULL when out of memory or
 * the warning is not UTF-8. */
char *grant_reply_line (const struct lease_text *t, const char *request,
                        const char *warning, bool with_env, size_t *len);
/* The "granted" event, at the grant's time. */
char *granted_event_line (const struct lease_text *t, size_t *len);

/* Writing JSON text as jansson writes it, for the other lines built on the
 * lease text (the journal's records): a string escaped as jansson escapes
 * one (\" \\ \b \f \n \r \t, other controls as \u00XX, '/' as is; b->bad
 * when it is not UTF-8), a list of integers, and the end of a line ("}\n":
 * the finished string, or NULL freed when b went bad). */
void json_text_str (struct text_buf *b, const char *v);
void json_text_ids (struct text_buf *b, const int *v, int n);
char *json_text_end_line (struct text_buf *b, size_t *len);

/* v as jansson writes a real: 17 significant digits, and a dot or an
 * exponent always, so that it reads back as a real. */
void json_real_text (double v, char *buf, size_t size);

#endif
