/* SPDX-License-Identifier: MIT */
/* reply_fast.h: grant and release replies read from json_scan's tokens.
 * Every check mirrors one of the client-side decoders (codec_client.c,
 * codec_check.c: named at each function); where those would refuse a value, this file declines it, so
 * that the refusal is worded by the jansson path. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"
#include "reply_fast.h"

#define DECLINE 1

static const struct json_scan_token *tok (const struct json_scan *s, int i)
{
    return &s->tokens[i];
}

/* codec_check.c codec_get_name (present and not null): 1 to PROTO_MAX_NAME bytes (a
 * scanned string has no control character). */
static int get_name (const struct json_scan *s, int i, char **out)
{
    if (!json_scan_string_in (s, i, 1, PROTO_MAX_NAME))
        return DECLINE;
    return json_scan_strdup (s, i, false, out) < 0 ? DECLINE : 0;
}

/* codec_check.c codec_get_ids: an array of ids 0..PROTO_MAX_COUNT; an empty one is
 * still allocated, as there. */
static int get_ids (const struct json_scan *s, int i, int **ids, int *count)
{
    int n = tok (s, i)->size;
    if (tok (s, i)->kind != JSON_SCAN_ARRAY || n > PROTO_MAX_COUNT)
        return DECLINE;
    int *a = calloc (n ? (size_t) n : 1, sizeof (*a));
    if (!a)
        return DECLINE;
    for (int k = 0; k < n; k++) {     /* items are scalars, or declined */
        long long v;
        if (json_scan_integer_in (s, i + 1 + k, 0, PROTO_MAX_COUNT, &v)) {
            free (a);
            return DECLINE;
        }
        a[k] = (int) v;
    }
    *ids = a;
    *count = n;
    return 0;
}

/* codec_check.c codec_decode_placement. */
static int get_placement (const struct json_scan *s, int i, struct placement *out)
{
    static const char *const names[] = { "nodes", "cores", "gpus", "gpu_ids" };
    int at[4];
    struct placement p = { 0 };
    if (json_scan_members (s, i, names, 4, at) || at[0] < 0 || at[1] < 0)
        return DECLINE;
    int nodes = at[0], cores = at[1], n = tok (s, nodes)->size;
    if (tok (s, nodes)->kind != JSON_SCAN_ARRAY || n < 1 || n > PROTO_MAX_COUNT
        || tok (s, cores)->kind != JSON_SCAN_ARRAY || tok (s, cores)->size != n)
        return DECLINE;
    if (!(p.nodes = calloc ((size_t) n, sizeof (*p.nodes))))
        return DECLINE;
    int c = cores + 1;
    for (int k = 0; k < n; k++) {
        struct placement_node *pn = &p.nodes[k];
        p.nnodes = k + 1;       /* so that a decline frees this node too */
        if (get_name (s, nodes + 1 + k, &pn->name)     /* names are scalars */
            || get_ids (s, c, &pn->cores, &pn->ncores))
            goto decline;
        c = json_scan_skip (s, c);
    }
    if (json_scan_given (s, at[3]) && get_ids (s, at[3], &p.gpu_ids, &p.ngpu_ids))
        goto decline;
    p.gpus = p.ngpu_ids;
    long long gpus;
    if (json_scan_given (s, at[2])) {
        if (json_scan_integer_in (s, at[2], 0, PROTO_MAX_COUNT, &gpus))
            goto decline;
        p.gpus = (int) gpus;
    }
    *out = p;
    return 0;
decline:
    placement_free (&p);
    return DECLINE;
}

/* codec_check.c codec_get_env_items: an object of strings; the array is allocated even
 * when the object is empty, as there. */
static int get_env_items (const struct json_scan *s, int i, struct env_set_item **items,
                          int *count)
{
    int n = tok (s, i)->size;
    if (tok (s, i)->kind != JSON_SCAN_OBJECT)
        return DECLINE;
    struct env_set_item *a = calloc ((size_t) n + 1, sizeof (*a));
    if (!a)
        return DECLINE;
    int k;
    for (k = 0; k < n; k++) {         /* values are strings, or declined */
        int key = i + 1 + 2 * k;
        if (tok (s, key + 1)->kind != JSON_SCAN_STRING
            || json_scan_strdup (s, key, false, &a[k].name) < 0
            || json_scan_strdup (s, key + 1, false, &a[k].value) < 0)
            break;
    }
    if (k < n) {
        for (int j = 0; j <= k; j++) {
            free (a[j].name);
            free (a[j].value);
        }
        free (a);
        return DECLINE;
    }
    *items = a;
    *count = n;
    return 0;
}

/* codec_check.c codec_get_argv. */
static int get_argv (const struct json_scan *s, int i, struct launch *l)
{
    int n = tok (s, i)->size;
    if (tok (s, i)->kind != JSON_SCAN_ARRAY || n < 1 || n > PROTO_MAX_ARGS)
        return DECLINE;
    if (!(l->argv = calloc ((size_t) n + 1, sizeof (*l->argv))))
        return DECLINE;
    for (int k = 0; k < n; k++) {     /* items are strings, or declined */
        const struct json_scan_token *t = tok (s, i + 1 + k);
        if (t->kind != JSON_SCAN_STRING || (k == 0 && t->end == t->start)
            || json_scan_strdup (s, i + 1 + k, false, &l->argv[k]) < 0)
            return DECLINE;
        l->argc = k + 1;
    }
    return 0;
}

