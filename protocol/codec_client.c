/* SPDX-License-Identifier: MIT */
/* Replies and events decoded, as clients (libberth, berth) read them:
 * leniently, for a later berthd may add members, yet every value checked. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "hostlist.h"


static const char *const event_names[] = {
    [PROTO_EV_GRANTED] = "granted", [PROTO_EV_WAITED] = "waited",
    [PROTO_EV_RELEASED] = "released", [PROTO_EV_REFUSED] = "refused",
    [PROTO_EV_ALLOCATION] = "allocation",
};
#define NEVENTS ((int) (sizeof (event_names) / sizeof (event_names[0])))

int proto_parse_message (const char *line, size_t len, json_t **msg,
                         berth_error_t *err)
{
    json_error_t je;
    json_t *o;
    if (len > PROTO_MAX_REPLY)
        return errprintf_code (err, PROTO_ERR_TOO_LARGE,
                               "reply of %zu bytes is over the limit of %d bytes",
                               len, PROTO_MAX_REPLY);
    if (!(o = json_loadb (line, len, JSON_REJECT_DUPLICATES, &je)))
        return errprintf_code (err, PROTO_ERR_INTERNAL,
                               "berthd sent a line that is not JSON: %s", je.text);
    if (!json_is_object (o)) {
        json_decref (o);
        return errprintf_code (err, PROTO_ERR_INTERNAL,
                               "berthd sent JSON that is not an object");
    }
    *msg = o;
    return 0;
}

bool proto_is_event (const json_t *msg)
{
    return json_is_string (json_object_get (msg, "event"));
}

int proto_reply_status (const json_t *msg, berth_error_t *err)
{
    json_t *ok = json_object_get (msg, "ok");
    const char *code, *message;
    json_error_t je;
    if (!json_is_boolean (ok))
        return errprintf_code (err, PROTO_ERR_INTERNAL,
                               "berthd sent a reply without 'ok' true or false");
    if (json_is_true (ok))
        return 0;
    if (json_unpack_ex ((json_t *) msg, &je, 0, "{s:{s:s s:s}}", "error", "code", &code,
                        "message", &message) < 0)
        return errprintf_code (err, PROTO_ERR_INTERNAL,
                               "berthd sent an error reply without code and message: %s",
                               je.text);
    const char *known = proto_error_code (code);
    if (!*message)          /* still a reason to give the user */
        return errprintf_code (err, known ? known : "error",
                               "berthd refused the request (%s) without "
                               "saying why", code);
    if (known)
        return errprintf_code (err, known, "%s", message);
    return errprintf_code (err, "error", "%s (%s)", message, code);
}

int proto_decode_hello_reply (const json_t *msg, int *version, berth_error_t *err)
{
    struct codec_ctx c = { "hello reply", PROTO_ERR_INTERNAL, err };
    json_t *v;
    json_error_t je;
    int x = 0;
    if (json_unpack_ex ((json_t *) msg, &je, 0, "{s:o}", "version", &v) < 0)
        return codec_unpack_error (&c, &je);
    if (codec_need (&c, "version", v, "a version number") < 0 || codec_get_i (&c, "version", v, 1, INT_MAX, &x) < 0)
        return -1;
    *version = x;
    return 0;
}

int proto_decode_placement (const json_t *v, struct placement *out,
                            berth_error_t *err)
{
    struct codec_ctx c = { "placement", PROTO_ERR_INVALID_REQUEST, err };
    if (!json_is_object (v))
        return codec_bad (&c, "placement", "an object", v);
    return codec_decode_placement (&c, v, true, out);
}

