/* SPDX-License-Identifier: MIT */
/* The ledger: packing rules, leases, refusals, and the conservation
 * invariant after every operation (randomized too). */
#include <stdio.h>
#include <string.h>

#include "ledger.h"
#include "testutil.h"

static berth_error_t err;
static char why[512];
static char names[1024][16];
static int seq_ids[256];

static void check (const struct ledger *l)
{
    ck_assert_msg (ledger_check_invariants (l, &err) == 0, "invariants: %s",
                   err.text);
}

/* n nodes of ids 0..cores-1. */
static struct ledger *mk (int n, int cores, int gpus, int64_t mem, int local)
{
    struct ledger_node_spec spec[1024];
    for (int i = 0; i < 256; i++)
        seq_ids[i] = i;
    for (int i = 0; i < n; i++) {
        snprintf (names[i], sizeof (names[i]), "n%d", i);
        spec[i] = (struct ledger_node_spec) { names[i], seq_ids, cores, gpus,
                                              mem };
    }
    struct ledger *l = ledger_create (spec, n, local, &err);
    ck_assert_msg (l != NULL, "%s", err.text);
    check (l);
    return l;
}

static struct step_shape single (int cores, int gpus, int64_t budget)
{
    return (struct step_shape) { .ntasks = 1, .cpus_per_task = cores,
                                 .cores = cores, .gpus = gpus, .memory = -1,
                                 .budget = budget };
}

static struct step_shape ranks (int ntasks, int cpt, int gpus, int64_t budget)
{
    return (struct step_shape) { .mpi = true, .ntasks = ntasks,
                                 .cpus_per_task = cpt, .cores = ntasks * cpt,
                                 .gpus = gpus, .memory = -1, .budget = budget,
                                 .may_span = true };
}

static uint64_t acq (struct ledger *l, struct step_shape sh,
                     enum ledger_layout lay)
{
    uint64_t id = 0;
    int rc = ledger_acquire (l, &sh, lay, &id, why, sizeof (why), &err);
    ck_assert_msg (rc == 0, "not granted (%d): %s %s", rc, why, err.text);
    ck_assert_str_eq (why, "");
    check (l);
    return id;
}

static void nofit (struct ledger *l, struct step_shape sh,
                   enum ledger_layout lay, const char *expect)
{
    uint64_t id = 777;
    int rc = ledger_acquire (l, &sh, lay, &id, why, sizeof (why), &err);
    ck_assert_int_eq (rc, 1);
    ck_assert_int_eq (id, 777);
    ck_assert_msg (strstr (why, expect), "'%s' not in '%s'", expect, why);
    check (l);
}

static void rel (struct ledger *l, uint64_t id)
{
    ck_assert_msg (ledger_release (l, id, &err) == 0, "%s", err.text);
    check (l);
}

static const char *list (const int *ids, int n)
{
    static char buf[4096];
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        len += snprintf (buf + len, sizeof (buf) - len, "%s%d", i ? "," : "",
                         ids[i]);
    return buf;
}

static const struct ledger_lease_node *at (struct ledger *l, uint64_t id,
                                           int i)
{
    const struct ledger_lease *ls = ledger_lease_find (l, id);
    ck_assert_ptr_nonnull (ls);
    ck_assert_int_lt (i, ls->nnodes);
    return &ls->nodes[i];
}

static void on (struct ledger *l, uint64_t id, int node, const char *cores)
{
    const struct ledger_lease_node *n = at (l, id, 0);
    ck_assert_int_eq (ledger_lease_find (l, id)->nnodes, 1);
    ck_assert_int_eq (n->node, node);
    ck_assert_str_eq (list (n->cores, n->ncores), cores);
}

static void create_fails (const struct ledger_node_spec *spec, int n,
                          int local, const char *expect)
{
    ck_assert_ptr_null (ledger_create (spec, n, local, &err));
    ck_assert_msg (strstr (err.text, expect), "'%s' not in '%s'", expect,
                   err.text);
}

START_TEST (create_errors)
{
    int ids[] = { 0, 1, 1 }, bad[] = { -1 }, huge[] = { 1 << 20 };
    struct ledger_node_spec s[2] = { { "a", ids, 2, 0, -1 },
                                     { "b", ids, 2, 0, -1 } };
    create_fails (s, 0, -1, "at least one node");
    create_fails (s, 2, 2, "node index 2 is not one of the 2");
    create_fails (s, 2, -2, "node index -2");
    s[1].name = "";
    create_fails (s, 2, -1, "node 1 has no name");
    s[1].name = "b";
    s[1].ncores = 0;
    create_fails (s, 2, -1, "node b has no usable cores");
    s[1].ncores = 3;
    create_fails (s, 2, -1, "node b lists core id 1 twice");
    s[1].name = "a";
    s[1].ncores = 2;
    create_fails (s, 2, -1, "node a is listed twice");
    s[1].name = "b";
    s[1].ncores = 2;
    s[1].gpus = 65;
    create_fails (s, 2, -1, "node b has 65 GPUs");
    s[1].gpus = 0;
    s[1].memory = -5;
    create_fails (s, 2, -1, "memory -5 MB");
    s[1].memory = -1;
    s[1].cores = bad;
    s[1].ncores = 1;
    create_fails (s, 2, -1, "core id -1 is outside");
    s[1].cores = huge;
    create_fails (s, 2, -1, "core id 1048576 is outside");
}
END_TEST

START_TEST (best_fit)
{
    struct ledger *l = mk (3, 8, 0, -1, -1);
    uint64_t a = acq (l, single (6, 0, -1), LEDGER_CPU_BINDING);
    on (l, a, 0, "0,1,2,3,4,5");                   /* lowest node on ties */
    uint64_t b = acq (l, single (3, 0, -1), LEDGER_CPU_BINDING);
    on (l, b, 1, "0,1,2");                          /* n0 has only 2 */
    uint64_t c = acq (l, single (2, 0, -1), LEDGER_CPU_BINDING);
    on (l, c, 0, "6,7");                            /* least room left */
    uint64_t d = acq (l, single (4, 0, -1), LEDGER_CPU_BINDING);
    on (l, d, 1, "3,4,5,6");                        /* 5 free beats 8 */
    struct ledger_node_info info;
    ledger_node_info (l, 1, &info);
    ck_assert_str_eq (info.name, "n1");
    ck_assert_int_eq (info.free_cores, 1);
    ck_assert_int_eq (info.leases, 2);
    ledger_node_info (l, 2, &info);
    ck_assert_int_eq (info.free_cores, 8);
    ck_assert_int_eq (info.leases, 0);
    ledger_destroy (l);
}
END_TEST

