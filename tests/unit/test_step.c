/* SPDX-License-Identifier: MIT */
/* Cutting a step to fit the whole empty allocation. */
#include <string.h>

#include "step.h"
#include "testutil.h"

static struct step_capacity cap (int nodes, int cpn, int gpn, int64_t mpn)
{
    return (struct step_capacity) { nodes, cpn, gpn, mpn, true };
}

static struct step_request req (void)
{
    struct step_request r;
    step_request_init (&r);
    return r;
}

static struct step_shape shape;
static berth_error_t err;
static char warn[512];

static int cut (const struct step_request *r, struct step_capacity c)
{
    memset (&shape, 0x5a, sizeof (shape));
    memset (&err, 0, sizeof (err));
    return step_cut_to_fit (r, &c, &shape, warn, sizeof (warn), &err);
}

/* Refused with a message holding every fragment given. */
static void refused (const struct step_request *r, struct step_capacity c,
                     const char *code, const char *a, const char *b,
                     const char *d)
{
    struct step_shape before;
    memset (&before, 0x5a, sizeof (before));
    ck_assert_int_eq (cut (r, c), -1);
    ck_assert_str_eq (err.code, code);
    ck_assert_msg (!memcmp (&before, &shape, sizeof (shape)),
                   "output touched on error");
    const char *frag[] = { a, b, d };
    for (int i = 0; i < 3; i++)
        ck_assert_msg (!frag[i] || strstr (err.text, frag[i]),
                       "'%s' not in: %s", frag[i], err.text);
}

START_TEST (init_and_free)
{
    struct step_request r = req ();
    ck_assert_int_eq (r.ntasks, STEP_UNSET);
    ck_assert_int_eq (r.min_memory, STEP_UNSET);
    ck_assert_int_eq (r.may_span_nodes, STEP_UNSET);
    ck_assert (r.timeout < 0 && !r.local && !r.label && !r.argv);
    r.label = strdup ("x");
    r.argv = calloc (3, sizeof (char *));
    r.argv[0] = strdup ("a");
    r.argv[1] = strdup ("b");
    step_request_free (&r);
    ck_assert (!r.label && !r.argv);
    step_request_free (&r);
    step_request_free (NULL);
}
END_TEST

START_TEST (mpi_fits_as_asked)
{
    struct step_request r = req ();
    r.ntasks = 16;
    r.cpus_per_task = 2;
    r.memory = 8000;
    ck_assert_int_eq (cut (&r, cap (4, 128, 0, 515100)), 0);
    ck_assert (shape.mpi && shape.may_span && !shape.local);
    ck_assert_int_eq (shape.ntasks, 16);
    ck_assert_int_eq (shape.cpus_per_task, 2);
    ck_assert_int_eq (shape.cores, 32);
    ck_assert_int_eq (shape.gpus, 0);
    ck_assert_int_eq (shape.memory, 8000);
    ck_assert_int_eq (shape.budget, 8000);
    ck_assert_str_eq (warn, "");
}
END_TEST

START_TEST (budget_defaults)
{
    struct step_request r = req ();
    r.cores = 3;
    ck_assert_int_eq (cut (&r, cap (1, 128, 0, 1000)), 0);
    ck_assert (!shape.mpi && !shape.may_span);
    ck_assert_int_eq (shape.ntasks, 1);
    ck_assert_int_eq (shape.cpus_per_task, 3);
    ck_assert_int_eq (shape.memory, -1);
    ck_assert_int_eq (shape.budget, 23);     /* 3000 / 128 rounded down */
    ck_assert_int_eq (cut (&r, cap (1, 128, 0, -1)), 0);
    ck_assert_int_eq (shape.budget, -1);
    struct step_request none = req ();      /* nothing asked: one core */
    ck_assert_int_eq (cut (&none, cap (2, 8, 0, 800)), 0);
    ck_assert_int_eq (shape.cores, 1);
    ck_assert_int_eq (shape.budget, 100);
}
END_TEST