/* Replies are read leniently: a later server may add members. */
int proto_decode_lease (const json_t *msg, struct proto_lease *out, berth_error_t *err)
{
    struct codec_ctx c = { "lease", PROTO_ERR_INTERNAL, err };
    json_t *id, *label = NULL, *placement, *cap = NULL, *budget = NULL, *argv = NULL,
                *delta = NULL, *env = NULL, *owner = NULL, *granted = NULL;
    json_error_t je;
    struct proto_lease l;
    json_int_t cap_v = -1, budget_v = -1;

    proto_lease_init (&l);
    if (json_unpack_ex ((json_t *) msg, &je, 0, "{s:o s?o s:o s?o s?o s?o s?o s?o s?o s?o}",
                        "lease", &id, "label", &label, "placement", &placement,
                        "memory_cap", &cap, "budget_mb", &budget, "argv", &argv,
                        "env_delta", &delta, "env", &env, "owner_pid", &owner,
                        "granted", &granted) < 0)
        return codec_unpack_error (&c, &je);
    if (codec_need (&c, "lease", id, "a lease id") < 0
        || codec_need (&c, "placement", placement, "an object") < 0)
        return -1;
    if (codec_get_name (&c, "lease", id, &l.id) < 0
        || codec_get_name (&c, "label", label, &l.label) < 0
        || codec_decode_placement (&c, placement, false, &l.placement) < 0
        || codec_get_int (&c, "memory_cap", cap, 0, PROTO_MAX_MEMORY_MB, &cap_v) < 0
        || codec_get_int (&c, "budget_mb", budget, 0, PROTO_MAX_MEMORY_MB, &budget_v) < 0
        || codec_decode_launch (&c, argv, delta, &l.launch) < 0
        || (!codec_absent (env) && codec_get_env_items (&c, "env", env, &l.env, &l.nenv) < 0)
        || codec_get_i (&c, "owner_pid", owner, 1, INT_MAX, &l.owner_pid) < 0
        || codec_get_seconds (&c, "granted", granted, 1e12, &l.granted) < 0) {
        proto_lease_free (&l);
        return -1;
    }
    l.memory_cap = cap_v;
    l.budget_mb = budget_v;
    *out = l;
    return 0;
}

int proto_decode_render_reply (const json_t *msg, struct launch *launch,
                               berth_error_t *err)
{
    struct codec_ctx c = { "render reply", PROTO_ERR_INTERNAL, err };
    json_t *argv = json_object_get (msg, "argv");
    if (codec_need (&c, "argv", argv, "a non-empty array of strings") < 0)
        return -1;
    return codec_decode_launch (&c, argv, json_object_get (msg, "env_delta"), launch);
}

/* One entry of the allocation event's nodes onto out, one object per node:
 * a node {name, ...} as it is, a run {names (a host list), count, ...}
 * expanded, its count checked against its names. */
static int decode_node_entry (const struct codec_ctx *c, size_t i, json_t *node,
                              json_t *out)
{
    char field[48], *name = NULL, **names = NULL;
    int n = 0, count = 1;
    json_t *cores = json_object_get (node, "cores");
    json_t *names_v = json_object_get (node, "names");
    snprintf (field, sizeof (field), "nodes[%zu]", i);
    if (!json_is_object (node))
        return codec_bad (c, field, "an object", node);
    snprintf (field, sizeof (field), "nodes[%zu].cores", i);
    if (!json_is_string (cores))
        return codec_bad (c, field, "a core id set such as \"0-127\"", cores ? cores : json_null ());
    snprintf (field, sizeof (field), "nodes[%zu].ncores", i);
    if (codec_get_i (c, field, json_object_get (node, "ncores"), 0, PROTO_MAX_COUNT, &n) < 0)
        return -1;
    snprintf (field, sizeof (field), "nodes[%zu].gpus", i);
    if (codec_get_i (c, field, json_object_get (node, "gpus"), 0, PROTO_MAX_COUNT, &n) < 0)
        return -1;
    if (!names_v) {
        snprintf (field, sizeof (field), "nodes[%zu].name", i);
        if (codec_need (c, field, json_object_get (node, "name"), "a node name") < 0
            || codec_get_name (c, field, json_object_get (node, "name"), &name) < 0)
            return -1;
        free (name);
        if (json_array_append (out, node) < 0)
            return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
        return 0;
    }
    snprintf (field, sizeof (field), "nodes[%zu].names", i);
    berth_error_t e;
    if (!json_is_string (names_v))
        return codec_bad (c, field, "a host list such as \"nid[0001-0004]\"", names_v);
    if (hostlist_expand (json_string_value (names_v), &names, &n, &e) < 0)
        return errprintf_code (c->err, c->code, "%s: field '%s': %s", c->where, field, e.text);
    snprintf (field, sizeof (field), "nodes[%zu].count", i);
    int rc = codec_get_i (c, field, json_object_get (node, "count"), 1, HOSTLIST_MAX, &count);
    if (rc == 0 && count != n)
        rc = errprintf_code (c->err, c->code, "%s: field '%s' is %d, but names '%s' are %d",
                             c->where, field, count, json_string_value (names_v), n);
    for (int k = 0; rc == 0 && k < n; k++) {
        json_t *one = json_pack ("{s:s s:O s:O s:O}", "name", names[k], "cores", cores,
                                 "ncores", json_object_get (node, "ncores"), "gpus",
                                 json_object_get (node, "gpus"));
        if (json_array_append_new (out, one) < 0)
            rc = errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    }
    hostlist_free (names, n);
    return rc;
}

