/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "placement.h"
#include "testutil.h"

/* Build a placement by hand: names[i] with cores[i][0..ncores[i]). */
static struct placement mk (int nnodes, const char *const *names,
                            const int *const *cores, const int *ncores)
{
    struct placement p = { 0 };
    p.nnodes = nnodes;
    p.nodes = calloc ((size_t)nnodes, sizeof (*p.nodes));
    for (int i = 0; i < nnodes; i++) {
        p.nodes[i].name = names[i] ? strdup (names[i]) : NULL;
        p.nodes[i].ncores = ncores[i];
        p.nodes[i].cores = ncores[i] ? malloc ((size_t)ncores[i] * sizeof (int)) : NULL;
        if (ncores[i])
            memcpy (p.nodes[i].cores, cores[i], (size_t)ncores[i] * sizeof (int));
    }
    return p;
}

static void bad (const struct placement *p, const char *needle)
{
    berth_error_t err = { 0 };
    ck_assert_int_eq (placement_validate (p, &err), -1);
    ck_assert_msg (strstr (err.text, needle), "want \"%s\", got \"%s\"", needle, err.text);
}

START_TEST (validate_ok)
{
    struct placement p = mk (2, (const char *[]){ "nid1", "nid2" },
                             (const int *[]){ (int[]){ 0, 1 }, (int[]){ 0, 1 } },
                             (int[]){ 2, 2 });
    ck_assert_int_eq (placement_validate (&p, NULL), 0);
    p.gpus = 2;
    ck_assert_int_eq (placement_validate (&p, NULL), 0);   /* ids optional */
    p.gpu_ids = malloc (2 * sizeof (int));
    p.gpu_ids[0] = 3;
    p.gpu_ids[1] = 1;
    p.ngpu_ids = 2;
    ck_assert_int_eq (placement_validate (&p, NULL), 0);
    placement_free (&p);
    ck_assert_ptr_null (p.nodes);
    ck_assert_int_eq (p.nnodes, 0);
}
END_TEST

START_TEST (validate_errors)
{
    struct placement empty = { 0 };
    bad (&empty, "at least one node");
    bad (NULL, "at least one node");

    struct placement p = mk (2, (const char *[]){ "nid1", "nid1" },
                             (const int *[]){ (int[]){ 0 }, (int[]){ 0 } },
                             (int[]){ 1, 1 });
    bad (&p, "names node nid1 twice");
    placement_free (&p);

    p = mk (1, (const char *[]){ "" }, (const int *[]){ (int[]){ 0 } }, (int[]){ 1 });
    bad (&p, "placement node 0 has no name");
    placement_free (&p);

    p = mk (1, (const char *[]){ "a" }, (const int *[]){ NULL }, (int[]){ 0 });
    bad (&p, "placement node a has no cores");
    placement_free (&p);

    p = mk (1, (const char *[]){ "a" }, (const int *[]){ (int[]){ 2, -1 } }, (int[]){ 2 });
    bad (&p, "placement node a: core id -1 is negative");
    placement_free (&p);

    p = mk (1, (const char *[]){ "a" }, (const int *[]){ (int[]){ 2, 5, 2 } },
            (int[]){ 3 });
    bad (&p, "placement node a lists core 2 twice");
    placement_free (&p);

    p = mk (1, (const char *[]){ "a" }, (const int *[]){ (int[]){ 0 } }, (int[]){ 1 });
    p.gpus = -1;
    bad (&p, "placement GPUs -1 is negative");
    p.gpus = 2;
    p.gpu_ids = malloc (2 * sizeof (int));
    p.gpu_ids[0] = 0;
    p.ngpu_ids = 1;
    bad (&p, "placement has 2 GPUs but 1 GPU ids");
    p.ngpu_ids = 2;
    p.gpu_ids[1] = 0;
    bad (&p, "placement lists GPU id 0 twice");
    p.gpu_ids[1] = -4;
    bad (&p, "placement GPU id -4 is negative");
    placement_free (&p);
}
END_TEST

/* Found by the ledger fuzz target: a grant spanning nodes carries the GPU
 * total and the ids used on each node (ledger.h); validation refused it, so
 * berthd could not render the launch of a multi-node GPU step. */
START_TEST (validate_spanning_gpus)
{
    struct placement p = mk (2, (const char *[]){ "a", "b" },
                             (const int *[]){ (int[]){ 0, 1 }, (int[]){ 0, 1 } },
                             (int[]){ 2, 2 });
    berth_error_t err;
    p.gpus = 8;
    p.gpu_ids = malloc (4 * sizeof (int));
    for (int i = 0; i < 4; i++)
        p.gpu_ids[i] = i;
    p.ngpu_ids = 4;
    ck_assert_msg (placement_validate (&p, &err) == 0, "%s", err.text);
    p.gpus = 7;           /* a block layout: 4 on a, 3 on b */
    ck_assert_int_eq (placement_validate (&p, NULL), 0);
    p.gpus = 9;
    bad (&p, "placement has 9 GPUs on 2 nodes but 4 GPU ids; give the ids of the "
         "GPUs on each node (from 5 to 9 of them)");
    p.gpus = 3;
    bad (&p, "placement has 3 GPUs on 2 nodes but 4 GPU ids");
    placement_free (&p);
}
END_TEST

