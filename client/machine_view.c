/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "allocation.h"
#include "allocation_discover.h"
#include "allocation_json.h"
#include "launcher.h"
#include "launcher_detect.h"
#include "machine_view.h"
#include "targets.h"
#include "targets_view.h"

/* GPUs per node a compiler's section gives (its own, else [parallel]'s), or
 * JSON null when the text is not a number. */
static json_t *section_gpus (struct machine *m, const char *section)
{
    const char *v;
    berth_error_t e;
    if (!config_has_section (m->cfg, section)
        || config_get (m->cfg, section, "gpus_per_node", &v, &e) < 0 || !v)
        if (config_get (m->cfg, "parallel", "gpus_per_node", &v, &e) < 0)
            return json_null ();
    if (!v || !*v)
        return json_integer (0);
    char *end;
    long n = strtol (v, &end, 10);
    return *end || n < 0 ? json_null () : json_integer (n);
}

/* Every compiler the machine knows: its section (or null: [parallel] as it
 * is), its GPUs per node and whether it is the one in force. */
static json_t *compilers_json (struct machine *m, berth_error_t *err)
{
    char **names = NULL;
    int n = 0;
    if (machine_compilers (m, &names, &n, err) < 0)
        return NULL;
    json_t *a = json_array ();
    bool seen = false;
    for (int i = 0; a && i <= n; i++) {
        const char *c = i < n ? names[i] : m->compiler;
        if (i == n && (!c || seen))
            break;      /* the one in force, when the machine does not know it */
        char section[300];
        snprintf (section, sizeof (section), "parallel.%s", c);
        for (char *p = section; *p; p++)
            *p = *p == '-' ? '_' : *p;
        bool has = machine_has_compiler_section (m, c);
        /* in force: the same name, '-' and '_' alike */
        char mine[300] = "";
        if (m->compiler) {
            snprintf (mine, sizeof (mine), "%s", m->compiler);
            for (char *p = mine; *p; p++)
                *p = *p == '-' ? '_' : *p;
        }
        bool in_force = m->compiler && strcasecmp (mine, section + 9) == 0;
        seen |= in_force;
        json_array_append_new (a, json_pack ("{s:s s:s? s:o s:b}", "name", c,
                                             "section", has ? section : NULL,
                                             "gpus_per_node", section_gpus (m, has
                                                 ? section : "parallel"),
                                             "in_force", in_force));
    }
    for (int i = 0; i < n; i++)
        free (names[i]);
    free (names);
    if (!a)
        errprintf (err, "out of memory");
    return a;
}

json_t *machine_view_json (struct machine *m, berth_error_t *err)
{
    const char **keys = NULL, **values = NULL;
    int count = 0;
    struct machine_targets *t = NULL;
    json_t *view = NULL, *parallel = json_object ();
    if (!parallel)
        goto nomem;
    if (machine_parallel_options (m, &keys, &values, &count, err) < 0
        || targets_load_machine (m, &t, err) < 0)
        goto fail;
    for (int i = 0; i < count; i++)
        json_object_set_new (parallel, keys[i], json_string (values[i]));
    const struct machine_parallel *p = &m->par;
    json_t *compilers = compilers_json (m, err);
    if (!compilers)
        goto fail;
    view = json_pack ("{s:s s:s s:s? s:s s:o s:s s:O s:i s:i s:o s:o s:o}",
                      "machine", m->name,
                      "chosen_why", m->chosen_why ? m->chosen_why : "",
                      "compiler", m->compiler,
                      "compiler_why", m->compiler_why ? m->compiler_why : "",
                      "compilers", compilers,
                      "system", berth_system_name (p->system),
                      "parallel", parallel,
                      "cores_per_node", p->cores_per_node,
                      "gpus_per_node", p->gpus_per_node,
                      "memory_per_node", p->memory_per_node >= 0
                          ? json_integer (p->memory_per_node) : json_null (),
                      "account_defaults", account_defaults_to_json (t),
                      "targets", targets_to_json (t));
    if (!view)
        goto nomem;
    /* which file was read and why: the search path's answer */
    if (json_object_set_new (view, "file", m->file ? json_string (m->file)
                                                   : json_null ()) < 0
        || json_object_set_new (view, "file_why", json_string (
               m->file_why ? m->file_why
                           : "none: a generic machine built from the job's "
                             "environment")) < 0)
        goto nomem;
    goto done;
nomem:
    errprintf (err, "out of memory");
fail:
    json_decref (view);
    view = NULL;
done:
    json_decref (parallel);
    targets_destroy (t);
    free (keys);
    free (values);
    return view;
}