START_TEST (contiguity)
{
    struct ledger *l = mk (1, 8, 0, -1, -1);
    uint64_t x[4];
    for (int i = 0; i < 4; i++)
        x[i] = acq (l, single (2, 0, -1), LEDGER_CPU_BINDING);
    on (l, x[3], 0, "6,7");
    rel (l, x[1]);                                  /* free 2-3 */
    rel (l, x[3]);                                  /* free 2-3, 6-7 */
    uint64_t y = acq (l, single (3, 0, -1), LEDGER_CPU_BINDING);
    on (l, y, 0, "2,3,6");                          /* no run: lowest */
    rel (l, y);
    rel (l, x[2]);                                  /* free 2-7 */
    uint64_t z = acq (l, single (1, 0, -1), LEDGER_CPU_BINDING);
    on (l, z, 0, "2");
    rel (l, x[0]);                                  /* free 0-1, 3-7 */
    uint64_t w = acq (l, single (2, 0, -1), LEDGER_CPU_BINDING);
    on (l, w, 0, "0,1");                            /* the shortest run */
    rel (l, w);
    w = acq (l, single (3, 0, -1), LEDGER_CPU_BINDING);
    on (l, w, 0, "3,4,5");                          /* a run over lower ids */
    ledger_destroy (l);
}
END_TEST

START_TEST (any_core_ids)
{
    int frag[] = { 6, 0, 4, 2 }, run[] = { 40, 10, 11, 12, 41 };
    int seq[] = { 0, 1, 2, 3 };
    struct ledger_node_spec s[3] = { { "frag", frag, 4, 0, -1 },
                                     { "seq", seq, 4, 0, -1 },
                                     { "run", run, 5, 0, -1 } };
    struct ledger *l = ledger_create (s, 3, -1, &err);
    ck_assert_ptr_nonnull (l);
    check (l);
    /* Both first nodes have 4 free: the contiguous one wins over the
     * lower. */
    uint64_t a = acq (l, single (3, 0, -1), LEDGER_CPU_BINDING);
    on (l, a, 1, "0,1,2");
    uint64_t b = acq (l, single (3, 0, -1), LEDGER_CPU_BINDING);
    on (l, b, 0, "0,2,4");                          /* best fit, no run */
    uint64_t c = acq (l, single (2, 0, -1), LEDGER_CPU_BINDING);
    on (l, c, 2, "40,41");                          /* the shortest run */
    uint64_t d = acq (l, single (3, 0, -1), LEDGER_CPU_BINDING);
    on (l, d, 2, "10,11,12");
    struct step_capacity cap;
    ledger_capacity (l, &cap);
    ck_assert_int_eq (cap.nodes, 3);
    ck_assert_int_eq (cap.cores_per_node, 4);
    ck_assert_int_eq (cap.gpus_per_node, 0);
    ck_assert_int_eq (cap.memory_per_node, -1);
    ledger_destroy (l);
}
END_TEST

START_TEST (local_steps)
{
    struct ledger *l = mk (3, 8, 0, -1, 1);
    struct step_shape s = single (2, 0, -1);
    s.local = true;
    uint64_t a = acq (l, s, LEDGER_CPU_BINDING);
    on (l, a, 1, "0,1");
    s.cores = s.cpus_per_task = 6;
    uint64_t b = acq (l, s, LEDGER_CPU_BINDING);
    on (l, b, 1, "2,3,4,5,6,7");
    s.cores = s.cpus_per_task = 1;
    nofit (l, s, LEDGER_CPU_BINDING, "the daemon's node n1 has 0 free cores");
    ledger_destroy (l);
    l = mk (2, 8, 0, -1, -1);
    nofit (l, s, LEDGER_CPU_BINDING, "does not run on a node");
    ledger_destroy (l);
}
END_TEST

START_TEST (gpus)
{
    struct ledger *l = mk (2, 8, 4, -1, -1);
    uint64_t a = acq (l, single (1, 3, -1), LEDGER_CPU_BINDING);
    ck_assert_int_eq (at (l, a, 0)->node, 0);
    ck_assert_str_eq (list (at (l, a, 0)->gpus, 3), "0,1,2");
    uint64_t b = acq (l, single (1, 2, -1), LEDGER_CPU_BINDING);
    ck_assert_int_eq (at (l, b, 0)->node, 1);       /* n0 has one GPU */
    uint64_t c = acq (l, single (1, 1, -1), LEDGER_CPU_BINDING);
    ck_assert_int_eq (at (l, c, 0)->node, 0);       /* lowest on a tie */
    ck_assert_str_eq (list (at (l, c, 0)->gpus, 1), "3");
    nofit (l, single (1, 3, -1), LEDGER_CPU_BINDING,
           "no node with 1 free core and 3 free GPUs (best: 2)");
    /* A step without GPUs holds none, and says so. */
    uint64_t d = acq (l, single (2, 0, -1), LEDGER_CPU_BINDING);
    struct placement p;
    ck_assert_int_eq (ledger_lease_placement (l, ledger_lease_find (l, d), &p,
                                              &err), 0);
    ck_assert_int_eq (p.gpus, 0);
    ck_assert_ptr_null (p.gpu_ids);
    ck_assert_int_eq (p.nnodes, 1);
    free (p.nodes[0].name);
    free (p.nodes[0].cores);
    free (p.nodes);
    ledger_destroy (l);
}
END_TEST

START_TEST (memory)
{
    struct ledger *l = mk (2, 8, 0, 1000, -1);
    uint64_t a = acq (l, single (2, 0, 900), LEDGER_CPU_BINDING);
    ck_assert_int_eq (at (l, a, 0)->node, 0);
    ck_assert_int_eq (at (l, a, 0)->memory, 900);
    uint64_t b = acq (l, single (2, 0, 200), LEDGER_CPU_BINDING);
    ck_assert_int_eq (at (l, b, 0)->node, 1);       /* n0: 100 MB left */
    nofit (l, single (2, 0, 1000), LEDGER_CPU_BINDING,
           "no node with 2 free cores and 1000 MB of memory unbudgeted "
           "(best: 800)");
    struct ledger_node_info info;
    ledger_node_info (l, 0, &info);
    ck_assert_int_eq (info.memory, 1000);
    ck_assert_int_eq (info.unbudgeted, 100);
    rel (l, a);
    ledger_node_info (l, 0, &info);
    ck_assert_int_eq (info.unbudgeted, 1000);
    /* Unknown memory: nothing accounted. */
    ledger_destroy (l);
    l = mk (1, 8, 0, -1, -1);
    a = acq (l, single (2, 0, 5000), LEDGER_CPU_BINDING);
    ck_assert_int_eq (at (l, a, 0)->memory, 0);
    ledger_destroy (l);
}
END_TEST

/* When every step takes the default budget, packing is exactly packing on
 * cores alone. */