START_TEST (split_block_fill)
{
    /* 5 tasks x 2 over 2 nodes: 3 on node a, 2 on node b, cores in list order */
    struct placement p = mk (2, (const char *[]){ "a", "b" },
                             (const int *[]){ (int[]){ 9, 8, 7, 6, 5, 4 },
                                              (int[]){ 0, 1, 2, 3 } },
                             (int[]){ 6, 4 });
    int **tc, per, *tn;
    ck_assert_int_eq (placement_split_cores (&p, 5, 2, SPLIT_BLOCK, &tc, &per, &tn, NULL), 0);
    ck_assert_int_eq (per, 2);
    int want[5][2] = { { 9, 8 }, { 7, 6 }, { 5, 4 }, { 0, 1 }, { 2, 3 } };
    int wnode[5] = { 0, 0, 0, 1, 1 };
    for (int t = 0; t < 5; t++) {
        ck_assert_int_eq (tc[t][0], want[t][0]);
        ck_assert_int_eq (tc[t][1], want[t][1]);
        ck_assert_int_eq (tn[t], wnode[t]);
    }
    free (tc[0]);
    free (tc);
    free (tn);

    /* cpus_per_task 0 takes one core per task */
    ck_assert_int_eq (placement_split_cores (&p, 2, 0, SPLIT_BLOCK, &tc, &per, &tn, NULL), 0);
    ck_assert_int_eq (per, 1);
    ck_assert_int_eq (tc[0][0], 9);
    ck_assert_int_eq (tc[1][0], 0);
    ck_assert_int_eq (tn[1], 1);
    free (tc[0]);
    free (tc);
    free (tn);
    placement_free (&p);
}
END_TEST

/* srun spreads -n over -N evenly: the remainder goes one each to the first
 * nodes, so later nodes need fewer cores than block fill would ask for */
START_TEST (split_balanced)
{
    struct placement p = mk (3, (const char *[]){ "a", "b", "c" },
                             (const int *[]){ (int[]){ 0, 1, 2 }, (int[]){ 0, 1 },
                                              (int[]){ 0, 1 } },
                             (int[]){ 3, 2, 2 });
    int **tc, per, *tn;
    berth_error_t err;
    ck_assert_int_eq (placement_split_cores (&p, 7, 1, SPLIT_BLOCK, &tc, &per, &tn, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "node b has 2 cores, too few for 3 tasks"));
    ck_assert_int_eq (placement_split_cores (&p, 7, 1, SPLIT_BALANCED, &tc, &per, &tn, &err), 0);
    int wnode[7] = { 0, 0, 0, 1, 1, 2, 2 }, wcore[7] = { 0, 1, 2, 0, 1, 0, 1 };
    for (int t = 0; t < 7; t++) {
        ck_assert_int_eq (tn[t], wnode[t]);
        ck_assert_int_eq (tc[t][0], wcore[t]);
    }
    free (tc[0]);
    free (tc);
    free (tn);
    placement_free (&p);

    /* 800 tasks on 13 nodes: 7 x 62 + 6 x 61 */
    const char *names[13];
    const int *cores[13];
    int ncores[13];
    static int ids[62];
    char namebuf[13][8];
    for (int i = 0; i < 62; i++)
        ids[i] = i;
    for (int i = 0; i < 13; i++) {
        snprintf (namebuf[i], sizeof (namebuf[i]), "n%d", i);
        names[i] = namebuf[i];
        cores[i] = ids;
        ncores[i] = i < 7 ? 62 : 61;
    }
    p = mk (13, names, cores, ncores);
    ck_assert_int_eq (placement_split_cores (&p, 800, 1, SPLIT_BALANCED, &tc, &per, &tn, &err), 0);
    int per_node[13] = { 0 };
    for (int t = 0; t < 800; t++)
        per_node[tn[t]]++;
    for (int i = 0; i < 13; i++)
        ck_assert_int_eq (per_node[i], i < 7 ? 62 : 61);
    free (tc[0]);
    free (tc);
    free (tn);
    placement_free (&p);
}
END_TEST

START_TEST (split_errors)
{
    struct placement p = mk (2, (const char *[]){ "a", "nid7" },
                             (const int *[]){ (int[]){ 0, 1, 2, 3 }, (int[]){ 0, 1, 2 } },
                             (int[]){ 4, 3 });
    int **tc = NULL, per = -1, *tn = NULL;
    berth_error_t err = { 0 };
    ck_assert_int_eq (placement_split_cores (&p, 4, 2, SPLIT_BLOCK, &tc, &per, &tn, &err), -1);
    ck_assert_str_eq (err.text, "placement node nid7 has 3 cores, too few for "
                                "2 tasks x 2 cpus per task = 4");
    ck_assert_ptr_null (tc);
    ck_assert_ptr_null (tn);
    ck_assert_int_eq (per, -1);
    ck_assert_int_eq (placement_split_cores (&p, 0, 1, SPLIT_BLOCK, &tc, &per, &tn, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "0 tasks"));
    ck_assert_int_eq (placement_split_cores (&p, 1, -2, SPLIT_BLOCK, &tc, &per, &tn, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "cpus per task -2 is negative"));
    /* 3 tasks on 2 nodes is 2 + 1: node a needs 2 x 3 */
    ck_assert_int_eq (placement_split_cores (&p, 3, 3, SPLIT_BLOCK, &tc, &per, &tn, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "node a has 4 cores, too few for 2 tasks "
                                             "x 3 cpus per task = 6"));
    placement_free (&p);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("placement");
    TCase *tc = tcase_create ("all");
    tcase_add_test (tc, validate_ok);
    tcase_add_test (tc, validate_errors);
    tcase_add_test (tc, validate_spanning_gpus);
    tcase_add_test (tc, split_block_fill);
    tcase_add_test (tc, split_balanced);
    tcase_add_test (tc, split_errors);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