START_TEST (span_defaults)
{
    struct step_request r = req ();
    r.ntasks = 1;
    ck_assert_int_eq (cut (&r, cap (2, 8, 0, -1)), 0);
    ck_assert (!shape.may_span);
    r.ntasks = 2;
    ck_assert_int_eq (cut (&r, cap (2, 8, 0, -1)), 0);
    ck_assert (shape.may_span);
    r.local = true;
    ck_assert_int_eq (cut (&r, cap (2, 8, 0, -1)), 0);
    ck_assert (!shape.may_span && shape.local);
    r.local = false;
    r.may_span_nodes = 0;
    ck_assert_int_eq (cut (&r, cap (2, 8, 0, -1)), 0);
    ck_assert (!shape.may_span);
    struct step_request c = req ();
    c.cores = 4;
    c.may_span_nodes = 1;
    ck_assert_int_eq (cut (&c, cap (2, 8, 0, -1)), 0);
    ck_assert (shape.may_span && !shape.mpi);
}
END_TEST

START_TEST (login_node)
{
    struct step_request r = req ();
    r.label = "ocean";
    r.ntasks = 4;
    struct step_capacity c = cap (1, 8, 0, -1);
    c.mpi_allowed = false;
    refused (&r, c, "unsatisfiable", "step 'ocean'", "4 MPI tasks",
             "not allowed");
    r.ntasks = 1;
    ck_assert_int_eq (cut (&r, c), 0);
}
END_TEST

START_TEST (cpus_per_task_one_node)
{
    struct step_request r = req ();
    r.label = "wide";
    r.ntasks = 2;
    r.cpus_per_task = 200;
    r.min_cpus_per_task = 64;
    ck_assert_int_eq (cut (&r, cap (4, 128, 0, -1)), 0);
    ck_assert_int_eq (shape.cpus_per_task, 128);
    ck_assert_int_eq (shape.ntasks, 2);
    r.min_cpus_per_task = 200;
    refused (&r, cap (4, 128, 0, -1), "unsatisfiable", "step 'wide'",
             "needs 200 cores for each task", "a node holds 128 cores");
}
END_TEST

START_TEST (tasks_cut)
{
    struct step_request r = req ();
    r.ntasks = 1000;
    r.min_tasks = 100;
    ck_assert_int_eq (cut (&r, cap (2, 128, 0, -1)), 0);
    ck_assert_int_eq (shape.ntasks, 256);
    r.min_tasks = 300;
    refused (&r, cap (2, 128, 0, -1), "unsatisfiable", "needs 300 tasks",
             "the allocation holds 256 tasks", "2 nodes x 128 cores");
    /* Tasks do not straddle nodes: 2 x 48 cores fit a 128-core node. */
    r.ntasks = 10;
    r.min_tasks = 1;
    r.cpus_per_task = 48;
    ck_assert_int_eq (cut (&r, cap (2, 128, 0, -1)), 0);
    ck_assert_int_eq (shape.ntasks, 4);
    ck_assert_int_eq (shape.cores, 192);
    /* A step that may not span is held to one node, silently. */
    struct step_request s = req ();
    s.label = "solo";
    s.ntasks = 200;
    s.min_tasks = 10;
    s.may_span_nodes = 0;
    ck_assert_int_eq (cut (&s, cap (4, 128, 0, -1)), 0);
    ck_assert_int_eq (shape.ntasks, 128);
    ck_assert_str_eq (warn, "");
    s.min_tasks = 200;
    refused (&s, cap (4, 128, 0, -1), "unsatisfiable", "one node holds 128",
             "step 'solo'", "; with may_span_nodes it may use more than one node");
    /* With no minimum the target is the minimum. */
    struct step_request t = req ();
    t.ntasks = 300;
    refused (&t, cap (2, 128, 0, -1), "unsatisfiable", "step (no label)",
             "needs 300 tasks", "holds 256");
}
END_TEST

START_TEST (cores_cut)
{
    struct step_request r = req ();
    r.label = "post";
    r.cores = 200;
    r.min_cores = 100;
    r.may_span_nodes = 1;
    ck_assert_int_eq (cut (&r, cap (3, 64, 0, -1)), 0);
    ck_assert_int_eq (shape.cores, 192);
    ck_assert (shape.may_span);
    r.may_span_nodes = STEP_UNSET;
    refused (&r, cap (3, 64, 0, -1), "unsatisfiable", "needs 100 cores",
             "one node holds 64 cores", "may_span_nodes");
    r.min_cores = 50;
    ck_assert_int_eq (cut (&r, cap (3, 64, 0, -1)), 0);
    ck_assert_int_eq (shape.cores, 64);
}
END_TEST

