/* SPDX-License-Identifier: MIT */
/* The allocation as JSON: berthd's status reply and allocation event carry
 * it, and `berth machine --allocation --json` prints it. */
#include <stdlib.h>
#include <string.h>

#include "allocation_json.h"
#include "hostlist.h"
#include "idset.h"

static json_t *mb_or_null (int64_t mb)
{
    return mb >= 0 ? json_integer (mb) : json_null ();
}

json_t *allocation_node_json (const struct allocation *a, int i)
{
    const struct allocation_node *nd = &a->nodes[i];
    int len = idset_format (nd->core_ids, nd->ncores, NULL, 0);
    char *text = len >= 0 ? malloc (len + 1) : NULL;
    if (!text)
        return NULL;
    idset_format (nd->core_ids, nd->ncores, text, len + 1);
    json_t *o = json_pack ("{s:s s:s s:i s:i s:o s:o}", "name", nd->name,
                           "cores", text, "ncores", nd->ncores, "gpus",
                           nd->gpus, "memory_configured_mb",
                           mb_or_null (nd->memory_configured_mb),
                           "memory_credited_mb",
                           mb_or_null (nd->memory_credited_mb));
    free (text);
    return o;
}

json_t *allocation_head_json (const struct allocation *a)
{
    json_t *warnings = json_array ();
    const char **names = calloc (a->nnodes ? a->nnodes : 1, sizeof (char *));
    char *nodelist = NULL;
    int64_t cfg = 0, cred = 0;
    int cores = 0, gpus = 0;
    json_t *o = NULL;
    if (!warnings || !names)
        goto done;
    for (int i = 0; i < a->nnodes; i++) {
        const struct allocation_node *nd = &a->nodes[i];
        names[i] = nd->name;
        cores += nd->ncores;
        gpus += nd->gpus;
        cfg = cfg < 0 || nd->memory_configured_mb < 0
                  ? -1 : cfg + nd->memory_configured_mb;
        cred = cred < 0 || nd->memory_credited_mb < 0
                   ? -1 : cred + nd->memory_credited_mb;
    }
    if (a->nnodes == 0)
        cfg = cred = -1;
    for (int i = 0; i < a->nwarnings; i++)
        if (json_array_append_new (warnings, json_string (a->warnings[i])) < 0)
            goto done;
    if (hostlist_compress (names, a->nnodes, &nodelist, NULL) < 0)
        nodelist = NULL; /* names that cannot be compressed: no list */
    o = json_pack ("{s:s? s:s s:s? s:s? s:s? s:s? s:{s:i s:i s:i s:o s:o} "
                   "s:b s:O}",
                   "machine", a->machine, "system", berth_system_name (a->system),
                   "job_id", a->job_id, "liveness", a->liveness,
                   "local_node",
                   a->local_node >= 0 && a->local_node < a->nnodes
                       ? a->nodes[a->local_node].name : NULL,
                   "nodelist", nodelist, "totals", "nodes",
                   a->nnodes, "cores", cores, "gpus", gpus,
                   "memory_configured_mb", mb_or_null (cfg),
                   "memory_credited_mb", mb_or_null (cred), "mpi_allowed",
                   a->mpi_allowed, "warnings", warnings);
done:
    json_decref (warnings);
    free (names);
    free (nodelist);
    return o;
}

json_t *allocation_to_json (const struct allocation *a)
{
    json_t *o = allocation_head_json (a), *nodes = json_array ();
    if (!o || !nodes)
        goto fail;
    for (int i = 0; i < a->nnodes; i++)
        if (json_array_append_new (nodes, allocation_node_json (a, i)) < 0)
            goto fail;
    if (json_object_set_new (o, "nodes", nodes) < 0) {
        nodes = NULL;
        goto fail;
    }
    return o;
fail:
    json_decref (nodes);
    json_decref (o);
    return NULL;
}

static bool same_node_shape (const struct allocation_node *a,
                             const struct allocation_node *b)
{
    return a->ncores == b->ncores && a->gpus == b->gpus
           && !memcmp (a->core_ids, b->core_ids,
                       (size_t) a->ncores * sizeof (int));
}

static json_t *node_run (const struct allocation *a, int first, int count)
{
    const struct allocation_node *nd = &a->nodes[first];
    int len = idset_format (nd->core_ids, nd->ncores, NULL, 0);
    char *cores = len >= 0 ? malloc (len + 1) : NULL;
    char *names = count > 1 ? hostlist_range (nd->name,
                                              a->nodes[first + count - 1].name)
                            : NULL;
    json_t *o = NULL;
    if (cores && (names || count == 1)) {
        idset_format (nd->core_ids, nd->ncores, cores, len + 1);
        o = count > 1
                ? json_pack ("{s:s s:i s:s s:i s:i}", "names", names, "count",
                             count, "cores", cores, "ncores", nd->ncores,
                             "gpus", nd->gpus)
                : json_pack ("{s:s s:s s:i s:i}", "name", nd->name, "cores",
                             cores, "ncores", nd->ncores, "gpus", nd->gpus);
    }
    free (cores);
    free (names);
    return o;
}

json_t *allocation_node_runs (const struct allocation *a)
{
    json_t *runs = json_array ();
    for (int i = 0; runs && i < a->nnodes;) {
        int k = 1;
        while (i + k < a->nnodes
               && same_node_shape (&a->nodes[i], &a->nodes[i + k])
               && hostlist_name_follows (a->nodes[i + k - 1].name,
                                         a->nodes[i + k].name))
            k++;
        if (json_array_append_new (runs, node_run (a, i, k)) < 0) {
            json_decref (runs);
            return NULL;
        }
        i += k;
    }
    return runs;
}
