/* SPDX-License-Identifier: MIT */
/* The last large status reply, kept as text (status_memo.h). Pure: the
 * caller gives the key and the time. */
#include <stdlib.h>
#include <string.h>

#include "status_memo.h"

#define NULL_ID_PREFIX "{\"id\":null"

static bool same_key (const struct status_key *a, const struct status_key *b)
{
    return a->changes == b->changes && a->ledger == b->ledger
           && a->journal_bytes == b->journal_bytes
           && a->compactions == b->compactions
           && a->leases == b->leases
           && a->waiting == b->waiting && a->draining == b->draining
           && a->held_since == b->held_since && a->job_end == b->job_end
           && a->failed == b->failed;
}

/* "{\"id\":" id rest: rest is what follows the null id of a reply (n 0:
 * the head alone) */
static char *with_id (const char *rest, size_t n, const json_t *id,
                      size_t *len)
{
    char *idtext = json_dumps (id ? id : json_null (),
                               JSON_COMPACT | JSON_ENCODE_ANY);
    size_t k = idtext ? strlen (idtext) : 0;
    char *line = idtext ? malloc (6 + k + n + 1) : NULL;
    if (line) {
        memcpy (line, "{\"id\":", 6);
        memcpy (line + 6, idtext, k);
        memcpy (line + 6 + k, rest, n);
        line[6 + k + n] = '\0';
        *len = 6 + k + n;
    }
    free (idtext);
    return line;
}

static size_t null_id_end (const char *line, size_t len)
{
    size_t p = sizeof (NULL_ID_PREFIX) - 1;
    return len > p && !strncmp (line, NULL_ID_PREFIX, p) && line[p] == ','
           ? p : 0;
}

char *status_reply_with_id (const char *line, size_t len, const json_t *id,
                            size_t *out_len)
{
    size_t p = null_id_end (line, len);
    return p ? with_id (line + p, len - p, id, out_len) : NULL;
}

char *status_memo_reply (const struct status_memo *m,
                         const struct status_key *key, const json_t *id,
                         double now, size_t *len, struct shared_text **tail)
{
    if (!m->body || !same_key (&m->key, key) || now < m->built
        || now - m->built > m->fresh_for)
        return NULL;
    char *head = with_id ("", 0, id, len);
    if (head)
        *tail = shared_text_ref (m->body);
    return head;
}

void status_memo_keep (struct status_memo *m, const struct status_key *key,
                       const char *line, size_t len, double began,
                       double done)
{
    size_t p = null_id_end (line, len);
    status_memo_clear (m);
    if (len < STATUS_MEMO_MIN_BYTES || !p
        || !(m->body = shared_text_new (line + p, len - p)))
        return;
    m->key = *key;
    m->built = began;
    m->fresh_for = 2 * (done - began) > STATUS_MEMO_MAX_AGE
                   ? 2 * (done - began) : STATUS_MEMO_MAX_AGE;
}

void status_memo_clear (struct status_memo *m)
{
    /* replies still queued hold their own references */
    shared_text_unref (m->body);
    m->body = NULL;
}