/* A refusal's hints are fixes that work there: no spanning for a local step
 * or on one node, the cut that fits, and "1 core", not "1 cores". */
START_TEST (hints_that_work)
{
    struct step_request r = req ();
    r.cores = 3;
    r.local = true;
    refused (&r, cap (1, 2, 0, -1), "unsatisfiable",
             "needs 3 cores, but one node holds 2 cores (1 node x 2 cores); ",
             "at most 2 cores fit one node: ask for no more, or give min_cores 2 "
             "to let berthd cut it", NULL);
    ck_assert_msg (!strstr (err.text, "may_span"), "a local step cannot span: %s", err.text);
    refused (&r, cap (4, 2, 0, -1), "unsatisfiable", "min_cores 2", NULL, NULL);
    ck_assert_msg (!strstr (err.text, "may_span"), "a local step cannot span: %s", err.text);
    /* not local, one node: spanning cannot help either */
    r.local = false;
    refused (&r, cap (1, 2, 0, -1), "unsatisfiable", "min_cores 2", NULL, NULL);
    ck_assert_msg (!strstr (err.text, "may_span"), "one node: %s", err.text);
    /* several nodes: both fixes */
    refused (&r, cap (3, 2, 0, -1), "unsatisfiable",
             "; with may_span_nodes it may use more than one node; at most 2 cores",
             "give min_cores 2", NULL);
    /* a minimum equal to the target wants no cut: ask for no more */
    r.min_cores = 3;
    refused (&r, cap (1, 2, 0, -1), "unsatisfiable", "at most 2 cores fit one node: ask for "
             "no more", NULL, NULL);
    ck_assert_msg (!strstr (err.text, "min_cores"), "no cut was wanted: %s", err.text);
    /* a minimum below the target but still too high: lower it */
    r.cores = 4;
    refused (&r, cap (1, 2, 0, -1), "unsatisfiable", "lower min_cores to 2", NULL, NULL);
    /* plurals */
    r = req ();
    r.cores = 2;
    refused (&r, cap (1, 1, 0, -1), "unsatisfiable",
             "needs 2 cores, but one node holds 1 core (1 node x 1 core); at most "
             "1 core fits one node", NULL, NULL);
    r = req ();
    r.ntasks = 2;
    r.cpus_per_task = 2;
    refused (&r, cap (1, 2, 0, -1), "unsatisfiable",
             "needs 2 tasks x 2 cores = 4 cores, but the allocation holds 1 task of 2 cores",
             "at most 1 task fits the allocation: ask for no more, or give min_tasks 1", NULL);
    r.cpus_per_task = 4;
    r.min_cpus_per_task = 3;
    refused (&r, cap (1, 2, 0, -1), "unsatisfiable", "lower min_cpus_per_task to 2",
             NULL, NULL);
    r = req ();
    r.cores = 1;
    r.gpus = 2;
    refused (&r, cap (1, 8, 1, -1), "unsatisfiable", "needs 2 GPUs, but one node holds 1",
             "at most 1 GPU fits one node: ask for no more, or give min_gpus 1", NULL);
}
END_TEST