START_TEST (default_budgets_pack_like_cores)
{
    struct ledger *m = mk (4, 16, 0, 16 * 1000 + 7, -1);
    struct ledger *c = mk (4, 16, 0, -1, -1);
    uint64_t held[64];
    int nheld = 0;
    unsigned seed = 12345;
    for (int op = 0; op < 2000; op++) {
        seed = seed * 1103515245 + 12345;
        unsigned r = seed >> 16;
        if (nheld && (r % 3 == 0 || nheld == 64)) {
            int k = (r >> 2) % nheld;
            rel (m, held[k]);
            rel (c, held[k]);
            held[k] = held[--nheld];
            continue;
        }
        int cores = 1 + (r >> 3) % 20;
        struct step_shape s = cores > 16 ? ranks (cores, 1, 0, 0)
                                         : single (cores, 0, 0);
        s.budget = (int64_t) cores * (16 * 1000 + 7) / 16;
        uint64_t a, b;
        int ra = ledger_acquire (m, &s, LEDGER_CPU_BINDING, &a, why,
                                 sizeof (why), &err);
        s.budget = -1;
        int rb = ledger_acquire (c, &s, LEDGER_CPU_BINDING, &b, why,
                                 sizeof (why), &err);
        ck_assert_int_eq (ra, rb);
        check (m);
        check (c);
        if (ra)
            continue;
        ck_assert_int_eq (a, b);
        const struct ledger_lease *x = ledger_lease_find (m, a);
        const struct ledger_lease *y = ledger_lease_find (c, b);
        ck_assert_int_eq (x->nnodes, y->nnodes);
        for (int i = 0; i < x->nnodes; i++) {
            ck_assert_int_eq (x->nodes[i].node, y->nodes[i].node);
            ck_assert_str_eq (list (x->nodes[i].cores, x->nodes[i].ncores),
                              list (y->nodes[i].cores, y->nodes[i].ncores));
        }
        held[nheld++] = a;
    }
    ledger_destroy (m);
    ledger_destroy (c);
}
END_TEST

/* Hold cores 0..h-1 of node i (as a restart puts a lease back). */
static void hold_on (struct ledger *l, uint64_t id, int node, int h)
{
    struct ledger_lease_node ln = { .node = node, .cores = seq_ids,
                                    .ncores = h, .gpus = seq_ids };
    struct ledger_lease want = { .id = id, .nodes = &ln, .nnodes = 1,
                                 .shape = single (h, 0, -1),
                                 .layout = LEDGER_CPU_BINDING, .est_end = -1 };
    ck_assert_msg (ledger_restore (l, &want, &err) == 0, "%s", err.text);
}

