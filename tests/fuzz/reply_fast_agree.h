/* SPDX-License-Identifier: MIT */
/* Shared by test_reply_fast and fuzz_reply: does the fast lane read a reply
 * line exactly as the jansson path does (proto_parse_message,
 * proto_reply_status, an integer id, proto_decode_lease)? */
#ifndef BERTH_REPLY_FAST_AGREE_H
#define BERTH_REPLY_FAST_AGREE_H

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "codec.h"
#include "reply_fast.h"

static bool agree_str (const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp (a, b));
}

static bool agree_ids (const int *a, int na, const int *b, int nb)
{
    if (na != nb || !a != !b)
        return false;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

static bool agree_items (const struct env_set_item *a, int na,
                         const struct env_set_item *b, int nb)
{
    if (na != nb || !a != !b)
        return false;
    for (int i = 0; i < na; i++)
        if (!agree_str (a[i].name, b[i].name) || !agree_str (a[i].value, b[i].value))
            return false;
    return true;
}

static bool agree_strv (char *const *a, int na, char *const *b, int nb)
{
    if (na != nb || !a != !b)
        return false;
    for (int i = 0; i < na; i++)
        if (!agree_str (a[i], b[i]))
            return false;
    return !a || (!a[na] && !b[nb]);
}

/* The first field in which a and b differ, or NULL when none does. */
static const char *lease_difference (const struct proto_lease *a, const struct proto_lease *b)
{
    const struct placement *p = &a->placement, *q = &b->placement;
    if (!agree_str (a->id, b->id))
        return "lease";
    if (!agree_str (a->label, b->label))
        return "label";
    if (p->nnodes != q->nnodes || !p->nodes != !q->nodes)
        return "placement.nodes";
    for (int i = 0; i < p->nnodes; i++) {
        if (!agree_str (p->nodes[i].name, q->nodes[i].name))
            return "placement.nodes[i]";
        if (!agree_ids (p->nodes[i].cores, p->nodes[i].ncores, q->nodes[i].cores,
                        q->nodes[i].ncores))
            return "placement.cores[i]";
    }
    if (p->gpus != q->gpus)
        return "placement.gpus";
    if (!agree_ids (p->gpu_ids, p->ngpu_ids, q->gpu_ids, q->ngpu_ids))
        return "placement.gpu_ids";
    if (a->memory_cap != b->memory_cap)
        return "memory_cap";
    if (a->budget_mb != b->budget_mb)
        return "budget_mb";
    if (!agree_strv (a->launch.argv, a->launch.argc, b->launch.argv, b->launch.argc))
        return "argv";
    if (!agree_strv (a->launch.env_unset, a->launch.n_unset, b->launch.env_unset,
                     b->launch.n_unset))
        return "env_delta.unset";
    if (!agree_items (a->launch.env_set, a->launch.n_set, b->launch.env_set,
                      b->launch.n_set))
        return "env_delta.set";
    if (!agree_items (a->env, a->nenv, b->env, b->nenv))
        return "env";
    if (a->owner_pid != b->owner_pid)
        return "owner_pid";
    if (!(a->granted == b->granted))
        return "granted";
    return NULL;
}

/* The jansson path of a reply: 0 with *id (and *lease when lease is not
 * NULL) for a successful reply with an integer id; -1 otherwise. */
static int reply_by_jansson (const char *line, size_t len, long long *id,
                             struct proto_lease *lease)
{
    json_t *msg = NULL, *v;
    berth_error_t e;
    int rc = -1;
    if (proto_parse_message (line, len, &msg, &e) == 0 && !proto_is_event (msg)
        && proto_reply_status (msg, &e) == 0
        && json_is_integer (v = json_object_get (msg, "id"))
        && (!lease || proto_decode_lease (msg, lease, &e) == 0)) {
        *id = json_integer_value (v);
        rc = 0;
    }
    json_decref (msg);
    return rc;
}

/* 0: both lanes declined or refused what the fast lane declined; 1: the
 * fast lane decoded it and agrees; -1 with why filled: they differ. */
static int reply_fast_agrees (const char *line, size_t len, char *why, size_t whylen)
{
    struct proto_fast_reply r = { 0 };
    struct proto_lease fast, slow;
    long long id;
    int decoded = 0;

    proto_lease_init (&fast);
    if (proto_fast_lease_reply (line, len, &r, &fast) == 0) {
        decoded = 1;
        proto_lease_init (&slow);
        const char *diff = NULL;
        if (reply_by_jansson (line, len, &id, &slow) < 0)
            diff = "the jansson path refuses it";
        else if (!r.ok || r.id != id)
            diff = "id";
        else
            diff = lease_difference (&fast, &slow);
        proto_lease_free (&fast);
        proto_lease_free (&slow);
        if (diff) {
            snprintf (why, whylen, "lease reply: %s", diff);
            return -1;
        }
    }
    if (proto_fast_release_reply (line, len, &r) == 0) {
        decoded = 1;
        json_t *msg = NULL;
        berth_error_t e;
        const char *diff = NULL;
        if (reply_by_jansson (line, len, &id, NULL) < 0)
            diff = "the jansson path refuses it";
        else if (!r.ok || r.id != id)
            diff = "id";
        else if (proto_parse_message (line, len, &msg, &e) < 0
                 || json_object_size (msg) != 3
                 || !json_is_string (json_object_get (msg, "lease")))
            diff = "it is not {id, ok, lease}";
        json_decref (msg);
        if (diff) {
            snprintf (why, whylen, "release reply: %s", diff);
            return -1;
        }
    }
    return decoded;
}

#endif