START_TEST (gpus_ratio)
{
    /* 8 tasks with 8 GPUs on 4 GPUs -> 4 and 4. */
    struct step_request r = req ();
    r.ntasks = 8;
    r.min_tasks = 1;
    r.gpus = 8;
    r.min_gpus = 1;
    r.may_span_nodes = 0;
    ck_assert_int_eq (cut (&r, cap (2, 64, 4, -1)), 0);
    ck_assert_int_eq (shape.ntasks, 4);
    ck_assert_int_eq (shape.gpus, 4);
    /* Cores cut the tasks to 4 first: GPUs follow once, not again. */
    r.cpus_per_task = 32;
    ck_assert_int_eq (cut (&r, cap (2, 128, 4, -1)), 0);
    ck_assert_int_eq (shape.ntasks, 4);
    ck_assert_int_eq (shape.gpus, 4);
    ck_assert_int_eq (cut (&r, cap (2, 128, 8, -1)), 0);
    ck_assert_int_eq (shape.ntasks, 4);
    ck_assert_int_eq (shape.gpus, 4);
    /* Spanning: the allocation's GPUs. */
    r.cpus_per_task = 1;
    r.may_span_nodes = 1;
    ck_assert_int_eq (cut (&r, cap (2, 64, 4, -1)), 0);
    ck_assert_int_eq (shape.ntasks, 8);
    ck_assert_int_eq (shape.gpus, 8);
    /* Minimums. */
    r.may_span_nodes = 0;
    r.min_gpus = 6;
    refused (&r, cap (2, 64, 4, -1), "unsatisfiable", "needs 6 GPUs",
             "one node holds 4", "may_span_nodes");
    r.min_gpus = 1;
    r.min_tasks = 6;
    refused (&r, cap (2, 64, 4, -1), "unsatisfiable", "needs 6 tasks",
             "serve only 4 tasks", "may_span_nodes");
}
END_TEST

START_TEST (gpus_none)
{
    struct step_request r = req ();
    r.label = "gpu";
    r.cores = 4;
    r.gpus = 2;
    refused (&r, cap (2, 64, 0, -1), "unsatisfiable", "step 'gpu'",
             "asks for 2 GPUs", "no GPUs");
    r.min_gpus = 0;
    ck_assert_int_eq (cut (&r, cap (2, 64, 0, -1)), 0);
    ck_assert_int_eq (shape.gpus, 0);
    r.gpus = -2;
    r.min_gpus = STEP_UNSET;
    refused (&r, cap (2, 64, 4, -1), "invalid_request", "gpus -2", NULL,
             NULL);
    /* Non-MPI: cut to one node's GPUs. */
    r.gpus = 8;
    r.min_gpus = 2;
    ck_assert_int_eq (cut (&r, cap (2, 64, 4, -1)), 0);
    ck_assert_int_eq (shape.gpus, 4);
}
END_TEST

START_TEST (gpus_per_task_deprecated)
{
    struct step_request r = req ();
    r.ntasks = 4;
    r.min_tasks = 2;
    r.gpus_per_task = 1;
    ck_assert_int_eq (cut (&r, cap (1, 64, 4, -1)), 0);
    ck_assert_int_eq (shape.gpus, 4);
    ck_assert_ptr_nonnull (strstr (warn, "gpus_per_task is deprecated"));
    ck_assert_ptr_nonnull (strstr (warn, "gpus 4 (min 2)"));
    r.gpus = 4;
    refused (&r, cap (1, 64, 4, -1), "invalid_request", "both gpus",
             "gpus_per_task", NULL);
    r.gpus = STEP_UNSET;
    r.gpus_per_task = -2;
    refused (&r, cap (1, 64, 4, -1), "invalid_request", "gpus_per_task -2",
             NULL, NULL);
    r.gpus_per_task = STEP_UNSET;
    r.min_gpus_per_task = 1;
    refused (&r, cap (1, 64, 4, -1), "invalid_request", "min_gpus_per_task",
             NULL, NULL);
}
END_TEST

START_TEST (memory)
{
    struct step_request r = req ();
    r.label = "big";
    r.cores = 8;
    r.memory = 4000;
    r.min_memory = 8000;
    refused (&r, cap (1, 64, 0, 512000), "invalid_request", "step 'big'",
             "memory 4000 MB is below its min_memory 8000 MB",
             "declare at least 8000 MB");
    r.memory = 600000;
    r.min_memory = 100000;
    ck_assert_int_eq (cut (&r, cap (2, 64, 0, 512000)), 0);
    ck_assert_int_eq (shape.memory, 512000);
    ck_assert_int_eq (shape.budget, 512000);
    r.min_memory = 600000;
    refused (&r, cap (2, 64, 0, 512000), "unsatisfiable",
             "needs 600000 MB", "one node holds 512000 MB", "may_span_nodes");
    /* Spanning: the share on the fullest node must fit. */
    r.may_span_nodes = 1;
    r.cores = 128;
    ck_assert_int_eq (cut (&r, cap (2, 64, 0, 512000)), 0);
    ck_assert_int_eq (shape.memory, 600000);
    /* Only a minimum: it is the claim. */
    struct step_request m = req ();
    m.min_memory = 2000;
    ck_assert_int_eq (cut (&m, cap (1, 64, 0, -1)), 0);
    ck_assert_int_eq (shape.memory, 2000);
    ck_assert_int_eq (shape.budget, 2000);
    m.memory = 0;
    m.min_memory = STEP_UNSET;
    refused (&m, cap (1, 64, 0, -1), "invalid_request", "memory 0 MB", NULL,
             NULL);
}
END_TEST