START_TEST (span_fewest_nodes)
{
    struct ledger *l = mk (4, 8, 0, -1, -1);
    uint64_t a = acq (l, ranks (12, 1, 0, -1), LEDGER_CPU_BINDING);
    const struct ledger_lease *ls = ledger_lease_find (l, a);
    ck_assert_int_eq (ls->nnodes, 2);
    for (int i = 0; i < 2; i++)
        ck_assert_str_eq (list (ls->nodes[i].cores, ls->nodes[i].ncores),
                          "0,1,2,3,4,5");
    /* Fits one node: one node, even though it may span. */
    uint64_t b = acq (l, ranks (2, 2, 0, -1), LEDGER_CPU_BINDING);
    ck_assert_int_eq (ledger_lease_find (l, b)->nnodes, 1);
    on (l, b, 2, "0,1,2,3");
    rel (l, b);
    acq (l, single (5, 0, -1), LEDGER_CPU_BINDING);     /* n2: 0-4 */
    acq (l, single (5, 0, -1), LEDGER_CPU_BINDING);     /* n3: 0-4 */
    /* Free: n0, n1 6-7; n2, n3 5-7. 4 tasks of 2 cores: only one per node
     * fits, so four nodes, all on 6-7. */
    uint64_t c = acq (l, ranks (4, 2, 0, -1), LEDGER_SCHEDULER);
    ls = ledger_lease_find (l, c);
    ck_assert_int_eq (ls->nnodes, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_str_eq (list (ls->nodes[i].cores, ls->nodes[i].ncores),
                          "6,7");
    ledger_destroy (l);
    /* n0 holds 0-3, n1 4-7: no common ids. Where the launcher binds 8
     * tasks wait for them; where the scheduler picks, each node gives its
     * own (the ids are bookkeeping there). */
    l = mk (2, 8, 0, -1, -1);
    hold_on (l, 100, 0, 4);
    struct ledger_lease_node hi = { .node = 1, .cores = seq_ids + 4,
                                    .ncores = 4, .gpus = seq_ids };
    struct ledger_lease want = { .id = 101, .nodes = &hi, .nnodes = 1,
                                 .shape = single (4, 0, -1), .est_end = -1 };
    ck_assert_msg (ledger_restore (l, &want, &err) == 0, "%s", err.text);
    nofit (l, ranks (8, 1, 0, -1), LEDGER_CPU_BINDING,
           "no 2 nodes with the same 4 free core ids");
    ck_assert_ptr_null (strstr (why, "add up"));
    c = acq (l, ranks (8, 1, 0, -1), LEDGER_SCHEDULER);
    ls = ledger_lease_find (l, c);
    ck_assert_int_eq (ls->nnodes, 2);
    ck_assert_str_eq (list (ls->nodes[0].cores, 4), "4,5,6,7");
    ck_assert_str_eq (list (ls->nodes[1].cores, 4), "0,1,2,3");
    ledger_destroy (l);
}
END_TEST

START_TEST (span_block_layout)
{
    /* 800 ranks on 13 nodes: 7 x 62 + 6 x 61 where the launcher binds. */
    struct ledger *l = mk (13, 64, 0, -1, -1);
    uint64_t a = acq (l, ranks (800, 1, 0, -1), LEDGER_CPU_BINDING);
    const struct ledger_lease *ls = ledger_lease_find (l, a);
    ck_assert_int_eq (ls->nnodes, 13);
    int total = 0;
    for (int i = 0; i < 13; i++) {
        ck_assert_int_eq (ls->nodes[i].ncores, i < 7 ? 62 : 61);
        ck_assert (!memcmp (ls->nodes[i].cores, ls->nodes[0].cores,
                            ls->nodes[i].ncores * sizeof (int)));
        total += ls->nodes[i].ncores;
    }
    ck_assert_int_eq (total, 800);
    rel (l, a);
    /* Where the scheduler picks, the same split: the launch names each
     * node's count (srun -m arbitrary), so nothing is held idle. */
    a = acq (l, ranks (800, 1, 0, -1), LEDGER_SCHEDULER);
    ls = ledger_lease_find (l, a);
    total = 0;
    for (int i = 0; i < 13; i++) {
        ck_assert_int_eq (ls->nodes[i].ncores, i < 7 ? 62 : 61);
        total += ls->nodes[i].ncores;
    }
    ck_assert_int_eq (total, 800);
    rel (l, a);
    /* Tasks of 3 cores: 10 tasks on 2 nodes of 64. */
    a = acq (l, ranks (50, 3, 0, -1), LEDGER_CPU_BINDING);
    ls = ledger_lease_find (l, a);
    ck_assert_int_eq (ls->nnodes, 3);       /* at most 21 tasks a node */
    ck_assert_int_eq (ls->nodes[0].ncores, 51);
    ck_assert_int_eq (ls->nodes[1].ncores, 51);
    ck_assert_int_eq (ls->nodes[2].ncores, 48);
    ledger_destroy (l);
}
END_TEST

START_TEST (span_same_ids)
{
    struct ledger *l = mk (3, 8, 0, -1, 1);
    uint64_t a = acq (l, single (2, 0, -1), LEDGER_CPU_BINDING);
    on (l, a, 0, "0,1");
    struct step_shape loc = single (3, 0, -1);
    loc.local = true;
    uint64_t b = acq (l, loc, LEDGER_CPU_BINDING);
    on (l, b, 1, "0,1,2");
    /* n1 free 3-7, n0 free 2-7: both hold 3-7; n2 stays whole. */
    uint64_t c = acq (l, ranks (10, 1, 0, -1), LEDGER_CPU_BINDING);
    const struct ledger_lease *ls = ledger_lease_find (l, c);
    ck_assert_int_eq (ls->nnodes, 2);
    ck_assert_int_eq (ls->nodes[0].node, 1);
    ck_assert_int_eq (ls->nodes[1].node, 0);
    for (int i = 0; i < 2; i++)
        ck_assert_str_eq (list (ls->nodes[i].cores, ls->nodes[i].ncores),
                          "3,4,5,6,7");
    ledger_destroy (l);

    /* Free ids that differ between nodes do not make a spanning step. */
    l = mk (2, 8, 0, -1, 1);
    a = acq (l, single (6, 0, -1), LEDGER_CPU_BINDING);
    b = acq (l, single (2, 0, -1), LEDGER_CPU_BINDING);
    on (l, b, 0, "6,7");
    rel (l, a);
    loc.cores = loc.cpus_per_task = 2;
    acq (l, loc, LEDGER_CPU_BINDING);               /* n1: 0-1 */
    nofit (l, ranks (12, 1, 0, -1), LEDGER_CPU_BINDING,
           "no 2 nodes with the same 6 free core ids");
    nofit (l, ranks (16, 1, 0, -1), LEDGER_CPU_BINDING,
           "no 2 nodes with 8 free cores (best: 6, 6)");
    ledger_destroy (l);
}
END_TEST

START_TEST (span_gpus_and_memory)
{
    struct ledger *l = mk (3, 8, 4, 800, -1);
    uint64_t a = acq (l, single (1, 1, 100), LEDGER_CPU_BINDING);
    ck_assert_str_eq (list (at (l, a, 0)->gpus, 1), "0");
    /* 6 GPUs over 2 nodes: 3 each, the same indices. */
    uint64_t b = acq (l, ranks (4, 1, 6, 400), LEDGER_CPU_BINDING);
    const struct ledger_lease *ls = ledger_lease_find (l, b);
    ck_assert_int_eq (ls->nnodes, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_str_eq (list (ls->nodes[i].gpus, ls->nodes[i].ngpus),
                          "1,2,3");
        ck_assert_int_eq (ls->nodes[i].memory, 200);
    }
    struct placement p;
    ck_assert_int_eq (ledger_lease_placement (l, ls, &p, &err), 0);
    ck_assert_int_eq (p.nnodes, 2);
    ck_assert_int_eq (p.gpus, 6);
    ck_assert_str_eq (list (p.gpu_ids, p.ngpu_ids), "1,2,3");
    ck_assert_str_eq (p.nodes[0].name, "n0");
    ck_assert_str_eq (list (p.nodes[1].cores, p.nodes[1].ncores), "1,2");
    for (int i = 0; i < p.nnodes; i++) {
        free (p.nodes[i].name);
        free (p.nodes[i].cores);
    }
    free (p.nodes);
    free (p.gpu_ids);
    rel (l, b);
    rel (l, a);
    /* Block layout of GPUs too: 5 GPUs on 2 nodes is 3 + 2, a prefix. */
    b = acq (l, ranks (10, 1, 5, -1), LEDGER_CPU_BINDING);
    ls = ledger_lease_find (l, b);
    ck_assert_int_eq (ls->nnodes, 2);
    ck_assert_str_eq (list (ls->nodes[0].gpus, ls->nodes[0].ngpus), "0,1,2");
    ck_assert_str_eq (list (ls->nodes[1].gpus, ls->nodes[1].ngpus), "0,1");
    rel (l, b);
    /* Memory in proportion to cores: 20 ranks on 3 nodes, 7 + 7 + 6. */
    b = acq (l, ranks (20, 1, 0, 2000), LEDGER_CPU_BINDING);
    ls = ledger_lease_find (l, b);
    ck_assert_int_eq (ls->nnodes, 3);
    ck_assert_int_eq (ls->nodes[0].memory, 700);
    ck_assert_int_eq (ls->nodes[2].memory, 600);
    rel (l, b);
    /* Where the scheduler picks: the same 7 + 7 + 6, memory likewise. */
    b = acq (l, ranks (20, 1, 0, 2000), LEDGER_SCHEDULER);
    ls = ledger_lease_find (l, b);
    ck_assert_int_eq (ls->nodes[2].ncores, 6);
    ck_assert_int_eq (ls->nodes[2].memory, 600);
    /* Memory short on every node (100, 100 and 200 MB left). */
    nofit (l, ranks (3, 1, 0, 600), LEDGER_CPU_BINDING,
           "no 2 nodes with 2 free cores and 400 MB of memory unbudgeted "
           "(best: 200, 100)");
    ledger_destroy (l);
}
END_TEST

static int lease_cores (const struct ledger_lease *ls)
{
    int n = 0;
    for (int i = 0; i < ls->nnodes; i++)
        n += ls->nodes[i].ncores;
    return n;
}

/* Where the scheduler picks the cores (srun -m arbitrary can name each
 * task's node) a span goes where free cores add up to it, and takes no more
 * than it asked; where the launcher binds (PALS --ppn, old srun) the even
 * layout stays and the reason says why. */
START_TEST (span_uneven)
{
    /* 4 nodes of 128, 12 cores held on n0: 116 + 3 x 128 free. */
    struct ledger *l = mk (4, 128, 0, -1, -1);
    hold_on (l, 100, 0, 12);
    uint64_t a = acq (l, ranks (500, 1, 0, -1), LEDGER_SCHEDULER);
    const struct ledger_lease *ls = ledger_lease_find (l, a);
    ck_assert_int_eq (ls->nnodes, 4);
    ck_assert_int_eq (ls->nodes[0].node, 0);
    ck_assert_int_eq (ls->nodes[0].ncores, 116);
    ck_assert_str_eq (list (ls->nodes[0].cores, 3), "12,13,14");
    for (int i = 1; i < 4; i++)
        ck_assert_int_eq (ls->nodes[i].ncores, 128);
    rel (l, a);
    nofit (l, ranks (500, 1, 0, -1), LEDGER_CPU_BINDING,
           "no 4 nodes with 125 free cores (best: 128, 128, 128, 116); the "
           "free cores add up to 500, but this launcher runs as many tasks "
           "on every node");
    /* One more than is free: the reason gives the sum. */
    nofit (l, ranks (501, 1, 0, -1), LEDGER_SCHEDULER,
           "no 4 nodes with 501 free cores between them: 500 free");
    ledger_destroy (l);

    /* The empty job: 510 tasks take 510 cores, 128 + 128 + 127 + 127. */
    l = mk (4, 128, 0, -1, -1);
    a = acq (l, ranks (510, 1, 0, -1), LEDGER_SCHEDULER);
    ls = ledger_lease_find (l, a);
    ck_assert_int_eq (lease_cores (ls), 510);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq (ls->nodes[i].ncores, i < 2 ? 128 : 127);
    rel (l, a);
    /* 129 tasks: 65 + 64; 166 tasks of 3 cores: 498 cores, 42 + 42 + 41 +
     * 41 tasks. */
    a = acq (l, ranks (129, 1, 0, -1), LEDGER_SCHEDULER);
    ck_assert_int_eq (lease_cores (ledger_lease_find (l, a)), 129);
    rel (l, a);
    a = acq (l, ranks (166, 3, 0, -1), LEDGER_SCHEDULER);
    ls = ledger_lease_find (l, a);
    ck_assert_int_eq (lease_cores (ls), 498);
    for (int i = 0; i < ls->nnodes; i++)
        ck_assert_int_eq (ls->nodes[i].ncores % 3, 0);
    rel (l, a);
    /* Memory by share of the cores: 18 tasks, 1800 MB, where one node has
     * room for 3 tasks' share only (300 MB): 3 + 8 + 7. */
    ledger_destroy (l);
    l = mk (3, 8, 0, 1000, -1);
    struct step_shape mem = single (1, 0, 700);
    uint64_t m = acq (l, mem, LEDGER_SCHEDULER);
    int mnode = ledger_lease_find (l, m)->nodes[0].node;
    a = acq (l, ranks (18, 1, 0, 1800), LEDGER_SCHEDULER);
    ls = ledger_lease_find (l, a);
    ck_assert_int_eq (lease_cores (ls), 18);
    int64_t charged = 0;
    for (int i = 0; i < ls->nnodes; i++) {
        charged += ls->nodes[i].memory;
        ck_assert_int_eq (ls->nodes[i].memory, 100 * ls->nodes[i].ncores);
        if (ls->nodes[i].node == mnode)
            ck_assert_int_eq (ls->nodes[i].ncores, 3);
    }
    ck_assert_int_eq (charged, 1800);
    rel (l, a);
    /* 20 tasks: room for 19; the reason names the memory */
    nofit (l, ranks (20, 1, 0, 2000), LEDGER_SCHEDULER,
           "no 3 nodes with 20 free cores and 2000 MB of memory unbudgeted "
           "between them: room for 19 of 20 tasks");
    ledger_destroy (l);
}
END_TEST

/* On 4 nodes of 128 with every mix of held cores, each spanning request is
 * placed exactly when a first fit of its tasks on each node's free cores
 * places it (the reference), on the fewest nodes that reference needs, with
 * exactly the cores asked, each node a whole number of tasks. */
START_TEST (span_uneven_grid)
{
    static const int held[] = { 0, 12, 64, 127 };
    static const int req[][2] = { { 129, 1 }, { 200, 1 }, { 300, 1 },
                                  { 500, 1 }, { 510, 1 }, { 166, 3 },
                                  { 100, 5 } };
    int cases = 0, placed = 0, binding_waits = 0;
    for (int mix = 0; mix < 256; mix++) {
        for (size_t q = 0; q < sizeof (req) / sizeof (req[0]); q++) {
            int n = req[q][0], c = req[q][1], h[4], room[4], total = 0;
            struct ledger *l = mk (4, 128, 0, -1, -1);
            for (int i = 0; i < 4; i++) {
                h[i] = held[(mix >> (2 * i)) & 3];
                if (h[i])
                    hold_on (l, 100 + i, i, h[i]);
                room[i] = (128 - h[i]) / c;
                total += room[i];
            }
            /* the reference: fewest nodes, most room first */
            int sorted[4], k = 0, sum = 0;
            memcpy (sorted, room, sizeof (sorted));
            for (int i = 0; i < 4; i++)
                for (int j = i + 1; j < 4; j++)
                    if (sorted[j] > sorted[i]) {
                        int t = sorted[i];
                        sorted[i] = sorted[j];
                        sorted[j] = t;
                    }
            while (k < 4 && sum < n)
                sum += sorted[k++];
            struct step_shape sh = ranks (n, c, 0, -1);
            uint64_t id;
            int rc = ledger_acquire (l, &sh, LEDGER_SCHEDULER, &id, why,
                                     sizeof (why), &err);
            ck_assert_int_ge (rc, 0);
            check (l);
            cases++;
            ck_assert_msg ((rc == 0) == (total >= n), "mix %d: %d x %d: "
                           "rc %d, reference %d free tasks: %s", mix, n, c,
                           rc, total, why);
            if (rc == 0) {
                placed++;
                const struct ledger_lease *ls = ledger_lease_find (l, id);
                ck_assert_int_eq (lease_cores (ls), n * c);
                ck_assert_int_eq (ls->nnodes, k);
                for (int i = 0; i < ls->nnodes; i++) {
                    const struct ledger_lease_node *ln = &ls->nodes[i];
                    ck_assert_int_eq (ln->ncores % c, 0);
                    ck_assert_int_le (ln->ncores / c, room[ln->node]);
                }
                rel (l, id);
                binding_waits += ledger_acquire (l, &sh, LEDGER_CPU_BINDING,
                                                 &id, why, sizeof (why),
                                                 &err) == 1;
            }
            ledger_destroy (l);
        }
    }
    ck_assert_int_eq (cases, 1792);
    ck_assert_int_gt (placed, 500);
    /* the even layout waits in some of them: what the launcher costs */
    ck_assert_int_gt (binding_waits, 0);
}
END_TEST

START_TEST (release_errors)
{
    struct ledger *l = mk (2, 8, 0, 100, -1);
    uint64_t a = acq (l, single (3, 0, 30), LEDGER_CPU_BINDING);
    char name[16];
    ledger_lease_name (a, name, sizeof (name));
    ck_assert_str_eq (name, "L1");
    ck_assert_int_eq (ledger_release (l, 99, &err), -1);
    ck_assert_str_eq (err.code, "not_found");
    ck_assert_ptr_nonnull (strstr (err.text, "no lease L99"));
    check (l);
    struct ledger_node_info info;
    ledger_node_info (l, 0, &info);
    ck_assert_int_eq (info.free_cores, 5);
    rel (l, a);
    ck_assert_int_eq (ledger_release (l, a, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "already released"));
    ledger_node_info (l, 0, &info);
    ck_assert_int_eq (info.free_cores, 8);
    ck_assert_int_eq (info.unbudgeted, 100);
    check (l);
    /* Ids are not reused. */
    uint64_t b = acq (l, single (1, 0, -1), LEDGER_CPU_BINDING);
    ck_assert_int_eq (b, 2);
    /* An invalid shape is an error, not a wait. */
    struct step_shape bad = single (0, 0, -1);
    ck_assert_int_eq (ledger_acquire (l, &bad, LEDGER_CPU_BINDING, &b, why,
                                      sizeof (why), &err), -1);
    ck_assert_str_eq (err.code, "invalid_request");
    ck_assert_ptr_nonnull (strstr (err.text, "invalid step shape"));
    ledger_destroy (l);
}
END_TEST

START_TEST (lease_list)
{
    struct ledger *l = mk (4, 8, 0, -1, -1);
    uint64_t ids[40];
    for (int i = 0; i < 32; i++)
        ids[i] = acq (l, single (1, 0, -1), LEDGER_CPU_BINDING);
    for (int i = 0; i < 32; i += 3)
        rel (l, ids[i]);
    const struct ledger_lease **v;
    int n;
    ck_assert_int_eq (ledger_leases (l, &v, &n, &err), 0);
    ck_assert_int_eq (n, 21);
    for (int i = 1; i < n; i++)
        ck_assert (v[i - 1]->id < v[i]->id);
    free (v);
    nofit (l, single (4, 0, -1), LEDGER_CPU_BINDING,
           "no node with 4 free cores (best: 3)");
    ledger_destroy (l);
}
END_TEST

/* Thousands of random acquires and releases; the invariant holds after
 * each, and every lease has what its shape asked for. */
/* The k busiest by walking every node: those with a lease, fewest free
 * cores first, ties in node order; every node when there are at most k. */
static int busiest_ref (const struct ledger *l, int *v, int k)
{
    int n = ledger_nnodes (l), m = 0;
    if (n <= k) {
        for (int i = 0; i < n; i++)
            v[m++] = i;
        return m;
    }
    for (int f = 0; f <= 256 && m < k; f++)
        for (int i = 0; i < n && m < k; i++) {
            struct ledger_node_info in;
            ledger_node_info (l, i, &in);
            if (in.leases > 0 && in.free_cores == f)
                v[m++] = i;
        }
    return m;
}

static void busiest_agrees (const struct ledger *l)
{
    int ks[] = { 1, 2, 7, 60, 300 };
    static int got[300], want[300];
    for (size_t j = 0; j < sizeof (ks) / sizeof (ks[0]); j++) {
        int k = ks[j];
        int n = ledger_busiest (l, got, k), m = busiest_ref (l, want, k);
        ck_assert_int_eq (n, m);
        for (int i = 0; i < n; i++)
            ck_assert_msg (got[i] == want[i], "k %d: busiest #%d is node %d, "
                           "not %d", k, i, got[i], want[i]);
    }
}

START_TEST (totals_and_busiest)
{
    /* 200 nodes: mostly 8 cores, every fifth 6 (a last bucket that holds
     * held nodes too), memory unknown on one */
    static int ids[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    struct ledger_node_spec spec[200];
    for (int i = 0; i < 200; i++) {
        snprintf (names[i], sizeof (names[i]), "b%d", i);
        spec[i] = (struct ledger_node_spec) { names[i], ids, i % 5 ? 8 : 6,
                                              i % 3 ? 1 : 0,
                                              i == 7 ? -1 : 1000 };
    }
    for (int pass = 0; pass < 2; pass++) {
        /* pass 1: all alike (8 cores, memory known) */
        if (pass == 1)
            for (int i = 0; i < 200; i++) {
                spec[i].ncores = 8;
                spec[i].memory = 1000;
            }
        struct ledger *l = ledger_create (spec, 200, -1, &err);
        ck_assert_msg (l != NULL, "%s", err.text);
        struct ledger_totals t;
        ledger_totals (l, &t);
        ck_assert_int_eq (t.nodes, 200);
        ck_assert_int_eq (t.idle, 200);
        ck_assert_int_eq (t.full, 0);
        ck_assert_int_eq (t.free_cores, t.cores);
        ck_assert_int_eq (t.memory, pass ? 200000 : -1);
        busiest_agrees (l);
        uint64_t held[400];
        int nheld = 0;
        unsigned seed = 7 + pass;
        for (int op = 0; op < 3000; op++) {
            seed = seed * 1103515245 + 12345;
            unsigned r = seed >> 8;
            if (nheld && (r % 3 == 0 || nheld == 400)) {
                int k = (r >> 3) % nheld;
                rel (l, held[k]);
                held[k] = held[--nheld];
            } else {
                struct step_shape sh = (r >> 4) % 4
                    ? single (1 + (r >> 6) % 8, (r >> 9) % 2, (r >> 10) % 300)
                    : ranks (2 + (r >> 6) % 20, 1, 0, -1);
                uint64_t id;
                int rc = ledger_acquire (l, &sh, LEDGER_CPU_BINDING, &id, NULL,
                                         0, &err);
                ck_assert_int_ge (rc, 0);
                if (rc == 0)
                    held[nheld++] = id;
                check (l);     /* the kept totals against the nodes */
            }
            if (op % 10 == 0)
                busiest_agrees (l);
        }
        /* within a round: reserved nodes are in no bucket */
        struct step_shape whole = single (8, 0, -1);
        int nodes[8];
        ck_assert_int_gt (ledger_reserve_for_at (l, &whole, LEDGER_CPU_BINDING,
                                                 0, nodes, 8), 0);
        busiest_agrees (l);
        ledger_unreserve (l);
        ledger_totals (l, &t);
        int64_t resident = 0;
        for (int i = 0; i < 200; i++) {
            struct ledger_node_info in;
            ledger_node_info (l, i, &in);
            resident += in.leases;
        }
        ck_assert_int_eq (t.resident, resident);
        while (nheld)
            rel (l, held[--nheld]);
        ledger_totals (l, &t);
        ck_assert_int_eq (t.idle, 200);
        ck_assert_int_eq (t.free_cores, t.cores);
        ck_assert_int_eq (t.free_gpus, t.gpus);
        ck_assert_int_eq (ledger_busiest (l, nodes, 8), 0);
        ledger_destroy (l);
    }
}
END_TEST

START_TEST (randomized)
{
    int odd[] = { 1, 2, 3, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
    struct ledger_node_spec spec[6];
    for (int i = 0; i < 6; i++) {
        snprintf (names[i], sizeof (names[i]), "r%d", i);
        spec[i] = (struct ledger_node_spec) { names[i], i == 5 ? odd : seq_ids,
                                              16, 4, i == 4 ? -1 : 1600 };
    }
    for (int i = 0; i < 256; i++)
        seq_ids[i] = i;
    struct ledger *l = ledger_create (spec, 6, 2, &err);
    ck_assert_ptr_nonnull (l);
    uint64_t held[128];
    int nheld = 0, granted = 0, spans = 0;
    unsigned seed = 42;
    for (int op = 0; op < 6000; op++) {
        seed = seed * 1103515245 + 12345;
        unsigned r = seed >> 8;
        if (nheld && (r % 5 < 2 || nheld == 128)) {
            int k = (r >> 3) % nheld;
            rel (l, held[k]);
            held[k] = held[--nheld];
            continue;
        }
        struct step_shape s;
        int kind = (r >> 3) % 4;
        if (kind == 0) {
            s = single (1 + (r >> 5) % 16, (r >> 9) % 3, -1);
            s.local = (r >> 11) % 4 == 0;
        } else {
            s = ranks (1 + (r >> 5) % 40, 1 + (r >> 11) % 3, (r >> 13) % 6,
                       -1);
        }
        if ((r >> 16) % 2)
            s.budget = (r >> 17) % 2000;
        enum ledger_layout lay = (r >> 20) % 2 ? LEDGER_SCHEDULER
                                               : LEDGER_CPU_BINDING;
        uint64_t id;
        int rc = ledger_acquire (l, &s, lay, &id, why, sizeof (why), &err);
        ck_assert_int_ge (rc, 0);
        check (l);
        if (rc == 1) {
            ck_assert (strlen (why) > 0);
            continue;
        }
        granted++;
        held[nheld++] = id;
        const struct ledger_lease *ls = ledger_lease_find (l, id);
        int cores = 0, gpus = 0;
        spans += ls->nnodes > 1;
        for (int i = 0; i < ls->nnodes; i++) {
            const struct ledger_lease_node *n = &ls->nodes[i];
            cores += n->ncores;
            gpus += n->ngpus;
            /* the same ids where the launcher binds; where the scheduler
             * picks, GPU spans keep the even layout (the same indices) */
            if (lay == LEDGER_CPU_BINDING || s.gpus) {
                ck_assert (n->ncores <= ls->nodes[0].ncores);
                ck_assert (lay == LEDGER_SCHEDULER
                           || !memcmp (n->cores, ls->nodes[0].cores,
                                       n->ncores * sizeof (int)));
            }
            ck_assert (!memcmp (n->gpus, ls->nodes[0].gpus,
                                n->ngpus * sizeof (int)));
            if (s.local)
                ck_assert_int_eq (n->node, 2);
        }
        /* never more cores than asked; GPUs ceil(N / k) a node where srun
         * spreads them */
        ck_assert_int_eq (cores, s.cores);
        if (lay == LEDGER_CPU_BINDING || ls->nnodes == 1)
            ck_assert_int_eq (gpus, s.gpus);
        else
            ck_assert_int_ge (gpus, s.gpus);
    }
    ck_assert_int_gt (granted, 1000);
    ck_assert_int_gt (spans, 100);
    while (nheld)
        rel (l, held[--nheld]);
    for (int i = 0; i < 6; i++) {
        struct ledger_node_info info;
        ledger_node_info (l, i, &info);
        ck_assert_int_eq (info.free_cores, 16);
        ck_assert_int_eq (info.free_gpus, 4);
        ck_assert_int_eq (info.unbudgeted, i == 4 ? -1 : 1600);
    }
    ledger_destroy (l);
}
END_TEST

/* Nodes reserved for a waiting request take nothing new until unreserved:
 * the fewest that could hold it, nearest to holding it; a reservation can
 * be made again on the same nodes; the invariant holds throughout. */
START_TEST (reservations)
{
    struct ledger *l = mk (4, 8, 0, -1, 0);
    uint64_t a = acq (l, single (6, 0, -1), LEDGER_CPU_BINDING);   /* n0 */
    acq (l, single (4, 0, -1), LEDGER_CPU_BINDING);                /* n1 */
    acq (l, single (7, 0, -1), LEDGER_CPU_BINDING);                /* n2 */
    acq (l, single (7, 0, -1), LEDGER_CPU_BINDING);                /* n3 */
    struct step_shape whole = single (8, 0, -1);
    int nodes[4];
    ck_assert_int_eq (ledger_reserve_for_at (l, &whole, LEDGER_CPU_BINDING, 0,
                                             nodes, 4), 1);
    ck_assert_int_eq (nodes[0], 1);      /* 4 free: the nearest to 8 */
    check (l);
    /* 3 cores fit only n1, which is held back */
    struct step_shape three = single (3, 0, -1);
    uint64_t id;
    ck_assert_int_eq (ledger_acquire (l, &three, LEDGER_CPU_BINDING, &id,
                                      NULL, 0, &err), 1);
    uint64_t one = acq (l, single (1, 0, -1), LEDGER_CPU_BINDING);
    ck_assert_int_ne (ledger_lease_find (l, one)->nodes[0].node, 1);
    /* a span of two whole nodes: nothing else may be held beside n1 ... */
    struct step_shape two = ranks (16, 1, 0, -1);
    ck_assert_int_eq (ledger_reserve_for_at (l, &two, LEDGER_CPU_BINDING, 0,
                                             nodes, 4), 2);
    ck_assert_int_eq (ledger_reserve_for_at (l, &two, LEDGER_CPU_BINDING, 0,
                                             nodes, 4), 0);
    ledger_unreserve (l);
    check (l);
    /* ... held again on the same nodes; a node held twice is refused */
    int again[2] = { 1, 0 };
    ck_assert_int_eq (ledger_reserve_nodes (l, again, 2), 0);
    ck_assert_int_eq (ledger_reserve_nodes (l, again, 1), -1);
    int bad = 9;
    ck_assert_int_eq (ledger_reserve_nodes (l, &bad, 1), -1);
    check (l);
    ck_assert_int_eq (ledger_release (l, a, &err), 0);   /* n0 frees while held */
    check (l);
    ledger_unreserve (l);
    check (l);
    acq (l, three, LEDGER_CPU_BINDING);
    /* a shape no node holds, and a local step on a ledger without a local
     * node, reserve nothing */
    struct step_shape huge = single (9, 0, -1);
    ck_assert_int_eq (ledger_reserve_for_at (l, &huge, LEDGER_CPU_BINDING, 0,
                                             nodes, 4), 0);
    ledger_destroy (l);
    l = mk (2, 8, 0, -1, -1);
    struct step_shape loc = single (1, 0, -1);
    loc.local = true;
    ck_assert_int_eq (ledger_reserve_for_at (l, &loc, LEDGER_CPU_BINDING, 0,
                                             nodes, 4), 0);
    ledger_destroy (l);
    /* the local node held back takes no local step */
    l = mk (2, 8, 0, -1, 0);
    ck_assert_int_eq (ledger_reserve_for_at (l, &loc, LEDGER_CPU_BINDING, 0,
                                             nodes, 4), 1);
    ck_assert_int_eq (nodes[0], 0);
    ck_assert_int_eq (ledger_acquire (l, &loc, LEDGER_CPU_BINDING, &id, NULL,
                                      0, &err), 1);
    ledger_unreserve (l);
    acq (l, loc, LEDGER_CPU_BINDING);
    ledger_destroy (l);
}
END_TEST

/* Expected ends: when nodes could hold a shape (a lease with no estimate,
 * or past it, may end at once), and which nodes a hold takes by them. */
START_TEST (estimated_ends)
{
    struct ledger *l = mk (3, 8, 0, -1, 0);
    uint64_t a = acq (l, single (6, 0, -1), LEDGER_CPU_BINDING);   /* n0 */
    uint64_t d = acq (l, single (7, 0, -1), LEDGER_CPU_BINDING);   /* n1 */
    uint64_t b = acq (l, single (4, 0, -1), LEDGER_CPU_BINDING);   /* n2 */
    uint64_t c = acq (l, single (3, 0, -1), LEDGER_CPU_BINDING);   /* n2 */
    ck_assert_int_eq (ledger_lease_find (l, c)->nodes[0].node, 2);
    ck_assert (ledger_lease_find (l, a)->est_end < 0);
    ck_assert_int_eq (ledger_lease_set_end (l, a, 100), 0);
    ck_assert_int_eq (ledger_lease_set_end (l, d, 30), 0);
    ck_assert_int_eq (ledger_lease_set_end (l, b, 50), 0);
    ck_assert_int_eq (ledger_lease_set_end (l, 999, 50), -1);
    ck_assert (ledger_lease_find (l, a)->est_end == 100);
    struct step_shape whole = single (8, 0, -1), four = single (4, 0, -1);
    int n0 = 0, n1 = 1, n2 = 2, n01[2] = { 0, 1 }, bad = 7;
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, &n0, 1, 10)
               == 100);
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, &n1, 1, 10)
               == 30);
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, n01, 2, 10)
               == 100);
    /* n2: c has no estimate, so it may end now; b still ends at 50 */
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, &n2, 1, 10)
               == 50);
    ck_assert (ledger_ready_at (l, &four, LEDGER_CPU_BINDING, &n2, 1, 10)
               == 10);
    /* d ran past its estimate: it may end at any moment */
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, &n1, 1, 40)
               == 40);
    struct step_shape huge = single (9, 0, -1);
    ck_assert (ledger_ready_at (l, &huge, LEDGER_CPU_BINDING, &n0, 1, 10)
               == -1);
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, &bad, 1, 10)
               == -1);
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, &n0, 0, 10)
               == -1);
    /* by free cores n0 is nearest to 8, but by expected ends n1 is (30),
     * and n2 waits on a lease with no estimate */
    int nodes[3];
    ck_assert_int_eq (ledger_reserve_for_at (l, &whole, LEDGER_CPU_BINDING,
                                             10, nodes, 3), 1);
    ck_assert_int_eq (nodes[0], 1);
    ledger_unreserve (l);
    struct step_shape two = ranks (16, 1, 0, -1);
    ck_assert_int_eq (ledger_reserve_for_at (l, &two, LEDGER_CPU_BINDING, 10,
                                             nodes, 3), 2);
    ck_assert_int_eq (nodes[0], 1);
    ck_assert_int_eq (nodes[1], 0);
    ck_assert (ledger_ready_at (l, &two, LEDGER_CPU_BINDING, nodes, 2, 10)
               == 100);
    check (l);
    ledger_unreserve (l);
    ck_assert_int_eq (ledger_lease_set_end (l, a, -5), 0);
    ck_assert (ledger_lease_find (l, a)->est_end < 0);
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, &n0, 1, 10)
               == 10);
    ck_assert_int_eq (ledger_release (l, a, &err), 0);
    ck_assert (ledger_ready_at (l, &whole, LEDGER_CPU_BINDING, &n0, 1, 10)
               == 10);
    ledger_destroy (l);
}
END_TEST

