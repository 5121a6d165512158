/* SPDX-License-Identifier: MIT */
/* ledger_restore: leases put back exactly as recorded (crash recovery)
 * rebuild the same ledger state as the history that made them, and every
 * conflict or impossible holding is refused with nothing changed. */
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "testutil.h"

static berth_error_t err;

static struct ledger *mk_mem (int64_t memory)
{
    static int ids[64];
    static const char *names[] = { "a", "b", "c" };
    struct ledger_node_spec spec[3];
    for (int i = 0; i < 64; i++)
        ids[i] = i;
    for (int i = 0; i < 3; i++)
        spec[i] = (struct ledger_node_spec) { names[i], ids, 64, 4, memory };
    struct ledger *l = ledger_create (spec, 3, 0, &err);
    ck_assert_ptr_nonnull (l);
    return l;
}

static struct ledger *mk (void)
{
    return mk_mem (64000);
}

static struct step_shape shape_of (unsigned r)
{
    struct step_shape s = { .memory = -1, .budget = -1, .ntasks = 1 };
    switch (r % 3) {
    case 0:
        s.cores = s.cpus_per_task = 1 + (int) (r / 3 % 40);
        s.budget = s.cores * 500;
        break;
    case 1:
        s.mpi = true;
        s.ntasks = 2 + (int) (r / 3 % 90);
        s.cpus_per_task = 1;
        s.cores = s.ntasks;
        s.may_span = true;
        s.gpus = (int) (r / 7 % 3);
        s.budget = s.cores * 1000;
        break;
    default:
        s.cores = s.cpus_per_task = 2;
        s.gpus = 1 + (int) (r / 3 % 2);
        break;
    }
    return s;
}

static void same_nodes (struct ledger *a, struct ledger *b)
{
    for (int i = 0; i < ledger_nnodes (a); i++) {
        struct ledger_node_info x, y;
        ledger_node_info (a, i, &x);
        ledger_node_info (b, i, &y);
        ck_assert_int_eq (x.free_cores, y.free_cores);
        ck_assert_int_eq (x.free_gpus, y.free_gpus);
        ck_assert_int_eq (x.unbudgeted, y.unbudgeted);
        ck_assert_int_eq (x.leases, y.leases);
    }
}

static void same_lease (struct ledger *a, struct ledger *b, uint64_t id)
{
    const struct ledger_lease *x = ledger_lease_find (a, id);
    const struct ledger_lease *y = ledger_lease_find (b, id);
    ck_assert_ptr_nonnull (x);
    ck_assert_ptr_nonnull (y);
    ck_assert_int_eq (x->nnodes, y->nnodes);
    ck_assert_int_eq (x->layout, y->layout);
    ck_assert_mem_eq (&x->shape, &y->shape, sizeof (x->shape));
    for (int i = 0; i < x->nnodes; i++) {
        ck_assert_int_eq (x->nodes[i].node, y->nodes[i].node);
        ck_assert_int_eq (x->nodes[i].ncores, y->nodes[i].ncores);
        ck_assert_int_eq (x->nodes[i].ngpus, y->nodes[i].ngpus);
        ck_assert_int_eq (x->nodes[i].memory, y->nodes[i].memory);
        ck_assert_mem_eq (x->nodes[i].cores, y->nodes[i].cores,
                          x->nodes[i].ncores * sizeof (int));
        if (x->nodes[i].ngpus)
            ck_assert_mem_eq (x->nodes[i].gpus, y->nodes[i].gpus,
                              x->nodes[i].ngpus * sizeof (int));
    }
}

/* A history of grants and releases on one ledger; its live leases restored
 * (in reverse order) on a fresh one give the same state, and both go on to
 * grant the same. */
