/* SPDX-License-Identifier: MIT */
/* The journal's grant and release records written as text (journal_record.h):
 * a grant's record splices in the lease text the reply and the event carry,
 * so that a grant builds its lease's JSON once. journal_file.c reads them. */
#include <stdio.h>
#include <stdlib.h>

#include "journal_record.h"
#include "text.h"

static void put_bool (struct text_buf *b, bool v)
{
    text_buf_puts (b, v ? "true" : "false");
}

char *grant_record_line (const struct lease_text *t,
                         const struct grant_record_facts *g, size_t *len)
{
    struct text_buf b = { 0 };
    const struct step_shape *s = g->shape;
    if (!t->body || t->len < 2 || !g->layout || !g->held)
        return NULL;
    text_buf_puts (&b, "{\"op\":\"grant\",\"id\":");
    text_buf_int (&b, (long long) g->id);
    text_buf_puts (&b, ",\"time\":");
    text_buf_puts (&b, t->time);
    text_buf_puts (&b, ",\"shape\":{\"mpi\":");
    put_bool (&b, s->mpi);
    text_buf_puts (&b, ",\"ntasks\":");
    text_buf_int (&b, s->ntasks);
    text_buf_puts (&b, ",\"cpus_per_task\":");
    text_buf_int (&b, s->cpus_per_task);
    text_buf_puts (&b, ",\"cores\":");
    text_buf_int (&b, s->cores);
    text_buf_puts (&b, ",\"gpus\":");
    text_buf_int (&b, s->gpus);
    text_buf_puts (&b, ",\"memory\":");
    text_buf_int (&b, (long long) s->memory);
    text_buf_puts (&b, ",\"budget\":");
    text_buf_int (&b, (long long) s->budget);
    text_buf_puts (&b, ",\"may_span\":");
    put_bool (&b, s->may_span);
    text_buf_puts (&b, ",\"local\":");
    put_bool (&b, s->local);
    text_buf_puts (&b, "},\"layout\":");
    json_text_str (&b, g->layout);
    text_buf_puts (&b, ",\"detached\":");
    put_bool (&b, g->detached);
    text_buf_puts (&b, ",\"expires\":");
    if (g->expires >= 0) {
        char x[40];
        json_real_text (g->expires, x, sizeof (x));
        text_buf_puts (&b, x);
    }
    else
        text_buf_puts (&b, "null");
    if (g->expires >= 0 && g->expires_boot >= 0 && g->boot_id && *g->boot_id) {
        char x[40];
        json_real_text (g->expires_boot, x, sizeof (x));
        text_buf_puts (&b, ",\"expires_boot\":");
        text_buf_puts (&b, x);
        text_buf_puts (&b, ",\"boot_id\":");
        json_text_str (&b, g->boot_id);
    }
    text_buf_puts (&b, ",\"owner\":");
    text_buf_int (&b, g->owner);
    if (g->owner_start) {
        text_buf_puts (&b, ",\"owner_start\":");
        text_buf_int (&b, (long long) g->owner_start);
    }
    text_buf_puts (&b, ",\"peer_pid\":");
    text_buf_int (&b, g->peer_pid);
    text_buf_puts (&b, ",\"peer_start\":");
    text_buf_int (&b, (long long) g->peer_start);
    text_buf_puts (&b, ",\"uid\":");
    text_buf_int (&b, g->uid);
    if (g->wait) {
        text_buf_puts (&b, ",\"wait\":");
        text_buf_int (&b, (long long) g->wait);
    }
    if (g->request) {
        text_buf_puts (&b, ",\"request\":");
        text_buf_puts (&b, g->request);
    }
    text_buf_puts (&b, ",\"lease\":");
    /* the lease's members; not its env, which follows from them */
    text_buf_put (&b, t->body, t->len - 1);
    text_buf_puts (&b, "},\"held\":[");
    for (int i = 0; i < g->held->nnodes; i++) {
        const struct ledger_lease_node *ln = &g->held->nodes[i];
        text_buf_puts (&b, i ? ",{\"node\":" : "{\"node\":");
        text_buf_int (&b, ln->node);
        text_buf_puts (&b, ",\"gpus\":");
        json_text_ids (&b, ln->gpus, ln->ngpus);
        text_buf_puts (&b, ",\"memory\":");
        text_buf_int (&b, (long long) ln->memory);
        text_buf_put (&b, "}", 1);
    }
    text_buf_put (&b, "]", 1);
    if (g->placed)
        placed_member_text (&b, g->placed);
    return json_text_end_line (&b, len);
}

void placed_member_text (struct text_buf *b, const struct placement *p)
{
    text_buf_puts (b, ",\"placed\":{\"cores\":");
    json_text_ids (b, p->nodes[0].cores, p->nodes[0].ncores);
    text_buf_puts (b, ",\"gpu_ids\":");
    json_text_ids (b, p->gpu_ids, p->ngpu_ids);
    text_buf_put (b, "}", 1);
}

char *placed_record_line (uint64_t id, const char *time,
                          const struct placement *p, size_t *len)
{
    struct text_buf b = { 0 };
    if (!time || !p || p->nnodes < 1)
        return NULL;
    text_buf_puts (&b, "{\"op\":\"placed\",\"id\":");
    text_buf_int (&b, (long long) id);
    text_buf_puts (&b, ",\"time\":");
    text_buf_puts (&b, time);
    placed_member_text (&b, p);
    return json_text_end_line (&b, len);
}

char *wait_record_line (uint64_t id, double since, int pid, uint64_t start,
                        int uid, const char *request, size_t *len)
{
    struct text_buf b = { 0 };
    char x[40];
    json_real_text (since, x, sizeof (x));
    text_buf_puts (&b, "{\"op\":\"wait\",\"id\":");
    text_buf_int (&b, (long long) id);
    text_buf_puts (&b, ",\"time\":");
    text_buf_puts (&b, x);
    text_buf_puts (&b, ",\"peer_pid\":");
    text_buf_int (&b, pid);
    text_buf_puts (&b, ",\"peer_start\":");
    text_buf_int (&b, (long long) start);
    text_buf_puts (&b, ",\"uid\":");
    text_buf_int (&b, uid);
    if (request) {
        text_buf_puts (&b, ",\"request\":");
        text_buf_puts (&b, request);
    }
    return json_text_end_line (&b, len);
}

char *release_record_line (uint64_t id, const char *time, const char *reason,
                           size_t *len)
{
    struct text_buf b = { 0 };
    if (!time || !reason)
        return NULL;
    text_buf_puts (&b, "{\"op\":\"release\",\"id\":");
    text_buf_int (&b, (long long) id);
    text_buf_puts (&b, ",\"time\":");
    text_buf_puts (&b, time);
    text_buf_puts (&b, ",\"reason\":");
    json_text_str (&b, reason);
    return json_text_end_line (&b, len);
}
