/* SPDX-License-Identifier: MIT */
/* The ledger alone, in process: acquire + release of a one-node 4-core
 * placement and of a 64-node spanning placement (both layouts) on 100, 1,000
 * and 10,000 nodes of 128 cores and 4 GPUs, half the nodes partly held so
 * that best fit has buckets to look through. Each figure is the median of
 * repeated runs of many pairs; the growth from 100 to 10,000 nodes says
 * whether the cost grows faster than the node count. */
#include <stdio.h>
#include <stdlib.h>

#include "ledger.h"
#include "benchutil.h"

#define NSIZES 3

static struct ledger *build (int nnodes, char (*names)[16],
                             struct ledger_node_spec *spec)
{
    bench_node_specs (nnodes, 6, names, spec);
    berth_error_t err;
    struct ledger *l = ledger_create (spec, nnodes, 0, &err);
    if (!l)
        bench_die ("ledger_create: %s", err.text);
    return l;
}

/* Microseconds per acquire + release pair, over reps pairs. */
static double pairs_us (struct ledger *l, const struct step_shape *sh,
                        enum ledger_layout lay, int reps)
{
    berth_error_t err;
    char why[256];
    double t0 = bench_now ();
    for (int r = 0; r < reps; r++) {
        uint64_t id;
        if (ledger_acquire (l, sh, lay, &id, why, sizeof (why), &err) != 0
            || ledger_release (l, id, &err) < 0)
            bench_die ("ledger: no fit: %s", why);
    }
    return (bench_now () - t0) / reps * 1e6;
}

static double median_of_runs (struct ledger *l, const struct step_shape *sh,
                              enum ledger_layout lay, int runs, int reps)
{
    double v[32];
    for (int i = 0; i < runs; i++)
        v[i] = pairs_us (l, sh, lay, reps);
    return bench_median (v, (size_t) runs);
}

int main (int argc, char **argv)
{
    struct bench_args a;
    bench_parse_args (argc, argv, &a);
    const int sizes[NSIZES] = { 100, 1000, 10000 };
    const int runs = a.quick ? 3 : 9;
    const int reps_one = a.quick ? 2000 : 50000, reps_span = a.quick ? 50 : 1000;
    struct step_shape one = { .mpi = false, .ntasks = 1, .cpus_per_task = 4,
                              .cores = 4, .memory = -1, .budget = 16000 };
    struct step_shape span = {
        .mpi = true, .ntasks = 64 * BENCH_CORES_PER_NODE, .cpus_per_task = 1,
        .cores = 64 * BENCH_CORES_PER_NODE, .gpus = 64 * BENCH_GPUS_PER_NODE,
        .memory = -1, .budget = 64LL * BENCH_MEMORY_PER_NODE,
        .may_span = true };
    double r_one[NSIZES], r_span[NSIZES], r_sched[NSIZES], r_build[NSIZES];
    for (int s = 0; s < NSIZES; s++) {
        int n = sizes[s];
        char (*names)[16] = calloc ((size_t) n, sizeof (*names));
        struct ledger_node_spec *spec = calloc ((size_t) n, sizeof (*spec));
        if (!names || !spec)
            bench_die ("out of memory");
        double t0 = bench_now ();
        struct ledger *l = build (n, names, spec);
        r_build[s] = (bench_now () - t0) * 1e3;
        /* Background: leases of 4 to 52 cores on every other node. */
        struct step_shape bg = one;
        berth_error_t err;
        for (int i = 0; i < n / 2; i++) {
            uint64_t id;
            bg.cores = bg.cpus_per_task = 4 + (i % 7) * 8;
            if (ledger_acquire (l, &bg, LEDGER_CPU_BINDING, &id, NULL, 0,
                                &err) != 0)
                break;
        }
        r_one[s] = median_of_runs (l, &one, LEDGER_CPU_BINDING, runs, reps_one);
        r_span[s] = median_of_runs (l, &span, LEDGER_CPU_BINDING, runs,
                                    reps_span);
        r_sched[s] = median_of_runs (l, &span, LEDGER_SCHEDULER, runs,
                                     reps_span);
        if (ledger_check_invariants (l, &err) < 0)
            bench_die ("ledger invariants broken: %s", err.text);
        ledger_destroy (l);
        free (names);
        free (spec);
    }
    /* Growth: cost at 10,000 nodes over cost at 100, against 100x nodes. */
    double g_one = r_one[2] / r_one[0], g_span = r_span[2] / r_span[0];
    printf ("ledger alone: acquire+release pair, us (median of %d runs)\n",
            runs);
    printf ("  %-7s %-12s %-14s %-14s %-10s\n", "nodes", "1 node x 4c",
            "64 nodes exact", "64 nodes sched", "build ms");
    for (int s = 0; s < NSIZES; s++)
        printf ("  %-7d %-12.3f %-14.2f %-14.2f %-10.2f\n", sizes[s], r_one[s],
                r_span[s], r_sched[s], r_build[s]);
    printf ("  targets at 10,000 nodes: one node < 5 us (%.3f), 64 nodes "
            "< 100 us (%.1f); cost 100 -> 10,000 nodes x%.2f (one node), "
            "x%.2f (64 nodes) for x100 nodes (linear or better: <= 100)\n",
            r_one[2], r_span[2], g_one, g_span);
    json_t *rows = json_array ();
    for (int s = 0; s < NSIZES; s++)
        json_array_append_new (rows, json_pack (
            "{s:i s:f s:f s:f s:f}", "nodes", sizes[s], "one_node_4_cores_us",
            r_one[s], "span_64_nodes_cpu_binding_us", r_span[s],
            "span_64_nodes_scheduler_us", r_sched[s], "build_ms", r_build[s]));
    bench_write_json (a.json, json_pack (
        "{s:s s:b s:i s:o s:{s:f s:f s:f s:f} s:{s:b s:b s:b}}",
        "benchmark", "ledger", "quick", a.quick, "runs", runs, "rows", rows,
        "at_10000", "one_node_us", r_one[2], "span_64_us", r_span[2],
        "growth_one_node", g_one, "growth_span", g_span,
        "meets", "one_node_under_5us", r_one[2] < 5, "span_under_100us",
        r_span[2] < 100 && r_sched[2] < 100, "linear", g_one <= 100 && g_span <= 100));
    return 0;
}
