/* SPDX-License-Identifier: MIT */
/* The ledger is deterministic: replaying the same acquires and releases on a
 * fresh ledger gives the same lease ids and the same placements, and an id
 * can be skipped by acquiring and releasing the same shape. (berthd's journal
 * no longer relies on this: it restores recorded placements directly, see
 * test_ledger_restore.c; replays of recorded runs still do.) */
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "testutil.h"

static berth_error_t err;

static struct ledger *mk (void)
{
    static int ids[64];
    static const char *names[] = { "a", "b", "c" };
    struct ledger_node_spec spec[3];
    for (int i = 0; i < 64; i++)
        ids[i] = i;
    for (int i = 0; i < 3; i++)
        spec[i] = (struct ledger_node_spec) { names[i], ids, 64, 4, 64000 };
    struct ledger *l = ledger_create (spec, 3, 0, &err);
    ck_assert_ptr_nonnull (l);
    return l;
}

struct op {
    bool acquire;
    struct step_shape shape;
    uint64_t id;          /* the lease to release, or the one granted */
};

static struct step_shape shape_of (unsigned r)
{
    int kind = r % 3;
    struct step_shape s = { .memory = -1, .budget = -1 };
    if (kind == 0) {
        s.ntasks = 1;
        s.cores = s.cpus_per_task = 1 + (int) (r / 3 % 40);
    }
    else if (kind == 1) {
        s.mpi = true;
        s.ntasks = 2 + (int) (r / 3 % 90);
        s.cpus_per_task = 1;
        s.cores = s.ntasks;
        s.may_span = true;
        s.budget = s.cores * 1000;
    }
    else {
        s.ntasks = 1;
        s.cores = s.cpus_per_task = 2;
        s.gpus = 1 + (int) (r / 3 % 2);
    }
    return s;
}

static void same_lease (struct ledger *a, struct ledger *b, uint64_t id)
{
    struct placement pa, pb;
    ck_assert_int_eq (ledger_lease_placement (a, ledger_lease_find (a, id), &pa,
                                              &err), 0);
    ck_assert_int_eq (ledger_lease_placement (b, ledger_lease_find (b, id), &pb,
                                              &err), 0);
    ck_assert_int_eq (pa.nnodes, pb.nnodes);
    ck_assert_int_eq (pa.gpus, pb.gpus);
    ck_assert_int_eq (pa.ngpu_ids, pb.ngpu_ids);
    for (int i = 0; i < pa.nnodes; i++) {
        ck_assert_str_eq (pa.nodes[i].name, pb.nodes[i].name);
        ck_assert_int_eq (pa.nodes[i].ncores, pb.nodes[i].ncores);
        ck_assert_mem_eq (pa.nodes[i].cores, pb.nodes[i].cores,
                          pa.nodes[i].ncores * sizeof (int));
    }
    placement_free (&pa);
    placement_free (&pb);
}

START_TEST (test_replay_is_identical)
{
    struct ledger *l = mk ();
    struct op ops[600];
    uint64_t held[600];
    int n = 0, nheld = 0;
    unsigned seed = 12345;
    for (int step = 0; step < 600; step++) {
        seed = seed * 1103515245u + 12345u;
        if (nheld > 0 && (seed >> 16) % 3 == 0) {
            int k = (int) ((seed >> 8) % (unsigned) nheld);
            ck_assert_int_eq (ledger_release (l, held[k], &err), 0);
            ops[n++] = (struct op) { false, { 0 }, held[k] };
            held[k] = held[--nheld];
            continue;
        }
        struct step_shape s = shape_of (seed >> 4);
        uint64_t id;
        int rc = ledger_acquire (l, &s, LEDGER_CPU_BINDING, &id, NULL, 0, &err);
        ck_assert_int_ge (rc, 0);
        if (rc == 0) {
            ops[n++] = (struct op) { true, s, id };
            held[nheld++] = id;
        }
    }
    ck_assert_int_gt (nheld, 0);
    struct ledger *r = mk ();
    for (int i = 0; i < n; i++) {
        if (!ops[i].acquire) {
            ck_assert_int_eq (ledger_release (r, ops[i].id, &err), 0);
            continue;
        }
        uint64_t id;
        ck_assert_int_eq (ledger_acquire (r, &ops[i].shape, LEDGER_CPU_BINDING,
                                          &id, NULL, 0, &err), 0);
        ck_assert_uint_eq (id, ops[i].id);
    }
    for (int i = 0; i < nheld; i++)
        same_lease (l, r, held[i]);
    ck_assert_int_eq (ledger_check_invariants (r, &err), 0);
    ledger_destroy (l);
    ledger_destroy (r);
}
END_TEST

START_TEST (test_skip_ids)
{
    struct ledger *a = mk (), *b = mk ();
    struct step_shape s = shape_of (3 * 7);
    uint64_t id, want;
    /* a: ids 1 and 2 placed and released unjournaled, then 3 granted */
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq (ledger_acquire (a, &s, LEDGER_CPU_BINDING, &id, NULL,
                                          0, &err), 0);
        ck_assert_int_eq (ledger_release (a, id, &err), 0);
    }
    ck_assert_int_eq (ledger_acquire (a, &s, LEDGER_CPU_BINDING, &want, NULL,
                                      0, &err), 0);
    ck_assert_uint_eq (want, 3);
    /* b: skip forward the way the journal replay does */
    for (;;) {
        ck_assert_int_eq (ledger_acquire (b, &s, LEDGER_CPU_BINDING, &id, NULL,
                                          0, &err), 0);
        if (id == want)
            break;
        ck_assert_int_eq (ledger_release (b, id, &err), 0);
    }
    same_lease (a, b, want);
    ledger_destroy (a);
    ledger_destroy (b);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("replay");
    TCase *tc = tcase_create ("replay");
    tcase_add_test (tc, test_replay_is_identical);
    tcase_add_test (tc, test_skip_ids);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
