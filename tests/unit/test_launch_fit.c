/* SPDX-License-Identifier: MIT */
/* launch_fit: a launch against what a node and the nodes hold, with berthd's
 * rules and nothing cut. */
#include <check.h>
#include <string.h>

#include "launch_fit.h"

static char *const exe[] = { "./exe", NULL };

static const struct step_capacity cpu = { .nodes = 2, .cores_per_node = 128,
                                          .gpus_per_node = 0, .memory_per_node = -1,
                                          .mpi_allowed = true };
static const struct step_capacity gpu = { .nodes = 2, .cores_per_node = 32,
                                          .gpus_per_node = 4, .memory_per_node = -1,
                                          .mpi_allowed = true };

static void fits (const struct launch_request *q, const struct step_capacity *c)
{
    berth_error_t err = { 0 };
    ck_assert_msg (launch_fit (q, c, &err) == 0, "%s", err.text);
}

static void refused (const struct launch_request *q, const struct step_capacity *c,
                     const char *want)
{
    berth_error_t err = { 0 };
    ck_assert_int_eq (launch_fit (q, c, &err), -1);
    ck_assert_str_eq (err.code, "render");
    ck_assert_msg (strstr (err.text, want), "want \"%s\" in \"%s\"", want, err.text);
}

START_TEST (shapes)
{
    struct launch_request q = { .argv = exe, .ntasks = 256, .cpus_per_task = 1 };
    fits (&q, &cpu);
    q.ntasks = 257;   /* nothing is cut: 257 tasks do not fit 2 x 128 cores */
    refused (&q, &cpu, "needs 257 tasks x 1 core = 257 cores, but the allocation holds "
             "256 tasks");
    q.ntasks = 1;
    q.cpus_per_task = 200;
    refused (&q, &cpu, "needs 200 cores for each task (min_cpus_per_task) but a node "
             "holds 128 cores");
    q.cpus_per_task = 0;   /* none given: one core each */
    fits (&q, &cpu);
    q.gpus_per_task = 1;
    refused (&q, &cpu, "asks for 1 GPU, but this allocation has no GPUs");
    q.ntasks = 8;
    fits (&q, &gpu);
    q.ntasks = 9;
    refused (&q, &gpu, "needs 9 GPUs, but the allocation holds 8");
    /* one process that is not MPI: its cores on one node */
    struct launch_request one = { .argv = exe, .ntasks = 1, .cpus_per_task = 129,
                                  .single_process = true };
    refused (&one, &cpu, "needs 129 cores, but one node holds 128 cores");
}
END_TEST

START_TEST (placements)
{
    struct placement_node nodes[2] = {
        { .name = "a", .cores = (int[]){ 0, 1 }, .ncores = 2 },
        { .name = "b", .cores = (int[]){ 0, 1 }, .ncores = 2 },
    };
    struct placement p = { .nodes = nodes, .nnodes = 2 };
    struct launch_request q = { .argv = exe, .ntasks = 2, .placement = &p };
    fits (&q, &cpu);
    p.gpus = 1;
    refused (&q, &cpu, "placement gives node a 1 GPU, but a node has none (0 GPUs per node)");
    p.gpus = 9;
    refused (&q, &gpu, "placement gives node a 5 GPUs, but a node holds 4");
    p.gpus = 2;
    p.gpu_ids = (int[]){ 4 };
    p.ngpu_ids = 1;
    refused (&q, &gpu, "placement node a: GPU id 4 is out of range: a node has 4 GPUs "
             "(ids 0 to 3)");
    p.gpu_ids[0] = 3;
    fits (&q, &gpu);
    /* per-node ids: each node's own count and range */
    p.gpu_ids = NULL;
    p.ngpu_ids = 0;
    p.node_gpu_ids = true;
    nodes[0].gpu_ids = (int[]){ 0, 1, 2 };
    nodes[0].ngpu_ids = 3;
    nodes[1].gpu_ids = (int[]){ 5 };
    nodes[1].ngpu_ids = 1;
    p.gpus = 4;
    refused (&q, &gpu, "placement node b: GPU id 5 is out of range");
    nodes[1].gpu_ids[0] = 3;
    fits (&q, &gpu);
    /* a node's cores beyond what a node holds */
    struct step_capacity small = cpu;
    small.cores_per_node = 1;
    p.gpus = 0;
    p.node_gpu_ids = false;
    nodes[0].gpu_ids = nodes[1].gpu_ids = NULL;
    nodes[0].ngpu_ids = nodes[1].ngpu_ids = 0;
    refused (&q, &small, "placement node a has 2 cores, but a node holds 1");
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("launch_fit");
    TCase *tc = tcase_create ("all");
    tcase_add_test (tc, shapes);
    tcase_add_test (tc, placements);
    suite_add_tcase (s, tc);
    SRunner *sr = srunner_create (s);
    srunner_run_all (sr, CK_NORMAL);
    int failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    return failed ? 1 : 0;
}
