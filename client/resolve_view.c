/* SPDX-License-Identifier: MIT */
/* A resolution as JSON (`berth resolve --json`). */
#include <string.h>

#include "resolve_view.h"

static json_t *number_or_null (long long n)
{
    return n >= 0 ? json_integer (n) : json_null ();
}

static json_t *changes_to_json (const struct resolution *r)
{
    json_t *a = json_array ();
    for (int i = 0; a && i < r->nchanges; i++) {
        const struct resolve_change *c = &r->changes[i];
        json_t *o;
        if (!strcmp (c->field, "nodes"))
            o = json_pack ("{s:s s:s s:I s:I s:s}", "field", c->field,
                           "kind", c->kind, "from", (json_int_t) c->from_n,
                           "to", (json_int_t) c->to_n, "why", c->why);
        else if (!strcmp (c->field, "wall_time"))
            o = json_pack ("{s:s s:s s:s s:s s:I s:I s:s}", "field", c->field,
                           "kind", c->kind, "from", c->from, "to", c->to,
                           "from_seconds", (json_int_t) c->from_n,
                           "to_seconds", (json_int_t) c->to_n, "why", c->why);
        else
            o = json_pack ("{s:s s:s s:s s:s s:s}", "field", c->field,
                           "kind", c->kind, "from", c->from, "to", c->to,
                           "why", c->why);
        if (json_array_append_new (a, o) < 0) {
            json_decref (a);
            return NULL;
        }
    }
    return a;
}

json_t *resolution_to_json (const struct resolution *r)
{
    json_t *o = json_object ();
    json_t *target = r->pbs
        ? json_pack ("{s:s}", "queue", r->queue)
        : json_pack ("{s:s s:s}", "partition", r->partition, "qos", r->qos);
    json_t *rest = json_pack ("{s:s s:s s:s s:i s:s s:o s:s s:s s:s s:o s:s "
                              "s:i s:i s:s s:b s:s? s:o}",
                              "constraint", r->constraint,
                              "account", r->account,
                              "account_from", r->account_from,
                              "gpus_per_node", r->gpus,
                              "max_wallclock", r->max_wallclock,
                              "max_wallclock_seconds",
                              number_or_null (r->max_wallclock_s),
                              "max_wallclock_from", r->max_wallclock_from,
                              "requested_wall_time", r->requested_wall_time,
                              "wall_time", r->wall_time,
                              "wall_time_seconds",
                              number_or_null (r->wall_time_s),
                              "wall_time_from", r->wall_time_from,
                              "requested_nodes", r->requested_nodes,
                              "effective_nodes", r->effective_nodes,
                              "adjustment", adjustment_name (r->adjustment),
                              "honored", r->honored, "reason", r->reason,
                              "changes", changes_to_json (r));
    /* in the order people read them: where, then what */
    if (!o || !target || !rest
        || json_object_set_new (o, "scheduler", json_string (r->scheduler)) < 0
        || json_object_update (o, target) < 0
        || json_object_update (o, rest) < 0
        || (r->pbs && json_object_set_new (o, "filesystems",
                                           json_string (r->filesystems)) < 0)) {
        json_decref (o);
        o = NULL;
    }
    json_decref (target);
    json_decref (rest);
    return o;
}