/* The allocation event's nodes, each checked as the report will read it. */
static int decode_allocation_event (const struct codec_ctx *c, const json_t *msg,
                                    struct proto_event *ev)
{
    json_t *job = NULL, *machine = NULL, *nodes = NULL, *node;
    size_t i;
    json_unpack ((json_t *) msg, "{s?o s?o s?o}", "job_id", &job, "machine", &machine,
                 "nodes", &nodes);
    if (codec_get_name (c, "job_id", job, &ev->job_id) < 0
        || codec_get_name (c, "machine", machine, &ev->machine) < 0)
        return -1;
    if (!json_is_array (nodes) || json_array_size (nodes) == 0)
        return codec_bad (c, "nodes", "a non-empty array of nodes", nodes ? nodes : json_null ());
    json_t *each = json_array ();
    if (!each)
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    json_array_foreach (nodes, i, node)
        if (decode_node_entry (c, i, node, each) < 0) {
            json_decref (each);
            return -1;
        }
    ev->nodes = each;
    return 0;
}

int proto_decode_event (const json_t *msg, struct proto_event *out, berth_error_t *err)
{
    struct codec_ctx c = { "event", PROTO_ERR_INTERNAL, err };
    json_t *name, *time, *label = NULL, *position = NULL, *why = NULL, *lease = NULL,
           *outcome = NULL;
    json_error_t je;
    struct proto_event ev = { 0 };
    const char *code = NULL, *message = NULL;
    int k = 0;

    proto_lease_init (&ev.lease);
    if (json_unpack_ex ((json_t *) msg, &je, 0, "{s:o s:o}", "event", &name, "time",
                        &time) < 0)
        return codec_unpack_error (&c, &je);
    while (k < NEVENTS && !(json_is_string (name)
                            && !strcmp (json_string_value (name), event_names[k])))
        k++;
    if (k == NEVENTS)
        return codec_bad (&c, "event", "granted, waited, released, refused or allocation", name);
    ev.kind = (enum proto_event_kind) k;
    if (!json_is_number (time))
        return codec_bad (&c, "time", "a number", time);
    ev.time = json_number_value (time);
    switch (ev.kind) {
    case PROTO_EV_GRANTED:
        if (proto_decode_lease (msg, &ev.lease, err) < 0)
            return -1;
        break;
    case PROTO_EV_WAITED:
        json_unpack ((json_t *) msg, "{s?o s?o s?o}", "label", &label, "position",
                     &position, "why", &why);
        if (codec_get_name (&c, "label", label, &ev.label) < 0
            || codec_get_i (&c, "position", position, 0, INT_MAX, &ev.position) < 0)
            goto fail;
        if (json_is_string (why) && !(ev.why = strdup (json_string_value (why))))
            goto oom;
        break;
    case PROTO_EV_RELEASED:
        json_unpack ((json_t *) msg, "{s?o s?o s?o s?o}", "lease", &lease, "label",
                     &label, "reason", &why, "outcome", &outcome);
        if (codec_need (&c, "lease", lease, "a lease id") < 0
            || codec_get_name (&c, "lease", lease, &ev.lease.id) < 0
            || codec_get_name (&c, "label", label, &ev.lease.label) < 0
            || proto_outcome_decode (outcome, false, "released event",
                                     PROTO_ERR_INTERNAL, &ev.outcome, err) < 0)
            goto fail;
        if (json_is_string (why) && !(ev.why = strdup (json_string_value (why))))
            goto oom;
        break;
    case PROTO_EV_REFUSED:
        if (json_unpack_ex ((json_t *) msg, &je, 0, "{s?o s:{s:s s:s}}", "label", &label,
                            "error", "code", &code, "message", &message) < 0) {
            codec_unpack_error (&c, &je);
            goto fail;
        }
        if (codec_get_name (&c, "label", label, &ev.label) < 0)
            goto fail;
        errprintf_code (&ev.error, proto_error_code (code) ? proto_error_code (code) : "error",
                        "%s", message);
        break;
    case PROTO_EV_ALLOCATION:
        if (decode_allocation_event (&c, msg, &ev) < 0)
            goto fail;
        break;
    }
    *out = ev;
    return 0;
oom:
    errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory");
fail:
    proto_event_free (&ev);
    return -1;
}

