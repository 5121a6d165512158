/* SPDX-License-Identifier: MIT */
/* A machine's targets and account defaults as JSON (`berth machine --json`). */
#include "targets_view.h"

static json_t *nodes_json (int n)
{
    return n ? json_integer (n) : json_null ();
}

static json_t *axis_to_json (const struct target_axis *a)
{
    json_t *arr = json_array ();
    for (int i = 0; arr && i < a->count; i++) {
        const struct target *t = &a->targets[i];
        json_t *bins = json_array ();
        for (int j = 0; bins && j < t->nbins; j++)
            json_array_append_new (bins, json_pack ("{s:i s:s}", "nodes",
                                                    t->bins[j].bound,
                                                    "max_wallclock",
                                                    t->bins[j].clock));
        if (json_array_append_new (arr,
                json_pack ("{s:s s:o s:o s:s? s:o}", "name", t->name,
                           "min_nodes", nodes_json (t->min_nodes),
                           "max_nodes", nodes_json (t->max_nodes),
                           "max_wallclock", t->max_wallclock,
                           "max_wallclock_bins", bins)) < 0) {
            json_decref (arr);
            return NULL;
        }
    }
    return arr;
}

json_t *targets_to_json (const struct machine_targets *t)
{
    return json_pack ("{s:o s:o s:o}", "partition", axis_to_json (&t->partition),
                      "qos", axis_to_json (&t->qos),
                      "queue", axis_to_json (&t->queue));
}

json_t *account_defaults_to_json (const struct machine_targets *t)
{
    struct account_defaults d;
    targets_account_defaults (t, &d);
    return json_pack ("{s:s? s:s? s:s? s:s?}", "account", d.account,
                      "partition", d.partition, "constraint", d.constraint,
                      "qos", d.qos);
}