START_TEST (test_restore_rebuilds_state)
{
    struct ledger *l = mk (), *r = mk ();
    uint64_t held[800];
    int nheld = 0;
    unsigned seed = 777;
    for (int step = 0; step < 800; step++) {
        seed = seed * 1103515245u + 12345u;
        if (nheld > 0 && (seed >> 16) % 3 == 0) {
            int k = (int) ((seed >> 8) % (unsigned) nheld);
            ck_assert_int_eq (ledger_release (l, held[k], &err), 0);
            held[k] = held[--nheld];
            continue;
        }
        struct step_shape s = shape_of (seed >> 4);
        uint64_t id;
        int rc = ledger_acquire (l, &s, (seed >> 3) & 1 ? LEDGER_SCHEDULER
                                                        : LEDGER_CPU_BINDING,
                                 &id, NULL, 0, &err);
        ck_assert_int_ge (rc, 0);
        if (rc == 0)
            held[nheld++] = id;
    }
    ck_assert_int_gt (nheld, 3);
    for (int i = nheld - 1; i >= 0; i--)
        ck_assert_int_eq (ledger_restore (r, ledger_lease_find (l, held[i]),
                                          &err), 0);
    ck_assert_int_eq (ledger_check_invariants (r, &err), 0);
    for (int i = 0; i < nheld; i++)
        same_lease (l, r, held[i]);
    same_nodes (l, r);
    ledger_raise_next_id (r, ledger_next_id (l));
    ck_assert_uint_eq (ledger_next_id (r), ledger_next_id (l));
    for (unsigned k = 0; k < 20; k++) {
        struct step_shape s = shape_of (k * 31 + 5);
        uint64_t a, b;
        int ra = ledger_acquire (l, &s, LEDGER_CPU_BINDING, &a, NULL, 0, &err);
        int rb = ledger_acquire (r, &s, LEDGER_CPU_BINDING, &b, NULL, 0, &err);
        ck_assert_int_eq (ra, rb);
        if (ra == 0) {
            ck_assert_uint_eq (a, b);
            same_lease (l, r, a);
        }
    }
    ck_assert_int_eq (ledger_check_invariants (r, &err), 0);
    ledger_destroy (l);
    ledger_destroy (r);
}
END_TEST

/* A one-node lease to restore: cores, GPUs, MB on node `node`. */
struct want {
    struct ledger_lease ls;
    struct ledger_lease_node ln[2];
    int cores[2][8], gpus[2][4];
};

static void want_init (struct want *w, uint64_t id, int node, int first,
                       int ncores, int ngpus, int64_t mem)
{
    memset (w, 0, sizeof (*w));
    w->ls.id = id;
    w->ls.nodes = w->ln;
    w->ls.nnodes = 1;
    w->ls.shape = (struct step_shape) { .ntasks = 1, .cores = ncores,
                                        .cpus_per_task = ncores,
                                        .gpus = ngpus, .memory = -1,
                                        .budget = mem };
    w->ln[0].node = node;
    w->ln[0].cores = w->cores[0];
    w->ln[0].ncores = ncores;
    w->ln[0].gpus = w->gpus[0];
    w->ln[0].ngpus = ngpus;
    w->ln[0].memory = mem;
    for (int i = 0; i < ncores; i++)
        w->cores[0][i] = first + i;
    for (int i = 0; i < ngpus; i++)
        w->gpus[0][i] = i;
}

static void refused (struct ledger *l, const struct want *w, const char *code,
                     const char *text)
{
    struct ledger_node_info before[3], after;
    for (int i = 0; i < 3; i++)
        ledger_node_info (l, i, &before[i]);
    uint64_t next = ledger_next_id (l);
    ck_assert_int_eq (ledger_restore (l, &w->ls, &err), -1);
    ck_assert_str_eq (err.code, code);
    ck_assert_msg (strstr (err.text, text), "'%s' lacks '%s'", err.text, text);
    for (int i = 0; i < 3; i++) {
        ledger_node_info (l, i, &after);
        ck_assert_int_eq (after.free_cores, before[i].free_cores);
        ck_assert_int_eq (after.free_gpus, before[i].free_gpus);
        ck_assert_int_eq (after.unbudgeted, before[i].unbudgeted);
    }
    ck_assert_uint_eq (ledger_next_id (l), next);
    ck_assert_int_eq (ledger_check_invariants (l, &err), 0);
}

