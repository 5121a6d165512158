/* SPDX-License-Identifier: MIT */
/* libberth: leases, launches and events as berthd describes them (decoded
 * by the codec), and their accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libberth_private.h"

/* ---- the BERTH_* variables --------------------------------------------- */

/* The same figures berthd sends with "env" (berth(1), ENVIRONMENT). */
int lease_derive_env (struct proto_lease *l, berth_error_t *err)
{
    long long mem = l->memory_cap >= 0 ? (long long) l->memory_cap
                  : l->budget_mb >= 0 ? (long long) l->budget_mb : -1;
    if (render_lease_env (&l->placement, l->id, mem, NULL, &l->env, &l->nenv) < 0)
        return errprintf_code (err, BERTH_ERR_SYSTEM, "out of memory");
    return 0;
}

/* ---- leases ------------------------------------------------------------ */

berth_lease_t *lease_from_json (json_t *o, berth_client_error_t *err)
{
    berth_error_t e = { 0 };
    berth_lease_t *l = calloc (1, sizeof (*l));
    if (!l) {
        client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
        return NULL;
    }
    if (proto_decode_lease (o, &l->l, &e) < 0) {
        free (l);
        client_error (err, &e, BERTH_ERR_PROTOCOL);
        return NULL;
    }
    l->launch.l = l->l.launch;
    memset (&l->l.launch, 0, sizeof (l->l.launch));
    /* Shared, not copied: nothing changes a message once it is decoded. */
    l->json = json_incref (o);
    return l;
}

berth_lease_t *lease_from_fast (struct proto_lease *decoded, char *line, size_t len,
                                berth_client_error_t *err)
{
    berth_lease_t *l = calloc (1, sizeof (*l));
    if (!l) {
        proto_lease_free (decoded);
        free (line);
        client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
        return NULL;
    }
    l->l = *decoded;
    proto_lease_init (decoded);
    l->launch.l = l->l.launch;
    memset (&l->l.launch, 0, sizeof (l->l.launch));
    l->line = line;
    l->linelen = len;
    return l;
}

static void lease_env_free (struct lease_env *d)
{
    for (int i = 0; d && i < d->n; i++) {
        free (d->items[i].name);
        free (d->items[i].value);
    }
    if (d)
        free (d->items);
    free (d);
}

void berth_lease_free (berth_lease_t *l)
{
    if (!l)
        return;
    proto_lease_free (&l->l);
    launch_free (&l->launch.l);
    json_decref (l->json);
    free (l->line);
    lease_env_free (atomic_load_explicit (&l->derived, memory_order_acquire));
    free (l);
}

const char *berth_lease_id (const berth_lease_t *l)
{
    return l ? l->l.id : NULL;
}

const char *berth_lease_label (const berth_lease_t *l)
{
    return l ? l->l.label : NULL;
}

int berth_lease_nnodes (const berth_lease_t *l)
{
    return l ? l->l.placement.nnodes : 0;
}

const char *berth_lease_node (const berth_lease_t *l, int i)
{
    return l && i >= 0 && i < l->l.placement.nnodes ? l->l.placement.nodes[i].name : NULL;
}

const int *berth_lease_cores (const berth_lease_t *l, int i, int *n)
{
    if (!l || i < 0 || i >= l->l.placement.nnodes) {
        if (n)
            *n = 0;
        return NULL;
    }
    if (n)
        *n = l->l.placement.nodes[i].ncores;
    return l->l.placement.nodes[i].cores;
}

int berth_lease_gpus (const berth_lease_t *l)
{
    return l ? l->l.placement.gpus : 0;
}

const int *berth_lease_gpu_ids (const berth_lease_t *l, int *n)
{
    bool known = l && (l->l.placement.gpu_ids || l->l.placement.gpus == 0);
    if (n)
        *n = known ? l->l.placement.ngpu_ids : 0;
    /* an empty list is known too: hand out a valid pointer for it */
    static const int none[1] = { 0 };
    return !known ? NULL : l->l.placement.gpu_ids ? l->l.placement.gpu_ids : none;
}

long long berth_lease_memory_cap (const berth_lease_t *l)
{
    return l ? l->l.memory_cap : -1;
}

