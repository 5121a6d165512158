/* SPDX-License-Identifier: MIT */
/* Explaining a wait: the sentence that says why a step does not fit now,
 * naming the first figure that falls short and the best nodes have. */
#include <stdio.h>
#include <string.h>

#include "ledger_private.h"

#define BEST_SHOWN 8       /* figures listed in a "best:" explanation */

static const char *plural (int n)
{
    return n == 1 ? "" : "s";
}

/* Append "best: a, b, ..." with the top k of a node figure. */
static void best_list (const struct ledger *l, int k, int what, char *buf,
                       size_t size)
{
    int64_t top[BEST_SHOWN];
    int n = 0, want = k < BEST_SHOWN ? k : BEST_SHOWN;
    for (int i = 0; i < l->n; i++) {
        const struct lnode *nd = &l->nodes[i];
        int64_t v = what == 0 ? nd->nfree : what == 1 ? nd->nfree_gpus
                                                      : nd->unbudgeted;
        int j = n < want ? n++ : want;
        while (j > 0 && top[j - 1] < v) {
            if (j < want)
                top[j] = top[j - 1];
            j--;
        }
        if (j < want)
            top[j] = v;
    }
    size_t len = strlen (buf);
    len += snprintf (buf + len, len < size ? size - len : 0, " (best: ");
    for (int j = 0; j < n; j++)
        len += snprintf (buf + len, len < size ? size - len : 0, "%s%lld",
                         j ? ", " : "", (long long) top[j]);
    snprintf (buf + len, len < size ? size - len : 0, "%s)",
              k > BEST_SHOWN ? ", ..." : "");
}

static int count_fitting (const struct ledger *l, const struct demand *d)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += node_fits (&l->nodes[i], d);
    return n;
}

/* Why the fewest-node layout does not fit, naming the first figure short. */
void lg_explain (const struct ledger *l, const struct step_shape *sh,
                     enum ledger_layout lay, char *why, size_t size)
{
    if (!why || !size)
        return;
    if (sh->local) {
        if (l->local < 0) {
            snprintf (why, size, "no node for local steps: the daemon does "
                      "not run on a node of the allocation");
            return;
        }
        const struct lnode *nd = &l->nodes[l->local];
        snprintf (why, size, "the daemon's node %s has %d free core%s, %d "
                  "free GPU%s, %lld MB unbudgeted; needs %d core%s, %d GPU%s, "
                  "%lld MB", nd->name, nd->nfree, plural (nd->nfree),
                  nd->nfree_gpus, plural (nd->nfree_gpus),
                  (long long) nd->unbudgeted, sh->cores, plural (sh->cores),
                  sh->gpus, plural (sh->gpus),
                  (long long) (sh->budget > 0 ? sh->budget : 0));
        return;
    }
    /* What the free room of the allocation adds up to, for a span. */
    int units = sh->mpi ? sh->ntasks : sh->cores;
    int usz = sh->mpi ? sh->cpus_per_task : 1;
    int64_t total = (int64_t) units * usz, room = 0, room_cores = 0;
    bool spans = sh->may_span && l->n > 1;
    if (spans) {
        struct step_shape no_budget = *sh;
        no_budget.budget = 0;
        for (int i = 0; i < l->n; i++) {
            if (l->nodes[i].reserved)
                continue;
            room += lg_node_room (l, i, sh, usz, total);
            room_cores += lg_node_room (l, i, &no_budget, usz, total);
        }
    }
    if (spans && lay == LEDGER_SCHEDULER && !sh->gpus) {
        /* tasks split as the free room allows: only the sum can fall short */
        int k = units < l->n ? units : l->n;
        if (room_cores < units) {
            snprintf (why, size, "no %d nodes with %lld free cores between "
                      "them: %lld free", k, (long long) total,
                      (long long) room_cores * usz);
            best_list (l, k, 0, why, size);
        } else {
            snprintf (why, size, "no %d nodes with %lld free cores and "
                      "%lld MB of memory unbudgeted between them: room for "
                      "%lld of %d tasks", k, (long long) total,
                      (long long) sh->budget, (long long) room, units);
            best_list (l, k, 2, why, size);
        }
        return;
    }
    /* A step that may span is explained at the fewest nodes with enough
     * free cores, so that the reason names the next obstacle. */
    struct span sp;
    lg_span_layout (sh, lay, 1, &sp);
    if (sh->may_span) {
        int kmax = units < l->n ? units : l->n, first = 0;
        for (int k = 1; k <= kmax && k <= 64; k++) {
            struct span t;
            lg_span_layout (sh, lay, k, &t);
            if (t.hi_cores > l->maxcores)
                continue;
            if (!first)
                first = k;
            if (lg_count_free_ge (l, t.d[t.ncls - 1].cores) >= k
                && lg_count_free_ge (l, t.hi_cores) >= t.count[0]) {
                first = k;
                break;
            }
        }
        if (first)
            lg_span_layout (sh, lay, first, &sp);
    }
    char nodes[32];
    if (sp.k == 1)
        snprintf (nodes, sizeof (nodes), "no node");
    else
        snprintf (nodes, sizeof (nodes), "no %d nodes", sp.k);
    struct demand d = sp.d[0];
    struct demand cores_only = { d.cores, 0, 0 }, no_mem = { d.cores, d.gpus,
                                                             0 };
    if (count_fitting (l, &cores_only) < sp.count[0]
        || lg_count_free_ge (l, sp.d[sp.ncls - 1].cores) < sp.k) {
        snprintf (why, size, "%s with %d free core%s", nodes, d.cores,
                  plural (d.cores));
        best_list (l, sp.k, 0, why, size);
        /* an even layout short of cores where the sum would do */
        if (spans && sp.k > 1 && room >= units) {
            size_t len = strlen (why);
            snprintf (why + len, len < size ? size - len : 0, "; the free "
                      "cores add up to %lld, but %s", (long long) room * usz,
                      lay == LEDGER_CPU_BINDING ? "this launcher runs as many "
                      "tasks on every node" : "a step with GPUs runs as many "
                      "tasks on every node");
        }
    } else if (count_fitting (l, &no_mem) < sp.count[0]) {
        snprintf (why, size, "%s with %d free core%s and %d free GPU%s",
                  nodes, d.cores, plural (d.cores), d.gpus, plural (d.gpus));
        best_list (l, sp.k, 1, why, size);
    } else if (count_fitting (l, &d) < sp.count[0]) {
        snprintf (why, size, "%s with %d free core%s and %lld MB of memory "
                  "unbudgeted", nodes, d.cores, plural (d.cores),
                  (long long) d.memory);
        best_list (l, sp.k, 2, why, size);
    } else {
        snprintf (why, size, "%s with the same %d free core id%s%s", nodes,
                  d.cores, plural (d.cores), d.gpus ? " and GPU indices" : "");
    }
}