/* The start berth run -v shows: by the estimates only (a lease with none
 * gives none), at the fewest nodes that hold the shape soonest. */
START_TEST (start_estimate)
{
    struct ledger *l = mk (3, 8, 0, -1, 0);
    uint64_t a = acq (l, single (6, 0, -1), LEDGER_CPU_BINDING);   /* n0 */
    uint64_t d = acq (l, single (7, 0, -1), LEDGER_CPU_BINDING);   /* n1 */
    uint64_t b = acq (l, single (8, 0, -1), LEDGER_CPU_BINDING);   /* n2 */
    struct step_shape whole = single (8, 0, -1), two = ranks (16, 1, 0, -1);
    struct step_shape small = single (2, 0, -1), huge = single (9, 0, -1);
    /* none stated: nothing to go by */
    ck_assert (ledger_start_estimate (l, &whole, LEDGER_CPU_BINDING, 10) == -1);
    ck_assert (ledger_start_estimate (l, &small, LEDGER_CPU_BINDING, 10) == 10);
    ck_assert_int_eq (ledger_lease_set_end (l, d, 30), 0);
    ck_assert (ledger_start_estimate (l, &whole, LEDGER_CPU_BINDING, 10) == 30);
    /* two nodes: n1 at 30, then n0 or n2: neither stated an end */
    ck_assert (ledger_start_estimate (l, &two, LEDGER_CPU_BINDING, 10) == -1);
    ck_assert_int_eq (ledger_lease_set_end (l, b, 50), 0);
    ck_assert_int_eq (ledger_lease_set_end (l, a, 100), 0);
    ck_assert (ledger_start_estimate (l, &two, LEDGER_CPU_BINDING, 10) == 50);
    /* past its estimate: any moment now */
    ck_assert (ledger_start_estimate (l, &whole, LEDGER_CPU_BINDING, 40) == 40);
    ck_assert (ledger_start_estimate (l, &huge, LEDGER_CPU_BINDING, 10) == -1);
    check (l);
    ledger_destroy (l);
}
END_TEST