START_TEST (test_restore_refusals)
{
    struct ledger *l = mk ();
    struct want w;
    want_init (&w, 7, 1, 4, 4, 1, 1000);
    ck_assert_int_eq (ledger_restore (l, &w.ls, &err), 0);
    ck_assert_uint_eq (ledger_next_id (l), 8);

    refused (l, &w, "conflict", "L7 is already held");
    want_init (&w, 9, 1, 6, 4, 0, 0);
    refused (l, &w, "conflict", "core 6 of node b is already held");
    want_init (&w, 9, 1, 20, 2, 1, 0);
    refused (l, &w, "conflict", "GPU 0 of node b is already held");
    want_init (&w, 9, 1, 20, 2, 0, 63001);
    refused (l, &w, "conflict", "63000 MB unbudgeted");
    want_init (&w, 9, 3, 0, 2, 0, 0);
    refused (l, &w, "invalid", "node index 3");
    want_init (&w, 9, 0, 63, 2, 0, 0);
    refused (l, &w, "invalid", "core 64 is not a usable core of node a");
    want_init (&w, 9, 0, 0, 2, 0, 0);
    w.cores[0][1] = 0;
    refused (l, &w, "invalid", "names core 0 of node a twice");
    want_init (&w, 9, 0, 0, 2, 1, 0);
    w.gpus[0][0] = 4;
    refused (l, &w, "invalid", "GPU 4 of node a is absent");
    want_init (&w, 9, 0, 0, 2, 0, -5);
    refused (l, &w, "invalid", "is not a holding");
    want_init (&w, 0, 0, 0, 2, 0, 0);
    refused (l, &w, "invalid", "cannot be restored");
    /* a node named twice, and a conflict on the second node of a span:
     * nothing of the first node is taken either */
    want_init (&w, 9, 0, 0, 2, 0, 0);
    w.ls.nnodes = 2;
    w.ln[1] = w.ln[0];
    refused (l, &w, "invalid", "names node a twice");
    w.ln[1].node = 1;
    w.ln[1].cores = w.cores[1];
    w.cores[1][0] = 4;
    w.cores[1][1] = 5;
    refused (l, &w, "conflict", "core 4 of node b is already held");

    /* ids: a lower restored id leaves next_id alone; raising never lowers */
    want_init (&w, 3, 2, 0, 2, 0, 0);
    ck_assert_int_eq (ledger_restore (l, &w.ls, &err), 0);
    ck_assert_uint_eq (ledger_next_id (l), 8);
    ledger_raise_next_id (l, 5);
    ck_assert_uint_eq (ledger_next_id (l), 8);
    ledger_raise_next_id (l, 100);
    struct step_shape s = shape_of (0);
    uint64_t id;
    ck_assert_int_eq (ledger_acquire (l, &s, LEDGER_CPU_BINDING, &id, NULL, 0,
                                      &err), 0);
    ck_assert_uint_eq (id, 100);
    ck_assert_int_eq (ledger_release (l, 7, &err), 0);
    ck_assert_int_eq (ledger_release (l, 3, &err), 0);
    ck_assert_int_eq (ledger_check_invariants (l, &err), 0);
    ledger_destroy (l);
}
END_TEST

START_TEST (test_restore_memory_unknown)
{
    struct ledger *l = mk_mem (-1);
    struct want w;
    want_init (&w, 2, 0, 0, 2, 0, 500);
    refused (l, &w, "invalid", "whose memory is not accounted");
    want_init (&w, 2, 0, 0, 2, 0, 0);
    ck_assert_int_eq (ledger_restore (l, &w.ls, &err), 0);
    ck_assert_int_eq (ledger_check_invariants (l, &err), 0);
    ledger_destroy (l);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("ledger_restore");
    TCase *tc = tcase_create ("restore");
    tcase_add_test (tc, test_restore_rebuilds_state);
    tcase_add_test (tc, test_restore_refusals);
    tcase_add_test (tc, test_restore_memory_unknown);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