int machine_view_allocation (struct machine *m, json_t **view,
                             berth_error_t *err)
{
    struct allocation *a = NULL;
    if (allocation_discover (&m->par, m->name, NULL, &a, err) < 0)
        return 1;
    for (int i = 0; i < a->nwarnings; i++)
        fprintf (stderr, "berth machine: warning: %s\n", a->warnings[i]);
    /* what the launcher can do, judged for the system actually found (a
     * stale allocation is a login node, where nothing launches) */
    struct launcher_caps caps;
    struct machine_parallel saved = m->par;
    m->par.system = a->system;
    launcher_detect (m, &caps);
    m->par = saved;
    json_t *o = allocation_to_json (a);
    allocation_destroy (a);
    if (!o)
        return errprintf (err, "out of memory"), 1;
    json_object_set_new (o, "placement_support",
                         json_string (placement_support_name (caps.placement)));
    json_object_set_new (o, "memory_cap_support",
                         json_string (memcap_support_name (caps.memcap)));
    json_object_set_new (o, "launcher", json_string (caps.desc));
    *view = o;
    return 0;
}

static const char *str (json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return s ? s : "-";
}

static void print_int_or_unknown (FILE *f, const char *label, json_t *v,
                                  const char *unit)
{
    if (json_is_integer (v))
        fprintf (f, "%-18s %lld%s\n", label, (long long) json_integer_value (v), unit);
    else
        fprintf (f, "%-18s unknown\n", label);
}