long long berth_lease_budget_mb (const berth_lease_t *l)
{
    return l ? l->l.budget_mb : -1;
}

int berth_lease_owner_pid (const berth_lease_t *l)
{
    return l ? l->l.owner_pid : 0;
}

double berth_lease_granted (const berth_lease_t *l)
{
    return l ? l->l.granted : -1;
}

const berth_launch_t *berth_lease_launch (const berth_lease_t *l)
{
    return l ? &l->launch : NULL;
}

/* The variables: berthd's, else those derived from the placement, once
 * (NULL only when memory ran out deriving them: then the lease shows none). */
static const struct lease_env *lease_env (const berth_lease_t *l, struct lease_env *sent)
{
    if (l->l.env) {
        sent->items = l->l.env;
        sent->n = l->l.nenv;
        return sent;
    }
    berth_lease_t *m = (berth_lease_t *) l;    /* a cache, not the lease's state */
    struct lease_env *d = atomic_load_explicit (&m->derived, memory_order_acquire);
    if (d)
        return d;
    struct proto_lease shape = l->l;   /* read-only view: env starts empty */
    berth_error_t e;
    shape.env = NULL;
    shape.nenv = 0;
    if (!(d = calloc (1, sizeof (*d))))
        return NULL;
    int rc = lease_derive_env (&shape, &e);
    d->items = shape.env;
    d->n = shape.nenv;
    if (rc < 0) {
        lease_env_free (d);
        return NULL;
    }
    struct lease_env *none = NULL;
    if (!atomic_compare_exchange_strong_explicit (&m->derived, &none, d,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
        lease_env_free (d);       /* another thread derived them first */
        d = none;
    }
    return d;
}

int berth_lease_nenv (const berth_lease_t *l)
{
    struct lease_env sent;
    const struct lease_env *v = l ? lease_env (l, &sent) : NULL;
    return v ? v->n : 0;
}

const char *berth_lease_env_name (const berth_lease_t *l, int i)
{
    struct lease_env sent;
    const struct lease_env *v = l ? lease_env (l, &sent) : NULL;
    return v && i >= 0 && i < v->n ? v->items[i].name : NULL;
}

const char *berth_lease_env_value (const berth_lease_t *l, int i)
{
    struct lease_env sent;
    const struct lease_env *v = l ? lease_env (l, &sent) : NULL;
    return v && i >= 0 && i < v->n ? v->items[i].value : NULL;
}

char *berth_lease_json (const berth_lease_t *l)
{
    if (!l)
        return NULL;
    if (l->json)
        return json_dumps (l->json, JSON_COMPACT);
    /* Read the reply as the jansson path would have, the same members in
     * the same order, and left unchanged (no cache: the lease is const). */
    json_error_t je;
    json_t *o = json_loadb (l->line, l->linelen, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        return NULL;
    json_object_del (o, "id");
    json_object_del (o, "ok");
    char *s = json_dumps (o, JSON_COMPACT);
    json_decref (o);
    return s;
}

const char *berth_lease_warning (const berth_lease_t *l)
{
    /* The fast lane declines a reply with a warning: a line it read has none. */
    return l && l->json ? json_string_value (json_object_get (l->json, "warning")) : NULL;
}

/* ---- launches ---------------------------------------------------------- */

const char *const *berth_launch_argv (const berth_launch_t *l)
{
    return l ? (const char *const *) l->l.argv : NULL;
}

int berth_launch_nunset (const berth_launch_t *l)
{
    return l ? l->l.n_unset : 0;
}

const char *berth_launch_unset (const berth_launch_t *l, int i)
{
    return l && i >= 0 && i < l->l.n_unset ? l->l.env_unset[i] : NULL;
}

int berth_launch_nset (const berth_launch_t *l)
{
    return l ? l->l.n_set : 0;
}

const char *berth_launch_set_name (const berth_launch_t *l, int i)
{
    return l && i >= 0 && i < l->l.n_set ? l->l.env_set[i].name : NULL;
}

const char *berth_launch_set_value (const berth_launch_t *l, int i)
{
    return l && i >= 0 && i < l->l.n_set ? l->l.env_set[i].value : NULL;
}

int berth_launch_apply_env (const berth_launch_t *l, berth_client_error_t *err)
{
    if (!l)
        return client_errorf (err, BERTH_ERR_USAGE, "berth_launch_apply_env: no launch");
    for (int i = 0; i < l->l.n_unset; i++)
        if (unsetenv (l->l.env_unset[i]) < 0)
            return client_errorf (err, BERTH_ERR_USAGE, "cannot unset '%s': not a "
                                  "variable name", l->l.env_unset[i]);
    for (int i = 0; i < l->l.n_set; i++)
        if (setenv (l->l.env_set[i].name, l->l.env_set[i].value, 1) < 0)
            return client_errorf (err, BERTH_ERR_USAGE, "cannot set '%s': not a "
                                  "variable name", l->l.env_set[i].name);
    return 0;
}

void berth_launch_free (berth_launch_t *l)
{
    if (!l)
        return;
    launch_free (&l->l);
    free (l);
}

/* ---- events ------------------------------------------------------------ */

static const char *const event_names[] = {
    [BERTH_EVENT_GRANTED] = "granted", [BERTH_EVENT_WAITED] = "waited",
    [BERTH_EVENT_RELEASED] = "released", [BERTH_EVENT_REFUSED] = "refused",
    [BERTH_EVENT_ALLOCATION] = "allocation",
};

berth_event_t *event_from_json (json_t *o, berth_client_error_t *err)
{
    berth_error_t e = { 0 };
    berth_event_t *ev = calloc (1, sizeof (*ev));
    if (!ev) {
        client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
        return NULL;
    }
    if (proto_decode_event (o, &ev->ev, &e) < 0) {
        free (ev);
        client_error (err, &e, BERTH_ERR_PROTOCOL);
        return NULL;
    }
    if (ev->ev.kind == PROTO_EV_GRANTED && !(ev->lease = lease_from_json (o, err))) {
        berth_event_free (ev);
        return NULL;
    }
    ev->json = json_incref (o);
    return ev;
}

void berth_event_free (berth_event_t *ev)
{
    if (!ev)
        return;
    proto_event_free (&ev->ev);
    berth_lease_free (ev->lease);
    json_decref (ev->json);
    free (ev);
}

enum berth_event_kind berth_event_kind (const berth_event_t *ev)
{
    switch (ev->ev.kind) {
    case PROTO_EV_GRANTED:
        return BERTH_EVENT_GRANTED;
    case PROTO_EV_WAITED:
        return BERTH_EVENT_WAITED;
    case PROTO_EV_RELEASED:
        return BERTH_EVENT_RELEASED;
    case PROTO_EV_ALLOCATION:
        return BERTH_EVENT_ALLOCATION;
    case PROTO_EV_REFUSED:
        break;
    }
    return BERTH_EVENT_REFUSED;
}

const char *berth_event_name (const berth_event_t *ev)
{
    return ev ? event_names[berth_event_kind (ev)] : NULL;
}

double berth_event_time (const berth_event_t *ev)
{
    return ev ? ev->ev.time : 0;
}

const berth_lease_t *berth_event_lease (const berth_event_t *ev)
{
    return ev ? ev->lease : NULL;
}

const char *berth_event_lease_id (const berth_event_t *ev)
{
    return ev ? ev->ev.lease.id : NULL;
}

const char *berth_event_label (const berth_event_t *ev)
{
    if (!ev)
        return NULL;
    return ev->ev.kind == PROTO_EV_GRANTED || ev->ev.kind == PROTO_EV_RELEASED
               ? ev->ev.lease.label : ev->ev.label;
}

int berth_event_position (const berth_event_t *ev)
{
    return ev && ev->ev.kind == PROTO_EV_WAITED ? ev->ev.position : 0;
}

const char *berth_event_why (const berth_event_t *ev)
{
    return ev ? ev->ev.why : NULL;
}

const char *berth_event_error_code (const berth_event_t *ev)
{
    return ev && ev->ev.kind == PROTO_EV_REFUSED ? ev->ev.error.code : NULL;
}

const char *berth_event_error_message (const berth_event_t *ev)
{
    return ev && ev->ev.kind == PROTO_EV_REFUSED ? ev->ev.error.text : NULL;
}

char *berth_event_json (const berth_event_t *ev)
{
    return ev ? json_dumps (ev->json, JSON_COMPACT) : NULL;
}
