/* Micro benchmark of the ledger: acquire + release of a 4-core one-node
 * placement and of a 64-node spanning placement, on 100, 1,000 and 10,000
 * nodes of 128 cores and 4 GPUs. Prints microseconds per pair. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ledger.h"

static double now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static struct ledger *build (int nnodes, int *cores, char (*names)[16],
                             struct ledger_node_spec *spec)
{
    for (int i = 0; i < nnodes; i++) {
        snprintf (names[i], sizeof (names[i]), "nid%06d", i);
        spec[i] = (struct ledger_node_spec) { names[i], cores, 128, 4,
                                              512000 };
    }
    berth_error_t err;
    struct ledger *l = ledger_create (spec, nnodes, 0, &err);
    if (!l)
        fprintf (stderr, "bench_ledger: %s\n", err.text);
    return l;
}

/* Time acquire + release of shape, with a background of held leases so that
 * the ledger is not trivially empty: fill half the nodes' cores partly. */
static double measure (struct ledger *l, const struct step_shape *sh,
                       enum ledger_layout lay, int reps)
{
    berth_error_t err;
    char why[256];
    double t0 = now_us ();
    for (int r = 0; r < reps; r++) {
        uint64_t id;
        if (ledger_acquire (l, sh, lay, &id, why, sizeof (why), &err) != 0
            || ledger_release (l, id, &err) < 0) {
            fprintf (stderr, "bench_ledger: no fit: %s\n", why);
            return -1;
        }
    }
    return (now_us () - t0) / reps;
}

int main (void)
{
    static int cores[128];
    for (int i = 0; i < 128; i++)
        cores[i] = i;
    const int sizes[] = { 100, 1000, 10000 };
    struct step_shape one = { .mpi = false, .ntasks = 1, .cpus_per_task = 4,
                              .cores = 4, .memory = -1, .budget = 16000 };
    struct step_shape span = { .mpi = true, .ntasks = 64 * 128,
                               .cpus_per_task = 1, .cores = 64 * 128,
                               .gpus = 256, .memory = -1,
                               .budget = 64 * 512000, .may_span = true };
    printf ("%-8s %-22s %-22s %-22s\n", "nodes", "1 node x 4 cores (us)",
            "64 nodes, exact (us)", "64 nodes, sched (us)");
    for (size_t s = 0; s < sizeof (sizes) / sizeof (sizes[0]); s++) {
        int n = sizes[s];
        char (*names)[16] = calloc (n, sizeof (*names));
        struct ledger_node_spec *spec = calloc (n, sizeof (*spec));
        struct ledger *l = names && spec ? build (n, cores, names, spec)
                                         : NULL;
        if (!l)
            return 1;
        /* Background load: a 4-core lease on every other node, so the best
         * fit has buckets to look through. */
        struct step_shape bg = one;
        berth_error_t err;
        for (int i = 0; i < n / 2; i++) {
            uint64_t id;
            bg.cores = bg.cpus_per_task = 4 + (i % 7) * 8;
            if (ledger_acquire (l, &bg, LEDGER_CPU_BINDING, &id, NULL, 0,
                                &err) != 0)
                break;
        }
        double a = measure (l, &one, LEDGER_CPU_BINDING, 200000);
        double b = measure (l, &span, LEDGER_CPU_BINDING, 2000);
        double c = measure (l, &span, LEDGER_SCHEDULER, 2000);
        printf ("%-8d %-22.3f %-22.3f %-22.3f\n", n, a, b, c);
        ledger_destroy (l);
        free (names);
        free (spec);
    }
    return 0;
}