START_TEST (many_nodes)
{
    struct ledger *l = mk (1000, 128, 4, 512000, 0);
    uint64_t a = acq (l, ranks (64 * 128, 1, 256, 64 * 512000),
                      LEDGER_SCHEDULER);
    ck_assert_int_eq (ledger_lease_find (l, a)->nnodes, 64);
    uint64_t b = acq (l, single (4, 0, -1), LEDGER_CPU_BINDING);
    on (l, b, 64, "0,1,2,3");
    rel (l, a);
    uint64_t c = acq (l, single (4, 0, -1), LEDGER_CPU_BINDING);
    on (l, c, 64, "4,5,6,7");                       /* best fit */
    ledger_destroy (l);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("ledger");
    TCase *tc = tcase_create ("ledger");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, create_errors);
    tcase_add_test (tc, best_fit);
    tcase_add_test (tc, contiguity);
    tcase_add_test (tc, any_core_ids);
    tcase_add_test (tc, local_steps);
    tcase_add_test (tc, gpus);
    tcase_add_test (tc, memory);
    tcase_add_test (tc, default_budgets_pack_like_cores);
    tcase_add_test (tc, span_fewest_nodes);
    tcase_add_test (tc, span_block_layout);
    tcase_add_test (tc, span_same_ids);
    tcase_add_test (tc, span_gpus_and_memory);
    tcase_add_test (tc, span_uneven);
    tcase_add_test (tc, span_uneven_grid);
    tcase_add_test (tc, release_errors);
    tcase_add_test (tc, lease_list);
    tcase_add_test (tc, randomized);
    tcase_add_test (tc, totals_and_busiest);
    tcase_add_test (tc, reservations);
    tcase_add_test (tc, estimated_ends);
    tcase_add_test (tc, start_estimate);
    tcase_add_test (tc, many_nodes);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