void machine_view_print (json_t *view, FILE *f)
{
    fprintf (f, "%-18s %s (%s)\n", "machine", str (view, "machine"),
             str (view, "chosen_why"));
    fprintf (f, "%-18s %s (%s)\n", "file", str (view, "file"),
             str (view, "file_why"));
    fprintf (f, "%-18s %s (%s)\n", "compiler", str (view, "compiler"),
             str (view, "compiler_why"));
    size_t ci;
    json_t *c;
    json_array_foreach (json_object_get (view, "compilers"), ci, c) {
        json_t *g = json_object_get (c, "gpus_per_node");
        char gpus[32] = "? GPUs";
        if (json_is_integer (g))
            snprintf (gpus, sizeof (gpus), "%lld GPU%s", (long long) json_integer_value (g),
                      json_integer_value (g) == 1 ? "" : "s");
        const char *sec = json_string_value (json_object_get (c, "section"));
        char where[320];
        snprintf (where, sizeof (where), "[%s]", sec ? sec : "parallel");
        fprintf (f, "%-18s %s %-20s %-30s %s per node\n", ci == 0 ? "compilers" : "",
                 json_is_true (json_object_get (c, "in_force")) ? "*" : " ",
                 str (c, "name"), where, gpus);
    }
    fprintf (f, "%-18s %s\n", "system", str (view, "system"));
    print_int_or_unknown (f, "cores per node", json_object_get (view, "cores_per_node"), "");
    print_int_or_unknown (f, "gpus per node", json_object_get (view, "gpus_per_node"), "");
    print_int_or_unknown (f, "memory per node", json_object_get (view, "memory_per_node"), " MB");
    json_t *ad = json_object_get (view, "account_defaults");
    fprintf (f, "%-18s account %s, partition %s, qos %s, constraint %s\n", "defaults",
             str (ad, "account"), str (ad, "partition"), str (ad, "qos"),
             str (ad, "constraint"));
    json_t *targets = json_object_get (view, "targets");
    const char *axis;
    json_t *list;
    json_object_foreach (targets, axis, list) {
        size_t i;
        json_t *t;
        json_array_foreach (list, i, t) {
            char range[64];
            json_t *lo = json_object_get (t, "min_nodes"), *hi = json_object_get (t, "max_nodes");
            if (json_is_integer (lo) && json_is_integer (hi))
                snprintf (range, sizeof (range), "%lld-%lld nodes",
                          (long long) json_integer_value (lo), (long long) json_integer_value (hi));
            else if (json_is_integer (lo))
                snprintf (range, sizeof (range), "%lld- nodes", (long long) json_integer_value (lo));
            else if (json_is_integer (hi))
                snprintf (range, sizeof (range), "up to %lld nodes", (long long) json_integer_value (hi));
            else
                snprintf (range, sizeof (range), "any nodes");
            fprintf (f, "%-18s %s %s: %s", i == 0 ? "targets" : "", axis,
                     str (t, "name"), range);
            json_t *bins = json_object_get (t, "max_wallclock_bins");
            if (json_array_size (bins)) {
                size_t j;
                json_t *b;
                fprintf (f, ", wall clock by size:");
                json_array_foreach (bins, j, b)
                    fprintf (f, "%s <=%lld %s", j ? "," : "",
                             (long long) json_integer_value (json_object_get (b, "nodes")),
                             str (b, "max_wallclock"));
                fputc ('\n', f);
            }
            else if (json_is_string (json_object_get (t, "max_wallclock")))
                fprintf (f, ", max %s\n", str (t, "max_wallclock"));
            else
                fprintf (f, ", no wall-clock limit\n");
        }
    }
    fprintf (f, "[parallel] options:\n");
    const char *key;
    json_t *v;
    json_object_foreach (json_object_get (view, "parallel"), key, v)
        fprintf (f, "  %s = %s\n", key, json_string_value (v));
}

void machine_view_print_allocation (json_t *view, FILE *f)
{
    fprintf (f, "%-12s %s\n", "machine", str (view, "machine"));
    fprintf (f, "%-12s %s\n", "system", str (view, "system"));
    fprintf (f, "%-12s %s\n", "job", str (view, "job_id"));
    fprintf (f, "%-12s %s\n", "liveness", str (view, "liveness"));
    fprintf (f, "%-12s %s\n", "mpi", json_is_true (json_object_get (view, "mpi_allowed"))
                                   ? "allowed" : "not allowed (login node)");
    fprintf (f, "%-12s %s (%s), memory caps %s\n", "placement",
             str (view, "placement_support"), str (view, "launcher"),
             str (view, "memory_cap_support"));
    fprintf (f, "%-16s %6s %-16s %5s %12s %12s\n", "NODE", "CORES", "IDS", "GPUS",
             "MEM CONF MB", "MEM CRED MB");
    size_t i;
    json_t *n;
    json_array_foreach (json_object_get (view, "nodes"), i, n) {
        char conf[32] = "unknown", cred[32] = "unknown";
        json_t *c = json_object_get (n, "memory_configured_mb");
        json_t *r = json_object_get (n, "memory_credited_mb");
        if (json_is_integer (c))
            snprintf (conf, sizeof (conf), "%lld", (long long) json_integer_value (c));
        if (json_is_integer (r))
            snprintf (cred, sizeof (cred), "%lld", (long long) json_integer_value (r));
        fprintf (f, "%-16s %6lld %-16s %5lld %12s %12s\n", str (n, "name"),
                 (long long) json_integer_value (json_object_get (n, "ncores")),
                 str (n, "cores"),
                 (long long) json_integer_value (json_object_get (n, "gpus")), conf, cred);
    }
}