/* codec_check.c codec_decode_launch: argv and env_delta {"unset": [names], "set": {}}. */
static int get_launch (const struct json_scan *s, int argv, int delta, struct launch *out)
{
    static const char *const names[] = { "unset", "set" };
    struct launch l = { 0 };
    int at[2];
    if (json_scan_given (s, argv) && get_argv (s, argv, &l))
        goto decline;
    if (json_scan_given (s, delta)) {
        if (json_scan_members (s, delta, names, 2, at))
            goto decline;
        int unset = at[0], n = json_scan_given (s, unset) ? tok (s, unset)->size : 0;
        if (json_scan_given (s, unset) && tok (s, unset)->kind != JSON_SCAN_ARRAY)
            goto decline;
        if (n && !(l.env_unset = calloc ((size_t) n + 1, sizeof (char *))))
            goto decline;
        for (int k = 0; k < n; k++) {  /* names are scalars, or declined */
            if (get_name (s, unset + 1 + k, &l.env_unset[k]))
                goto decline;
            l.n_unset = k + 1;
        }
        if (json_scan_given (s, at[1])
            && get_env_items (s, at[1], &l.env_set, &l.n_set))
            goto decline;
    }
    *out = l;
    return 0;
decline:
    launch_free (&l);
    return DECLINE;
}

enum {
    M_ID, M_OK, M_LEASE, M_LABEL, M_PLACEMENT, M_MEMORY_CAP, M_BUDGET_MB,
    M_ARGV, M_ENV_DELTA, M_ENV, M_OWNER_PID, M_GRANTED, NMEMBERS
};

static const char *const reply_members[NMEMBERS] = {
    [M_ID] = "id", [M_OK] = "ok", [M_LEASE] = "lease", [M_LABEL] = "label",
    [M_PLACEMENT] = "placement", [M_MEMORY_CAP] = "memory_cap",
    [M_BUDGET_MB] = "budget_mb", [M_ARGV] = "argv", [M_ENV_DELTA] = "env_delta",
    [M_ENV] = "env", [M_OWNER_PID] = "owner_pid", [M_GRANTED] = "granted",
};

/* The reply's members (only those of nmembers), an integer id and "ok":
 * true. */
static int reply_shell (struct json_scan *s, const char *line, size_t len, int nmembers,
                        int *at, struct proto_fast_reply *r)
{
    long long id;
    if (len > PROTO_MAX_REPLY || json_scan_parse (s, line, len)
        || json_scan_members (s, 0, reply_members, nmembers, at)
        || at[M_ID] < 0 || json_scan_integer (s, at[M_ID], &id) < 0
        || at[M_OK] < 0 || tok (s, at[M_OK])->kind != JSON_SCAN_TRUE)
        return DECLINE;
    r->id = id;
    r->ok = true;
    return 0;
}

/* codec_client.c proto_decode_lease. */
int proto_fast_lease_reply (const char *line, size_t len, struct proto_fast_reply *r,
                            struct proto_lease *out)
{
    struct json_scan s;
    struct proto_fast_reply shell;
    int at[NMEMBERS];
    long long v;
    struct proto_lease l;

    if (reply_shell (&s, line, len, NMEMBERS, at, &shell)
        || !json_scan_given (&s, at[M_LEASE]) || !json_scan_given (&s, at[M_PLACEMENT]))
        return DECLINE;
    proto_lease_init (&l);
    if (get_name (&s, at[M_LEASE], &l.id)
        || (json_scan_given (&s, at[M_LABEL]) && get_name (&s, at[M_LABEL], &l.label))
        || get_placement (&s, at[M_PLACEMENT], &l.placement))
        goto decline;
    if (json_scan_given (&s, at[M_MEMORY_CAP])) {
        if (json_scan_integer_in (&s, at[M_MEMORY_CAP], 0, PROTO_MAX_MEMORY_MB, &v))
            goto decline;
        l.memory_cap = v;
    }
    if (json_scan_given (&s, at[M_BUDGET_MB])) {
        if (json_scan_integer_in (&s, at[M_BUDGET_MB], 0, PROTO_MAX_MEMORY_MB, &v))
            goto decline;
        l.budget_mb = v;
    }
    if (get_launch (&s, at[M_ARGV], at[M_ENV_DELTA], &l.launch)
        || (json_scan_given (&s, at[M_ENV])
            && get_env_items (&s, at[M_ENV], &l.env, &l.nenv)))
        goto decline;
    if (json_scan_given (&s, at[M_OWNER_PID])) {
        if (json_scan_integer_in (&s, at[M_OWNER_PID], 1, INT_MAX, &v))
            goto decline;
        l.owner_pid = (int) v;
    }
    if (json_scan_given (&s, at[M_GRANTED])) {
        double g;
        if (json_scan_real (&s, at[M_GRANTED], &g) < 0 || g < 0 || g > 1e12)
            goto decline;
        l.granted = g;
    }
    *r = shell;
    *out = l;
    return 0;
decline:
    proto_lease_free (&l);
    return DECLINE;
}

int proto_fast_release_reply (const char *line, size_t len, struct proto_fast_reply *r)
{
    struct json_scan s;
    struct proto_fast_reply shell;
    int at[M_LEASE + 1];
    if (reply_shell (&s, line, len, M_LEASE + 1, at, &shell) || at[M_LEASE] < 0
        || tok (&s, at[M_LEASE])->kind != JSON_SCAN_STRING)
        return DECLINE;
    *r = shell;
    return 0;
}