START_TEST (invalid_requests)
{
    struct step_capacity c = cap (2, 8, 0, -1);
    struct step_request r = req ();
    r.ntasks = 0;
    refused (&r, c, "invalid_request", "ntasks 0", NULL, NULL);
    r.ntasks = 2;
    r.cpus_per_task = 0;
    refused (&r, c, "invalid_request", "cpus_per_task 0", NULL, NULL);
    r.cpus_per_task = 2;
    r.cores = 5;
    refused (&r, c, "invalid_request", "cores 5 disagrees", "= 4", NULL);
    r.cores = 4;
    ck_assert_int_eq (cut (&r, c), 0);
    r.min_tasks = 3;
    refused (&r, c, "invalid_request", "min_tasks 3 is above tasks 2", NULL,
             NULL);
    r.min_tasks = STEP_UNSET;
    r.min_cores = 2;
    refused (&r, c, "invalid_request", "min_cores is for a non-MPI step",
             NULL, NULL);
    r.min_cores = STEP_UNSET;
    r.min_tasks = -3;
    refused (&r, c, "invalid_request", "min_tasks -3 is negative", NULL,
             NULL);
    r.min_tasks = 0;
    refused (&r, c, "invalid_request", "at least 1", NULL, NULL);

    struct step_request n = req ();
    n.cpus_per_task = 2;
    refused (&n, c, "invalid_request", "give ntasks too", NULL, NULL);
    n.cpus_per_task = STEP_UNSET;
    n.cores = 0;
    refused (&n, c, "invalid_request", "cores 0", NULL, NULL);
    n.cores = 4;
    n.min_cores = 0;
    refused (&n, c, "invalid_request", "min_cores must be at least 1", NULL,
             NULL);
    n.min_cores = STEP_UNSET;
    n.local = true;
    n.may_span_nodes = 1;
    refused (&n, c, "invalid_request", "cannot span", "local", NULL);
    n.may_span_nodes = STEP_UNSET;
    ck_assert_int_eq (cut (&n, cap (0, 8, 0, -1)), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "nothing to place on"));
}
END_TEST

START_TEST (describe)
{
    char buf[128];
    struct step_request r = req ();
    r.ntasks = 128;
    r.cpus_per_task = 2;
    r.gpus = 1;
    r.memory = 8000;
    ck_assert_int_eq (cut (&r, cap (2, 128, 4, -1)), 0);
    step_shape_describe (&shape, buf, sizeof (buf));
    ck_assert_str_eq (buf, "256 cores (128 x 2), 1 GPU, 8000 MB, may span");
    struct step_request l = req ();
    l.cores = 4;
    l.local = true;
    ck_assert_int_eq (cut (&l, cap (2, 128, 4, 1280)), 0);
    step_shape_describe (&shape, buf, sizeof (buf));
    ck_assert_str_eq (buf, "4 cores, 40 MB budget, local");
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("step");
    TCase *tc = tcase_create ("cut");
    tcase_add_test (tc, init_and_free);
    tcase_add_test (tc, mpi_fits_as_asked);
    tcase_add_test (tc, budget_defaults);
    tcase_add_test (tc, span_defaults);
    tcase_add_test (tc, login_node);
    tcase_add_test (tc, cpus_per_task_one_node);
    tcase_add_test (tc, tasks_cut);
    tcase_add_test (tc, cores_cut);
    tcase_add_test (tc, gpus_ratio);
    tcase_add_test (tc, hints_that_work);
    tcase_add_test (tc, gpus_none);
    tcase_add_test (tc, gpus_per_task_deprecated);
    tcase_add_test (tc, memory);
    tcase_add_test (tc, invalid_requests);
    tcase_add_test (tc, describe);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
