/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "render.h"
#include "testutil.h"

/* ---- Machines, built by hand from the brief's table */

static struct machine_parallel pm_cpu (void)
{
    return (struct machine_parallel){
        .system = BERTH_SYSTEM_SLURM, .parallel_executable = "srun --label",
        .cores_per_node = 128, .memory_per_node = 515100,
        .max_mpi_tasks_per_node = 128, .cpu_bind = "cores", .placement = "plane",
    };
}

static struct machine_parallel pm_gpu (void)
{
    return (struct machine_parallel){
        .system = BERTH_SYSTEM_SLURM, .parallel_executable = "srun --label",
        .cores_per_node = 64, .gpus_per_node = 4, .memory_per_node = 257200,
        .max_mpi_tasks_per_node = 4, .cpu_bind = "cores", .gpu_bind = "none",
        .placement = "plane",
    };
}

static struct machine_parallel frontier (bool gpu)
{
    return (struct machine_parallel){
        .system = BERTH_SYSTEM_SLURM,
        .parallel_executable = "srun -l -K --threads-per-core=1",
        .cores_per_node = 56, .gpus_per_node = gpu ? 8 : 0, .memory_per_node = 512000,
        .max_mpi_tasks_per_node = gpu ? 8 : 56, .cpu_bind = "threads",
        .gpu_bind = gpu ? "closest" : NULL, .distribution = "block:cyclic",
    };
}

static struct machine_parallel chrysalis (void)
{
    return (struct machine_parallel){
        .system = BERTH_SYSTEM_SLURM, .parallel_executable = "srun --mpi=pmi2 -l",
        .cores_per_node = 64, .memory_per_node = 253000, .max_mpi_tasks_per_node = 64,
        .cpu_bind = "cores", .placement = "plane",
    };
}

static struct machine_parallel aurora_gpu (void)
{
    return (struct machine_parallel){
        .system = BERTH_SYSTEM_PBS, .parallel_executable = "mpiexec --label",
        .cores_per_node = 96, .gpus_per_node = 12, .memory_per_node = 960000,
        .max_mpi_tasks_per_node = 12, .cpus_per_task_flag = "--depth",
        .cpu_bind = "list:1-8:9-16:17-24:25-32:33-40:41-48:53-60:61-68:69-76:77-84:"
                    "85-92:93-100",
        .gpu_bind = "list:0.0:0.1:1.0:1.1:2.0:2.1:3.0:3.1:4.0:4.1:5.0:5.1",
        .mem_bind = "list:0:0:0:0:0:0:1:1:1:1:1:1",
        .gpu_visible_devices_var = "ZE_AFFINITY_MASK",
    };
}

static struct machine_parallel polaris (void)
{
    return (struct machine_parallel){
        .system = BERTH_SYSTEM_PBS, .parallel_executable = "mpiexec --label",
        .cores_per_node = 32, .gpus_per_node = 4, .memory_per_node = -1,
        .max_mpi_tasks_per_node = 4, .cpus_per_task_flag = "--depth",
        .cpu_bind = "cores", .gpu_visible_devices_var = "CUDA_VISIBLE_DEVICES",
    };
}

static struct machine_parallel localhost (void)
{
    return (struct machine_parallel){
        .system = BERTH_SYSTEM_SINGLE_NODE, .parallel_executable = "mpirun",
        .cores_per_node = 8, .memory_per_node = 16000, .max_mpi_tasks_per_node = 8,
    };
}

static struct launcher_caps caps (const char *spec, enum berth_system sys)
{
    struct launcher_caps c;
    berth_error_t err;
    ck_assert_msg (launcher_caps_parse (spec, sys, &c, &err) == 0, "%s", err.text);
    return c;
}

/* ---- Placements */

static char *const run[] = { "./run", NULL };
static char *const exe[] = { "./exe", NULL };

struct pl {
    struct placement p;
    struct placement_node nodes[4];
    int cores[4][16];
    int gpu_ids[16];
};

/* nnodes nodes named names[i], each with the same n cores (given); gpus with
 * optional ids (ngpu_ids 0: none). */
static struct placement *mkpl (struct pl *s, int nnodes, const char *const *names,
                               const int *cores, int ncores, int gpus,
                               const int *gpu_ids, int ngpu_ids)
{
    memset (s, 0, sizeof (*s));
    for (int i = 0; i < nnodes; i++) {
        memcpy (s->cores[i], cores, (size_t)ncores * sizeof (int));
        s->nodes[i] = (struct placement_node){ .name = (char *)names[i], .cores = s->cores[i],
                                             .ncores = ncores };
    }
    s->p.nodes = s->nodes;
    s->p.nnodes = nnodes;
    s->p.gpus = gpus;
    if (ngpu_ids) {
        memcpy (s->gpu_ids, gpu_ids, (size_t)ngpu_ids * sizeof (int));
        s->p.gpu_ids = s->gpu_ids;
        s->p.ngpu_ids = ngpu_ids;
    }
    return &s->p;
}

/* ---- Checks */

/* Flags before the program appear once (the launcher's --env may repeat);
 * an unplaced launch never carries placement-only flags. */
static void check_invariants (const struct launch *l, const struct launch_request *q)
{
    int prog = l->argc;
    for (int i = 0; q->argv[i]; i++)
        prog--;
    for (int i = 0; i < prog; i++) {
        const char *a = l->argv[i];
        if (a[0] != '-' || strcmp (a, "--env") == 0 || strcmp (a, "-c") == 0)
            continue;   /* -c: taskset's and the launcher's in single_node */
        size_t n = strcspn (a, "=");
        for (int j = 0; j < i; j++)
            ck_assert_msg (!(strncmp (a, l->argv[j], n) == 0
                             && strcspn (l->argv[j], "=") == n),
                           "flag %s twice", a);
        if (!q->placement) {
            ck_assert_str_ne (a, "--exact");
            ck_assert_str_ne (a, "--gres=none");
            ck_assert_str_ne (a, "--env-remove");
        }
        ck_assert_str_ne (a, "--env-remove");
    }
    ck_assert_ptr_null (l->argv[l->argc]);
    if (!q->placement) {
        ck_assert_int_eq (l->n_unset, 0);
        ck_assert_int_eq (l->n_set, 0);
    }
}

/* Render and compare the argv item by item with `want` split on spaces. */
static void expect (const struct machine_parallel *par, int alloc_nodes,
                    const struct launcher_caps *c, const struct launch_request *q,
                    const char *want)
{
    struct launch l;
    berth_error_t err = { 0 };
    ck_assert_msg (render_launch (par, alloc_nodes, c, q, &l, &err) == 0, "%s",
                   err.text);
    char *got = render_shell_quote (l.argv);
    char *w = strdup (want), *save = NULL;
    int i = 0;
    for (char *tok = strtok_r (w, " ", &save); tok; tok = strtok_r (NULL, " ", &save))
        ck_assert_msg (i < l.argc && strcmp (l.argv[i++], tok) == 0,
                       "item %d: want \"%s\"\n  want: %s\n  got:  %s", i - 1, tok,
                       want, got);
    ck_assert_msg (i == l.argc, "want %d items, got %d\n  want: %s\n  got:  %s", i,
                   l.argc, want, got);
    check_invariants (&l, q);
    free (w);
    free (got);
    launch_free (&l);
}

static void expect_error (const struct machine_parallel *par, int alloc_nodes,
                          const struct launcher_caps *c,
                          const struct launch_request *q, const char *needle)
{
    struct launch l = { .argc = 12345 };
    berth_error_t err = { 0 };
    ck_assert_int_eq (render_launch (par, alloc_nodes, c, q, &l, &err), -1);
    ck_assert_msg (strstr (err.text, needle), "want \"%s\", got \"%s\"", needle,
                   err.text);
    ck_assert_str_eq (err.code, "render");
    ck_assert_int_eq (l.argc, 12345);   /* untouched */
    ck_assert_ptr_null (l.argv);
}

static bool has_unset (const struct launch *l, const char *name)
{
    for (int i = 0; i < l->n_unset; i++)
        if (strcmp (l->env_unset[i], name) == 0)
            return true;
    return false;
}

/* ---- Slurm, unplaced: the brief's examples */

START_TEST (slurm_unplaced_examples)
{
    struct launcher_caps c = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    struct launch_request q = { .argv = exe, .ntasks = 4, .cpus_per_task = 2 };
    expect (&m, 2, &c, &q, "srun --label -c 2 -N 1 -n 4 --cpu-bind=cores -m plane=128 ./exe");
    m = frontier (false);
    expect (&m, 2, &c, &q,
            "srun -l -K --threads-per-core=1 -c 2 -N 1 -n 4 --cpu-bind=threads "
            "-m block:cyclic ./exe");
    m = pm_gpu ();
    q.cpus_per_task = 16;
    q.gpus_per_task = 1;
    expect (&m, 2, &c, &q,
            "srun --label -c 16 -N 1 -n 4 --gpus-per-task 1 --cpu-bind=cores "
            "--gpu-bind=none -m plane=4 ./exe");
}
END_TEST

START_TEST (slurm_unplaced_rules)
{
    struct launcher_caps c = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_gpu ();
    char *const prog[] = { "./a", "-x", NULL };
    struct launch_request q = { .argv = prog, .ntasks = 6, .cpus_per_task = 0 };
    /* fewest nodes: 6 tasks at 4 per node is 2 nodes; cpus 0 rendered as 0 */
    expect (&m, 3, &c, &q,
            "srun --label -N 2 -n 6 --cpu-bind=cores --gpu-bind=none -m plane=4 "
            "./a -x");
    /* the program argv is passed on as it is */
    char *const spaced[] = { "./a", "two words", NULL };
    struct launch_request qs = q;
    qs.argv = spaced;
    struct launch l;
    ck_assert_int_eq (render_launch (&m, 3, &c, &qs, &l, NULL), 0);
    ck_assert_str_eq (l.argv[l.argc - 1], "two words");
    ck_assert_str_eq (l.argv[l.argc - 2], "./a");
    launch_free (&l);
    /* a GPU flag given by the machine, still two items */
    m.gpus_per_task_flag = "--gres=gpu";
    q.gpus_per_task = 2;
    q.ntasks = 1;
    m.gpu_bind = NULL;
    m.cpu_bind = NULL;
    expect (&m, 1, &c, &q, "srun --label -N 1 -n 1 --gres=gpu 2 -m plane=4 ./a -x");
    /* distribution wins over the legacy placement option; mem_bind last */
    m.distribution = "cyclic";
    m.mem_bind = "local";
    q.gpus_per_task = 0;
    expect (&m, 1, &c, &q, "srun --label -N 1 -n 1 --mem-bind=local -m cyclic ./a -x");
    /* neither: no -m */
    m.distribution = m.placement = NULL;
    expect (&m, 1, &c, &q, "srun --label -N 1 -n 1 --mem-bind=local ./a -x");
    /* parallel_executable split on single spaces */
    m = chrysalis ();
    q.cpus_per_task = 1;
    expect (&m, 1, &c, &q,
            "srun --mpi=pmi2 -l -c 1 -N 1 -n 1 --cpu-bind=cores -m plane=64 ./a -x");
}
END_TEST

START_TEST (slurm_unplaced_errors)
{
    struct launcher_caps c = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    struct launch_request q = { .argv = exe, .ntasks = 300, .cpus_per_task = 1 };
    expect_error (&m, 2, &c, &q,
                  "300 tasks on 2 allocation nodes is 150 tasks per node, above "
                  "max_mpi_tasks_per_node = 128: the allocation needs at least 3 nodes");
    m.max_mpi_tasks_per_node = 0;
    q.ntasks = 2;
    expect_error (&m, 2, &c, &q, "max_mpi_tasks_per_node is not set for this slurm machine");
}
END_TEST

/* ---- Slurm, placed */

START_TEST (slurm_placed_examples)
{
    struct launcher_caps c = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    struct pl s;
    struct launch_request q = {
        .argv = run, .ntasks = 4, .cpus_per_task = 2,
        .placement = mkpl (&s, 1, (const char *[]){ "nid001" },
                           (int[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, 8, 0, NULL, 0),
    };
    expect (&m, 2, &c, &q,
            "srun --label -c 2 -N 1 -n 4 -w nid001 --exact --gres=none --cpu-bind=cores ./run");

    m = frontier (true);
    q.placement = mkpl (&s, 1, (const char *[]){ "frontier00001" },
                        (int[]){ 8, 9, 10, 11, 12, 13, 14, 15 }, 8, 2, NULL, 0);
    expect (&m, 2, &c, &q,
            "srun -l -K --threads-per-core=1 -c 2 -N 1 -n 4 -w frontier00001 --exact "
            "--gpus=2 --cpu-bind=threads --gpu-bind=closest ./run");

    struct launcher_caps old = caps ("slurm:20.02", BERTH_SYSTEM_SLURM);
    m = chrysalis ();
    q.ntasks = 2;
    q.placement = mkpl (&s, 1, (const char *[]){ "chr-0493" }, (int[]){ 0, 1, 2, 3 }, 4,
                        0, NULL, 0);
    expect (&m, 1, &old, &q,
            "srun --mpi=pmi2 -l -c 2 -N 1 -n 2 -w chr-0493 --cpu-bind=mask_cpu:0x3,0xc ./run");
}
END_TEST

START_TEST (slurm_placed_rules)
{
    struct launcher_caps c = caps ("slurm:22.05.8", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_gpu ();
    struct pl s;
    /* two nodes; gpus_per_task ignored; -m never; gpu_bind none dropped beside
     * GPUs; memory cap rendered last where enforced */
    struct launch_request q = {
        .argv = run, .ntasks = 4, .cpus_per_task = 8, .gpus_per_task = 3,
        .has_memory_cap = true, .memory_cap = 4000,
        .placement = mkpl (&s, 2, (const char *[]){ "nid1", "nid2" },
                           (int[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
                           16, 2, NULL, 0),
    };
    expect (&m, 4, &c, &q,
            "srun --label -c 8 -N 2 -n 4 -w nid1,nid2 --exact --gpus=2 --cpu-bind=cores "
            "--mem=4000M ./run");
    /* no GPUs: gpu_bind dropped even when it is a policy */
    m.gpu_bind = "closest";
    q.placement = mkpl (&s, 1, (const char *[]){ "nid1" },
                        (int[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 }, 16,
                        0, NULL, 0);
    q.ntasks = 2;
    expect (&m, 4, &c, &q,
            "srun --label -c 8 -N 1 -n 2 -w nid1 --exact --gres=none --cpu-bind=cores "
            "--mem=4000M ./run");
    /* values naming resources are dropped; policies kept */
    q.placement = mkpl (&s, 1, (const char *[]){ "nid1" },
                        (int[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 }, 16,
                        1, NULL, 0);
    m.cpu_bind = "verbose,map_cpu:1,2";
    m.gpu_bind = "map_gpu:0,1";
    m.mem_bind = "local";
    q.has_memory_cap = false;
    expect (&m, 4, &c, &q,
            "srun --label -c 8 -N 1 -n 2 -w nid1 --exact --gpus=1 --mem-bind=local ./run");
    m.cpu_bind = "mask_cpu:0x3";
    m.gpu_bind = "mask_gpu:0x1";
    m.mem_bind = "map_mem:0";
    expect (&m, 4, &c, &q, "srun --label -c 8 -N 1 -n 2 -w nid1 --exact --gpus=1 ./run");
    m.cpu_bind = "list:0-3";
    m.mem_bind = "mask_mem:0x1";
    m.gpu_bind = "single:1";
    expect (&m, 4, &c, &q,
            "srun --label -c 8 -N 1 -n 2 -w nid1 --exact --gpus=1 --gpu-bind=single:1 ./run");
}
END_TEST

START_TEST (slurm_placed_env)
{
    struct launcher_caps c = caps ("slurm:22.05", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    struct pl s;
    struct launch_request q = {
        .argv = run, .ntasks = 1, .cpus_per_task = 1,
        .placement = mkpl (&s, 1, (const char *[]){ "n1" }, (int[]){ 3 }, 1, 0, NULL, 0),
    };
    struct launch l;
    ck_assert_int_eq (render_launch (&m, 1, &c, &q, &l, NULL), 0);
    const char *must[] = { "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_GPU",
                           "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK", "SLURM_GPUS",
                           "SLURM_CPUS_PER_GPU", "SLURM_DISTRIBUTION", "SLURM_CPU_BIND",
                           "SLURM_NTASKS_PER_NODE" };
    for (size_t i = 0; i < sizeof (must) / sizeof (must[0]); i++)
        ck_assert_msg (has_unset (&l, must[i]), "%s not unset", must[i]);
    ck_assert (!has_unset (&l, "SLURM_JOB_ID"));
    ck_assert (!has_unset (&l, "SLURM_NTASKS"));
    ck_assert_int_eq (l.n_set, 0);
    launch_free (&l);
    /* the mask-list mode too */
    c = caps ("slurm:20.02", BERTH_SYSTEM_SLURM);
    ck_assert_int_eq (render_launch (&m, 1, &c, &q, &l, NULL), 0);
    ck_assert (has_unset (&l, "SLURM_MEM_PER_NODE"));
    launch_free (&l);
    /* unplaced: no delta (checked in expect's invariants as well) */
    q.placement = NULL;
    ck_assert_int_eq (render_launch (&m, 1, &c, &q, &l, NULL), 0);
    ck_assert_int_eq (l.n_unset, 0);
    ck_assert_ptr_null (l.env_unset);
    launch_free (&l);
}
END_TEST

START_TEST (slurm_cpu_binding)
{
    struct launcher_caps c = caps ("slurm:20.11.2", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = chrysalis ();
    struct pl s;
    /* same cores on both nodes: one mask list, restarting per node; memory
     * enforced on 20.11 */
    struct launch_request q = {
        .argv = run, .ntasks = 4, .cpus_per_task = 2, .has_memory_cap = true,
        .memory_cap = 900000,
        .placement = mkpl (&s, 2, (const char *[]){ "c1", "c2" },
                           (int[]){ 60, 61, 62, 63, 64, 65 }, 6, 0, NULL, 0),
    };
    expect (&m, 2, &c, &q,
            "srun --mpi=pmi2 -l -c 2 -N 2 -n 4 -w c1,c2 "
            "--cpu-bind=mask_cpu:0x3000000000000000,0xc000000000000000 --mem=900000M ./run");
    /* different core sets per node are refused */
    s.cores[1][0] = 0;
    expect_error (&m, 2, &c, &q,
                  "binds with one mask list that restarts on every node, but the "
                  "placement gives task 0 on node c1 cores 60-61 and task 0 on node c2 "
                  "cores 0,61; give every node the same core ids");
    /* GPUs cannot be placed */
    s.cores[1][0] = 60;
    s.p.gpus = 1;
    expect_error (&m, 2, &c, &q,
                  "this Slurm (slurm 20.11.2) cannot give a step part of a node's GPUs, "
                  "and the placement has 1 GPUs");
    /* memory not enforced before 20.11: nothing rendered, no error */
    c = caps ("slurm:20.02", BERTH_SYSTEM_SLURM);
    s.p.gpus = 0;
    q.ntasks = 1;
    q.cpus_per_task = 0;
    expect (&m, 2, &c, &q,
            "srun --mpi=pmi2 -l -N 2 -n 1 -w c1,c2 --cpu-bind=mask_cpu:0x1000000000000000 ./run");
}
END_TEST

/* srun spreads 7 tasks over 3 nodes as 3 + 2 + 2, so the daemon gives the
 * later nodes a prefix of the first node's ids; the mask list (which restarts
 * on every node) is the first node's three masks */
START_TEST (slurm_cpu_binding_balanced_nodes)
{
    struct launcher_caps c = caps ("slurm:20.02", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = chrysalis ();
    struct pl s;
    struct launch_request q = {
        .argv = run, .ntasks = 7, .cpus_per_task = 1,
        .placement = mkpl (&s, 3, (const char *[]){ "a", "b", "c" }, (int[]){ 0, 1, 2 }, 3,
                           0, NULL, 0),
    };
    s.nodes[1].ncores = 2;
    s.nodes[2].ncores = 2;
    expect (&m, 3, &c, &q,
            "srun --mpi=pmi2 -l -c 1 -N 3 -n 7 -w a,b,c --cpu-bind=mask_cpu:0x1,0x2,0x4 ./run");
    /* block fill (3 + 3 + 1) would have needed 3 cores on node b */
    s.nodes[0].ncores = 2;
    expect_error (&m, 3, &c, &q, "placement node a has 2 cores, too few for 3 tasks x 1 "
                                 "cpus per task = 3");
}
END_TEST

/* Where srun picks the cores, a span whose nodes hold different numbers of
 * tasks names each task's node (-m arbitrary, -w one name a task: measured
 * on Slurm 22.05, --exact then takes exactly those cores on each node);
 * equal counts keep the plain -N/-n; so do cores that do not add up to the
 * tasks (srun spreads them its own way). */
START_TEST (slurm_uneven_span)
{
    struct launcher_caps c = caps ("slurm:22.05.8", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    struct pl s;
    struct launch_request q = {
        .argv = run, .ntasks = 7, .cpus_per_task = 2,
        .placement = mkpl (&s, 3, (const char *[]){ "a", "b", "c" },
                           (int[]){ 0, 1, 2, 3, 4, 5 }, 6, 0, NULL, 0),
    };
    s.nodes[1].ncores = 4;
    s.nodes[2].ncores = 4;
    expect (&m, 3, &c, &q,
            "srun --label -c 2 -N 3 -n 7 -m arbitrary -w a,a,a,b,b,c,c --exact "
            "--gres=none --cpu-bind=cores ./run");
    /* even: no list */
    s.nodes[0].ncores = 4;
    q.ntasks = 6;
    expect (&m, 3, &c, &q,
            "srun --label -c 2 -N 3 -n 6 -w a,b,c --exact --gres=none --cpu-bind=cores ./run");
    /* cores that hold 7 tasks, 5 asked: srun's own spread */
    s.nodes[0].ncores = 6;
    q.ntasks = 5;
    expect (&m, 3, &c, &q,
            "srun --label -c 2 -N 3 -n 5 -w a,b,c --exact --gres=none --cpu-bind=cores ./run");
    /* the most on one node is what max_mpi_tasks_per_node limits */
    q.ntasks = 7;
    m.max_mpi_tasks_per_node = 2;
    expect_error (&m, 3, &c, &q, "7 tasks on 3 placement nodes is 3 tasks per node, "
                                 "above max_mpi_tasks_per_node = 2");
    /* where the launcher binds (one mask list for every node), as before */
    m = pm_cpu ();
    struct launcher_caps old = caps ("slurm:20.02", BERTH_SYSTEM_SLURM);
    q.cpus_per_task = 1;
    q.ntasks = 14;
    s.nodes[0].ncores = 6;
    s.nodes[1].ncores = 4;
    s.nodes[2].ncores = 4;
    expect_error (&m, 3, &old, &q, "placement node b has 4 cores, too few for 5 tasks");
}
END_TEST

/* A list of one name a task past what one argument holds is refused. */
START_TEST (slurm_uneven_span_too_long)
{
    struct launcher_caps c = caps ("slurm:22.05.8", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    m.max_mpi_tasks_per_node = 1 << 20;
    static char names[2][300];
    memset (names[0], 'x', 299);
    memset (names[1], 'y', 299);
    int n0 = 300, n1 = 200;
    static int ids[300];
    for (int i = 0; i < n0; i++)
        ids[i] = i;
    struct placement_node nodes[2] = { { names[0], ids, n0, NULL, 0 },
                                       { names[1], ids, n1, NULL, 0 } };
    struct placement p = { .nodes = nodes, .nnodes = 2 };
    struct launch_request q = { .argv = run, .ntasks = n0 + n1,
                                .cpus_per_task = 1, .placement = &p };
    expect_error (&m, 2, &c, &q, "srun's node list, one name a task, would be "
                                 "149999 bytes, above the 122880");
}
END_TEST

START_TEST (slurm_placed_errors)
{
    struct launcher_caps c = caps ("none", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    struct pl s;
    struct launch_request q = {
        .argv = run, .ntasks = 4, .cpus_per_task = 2,
        .placement = mkpl (&s, 1, (const char *[]){ "nid001" }, (int[]){ 0, 1, 2 }, 3, 0,
                           NULL, 0),
    };
    expect_error (&m, 1, &c, &q,
                  "this launcher (no srun) cannot place a launch on given nodes and "
                  "cores (placement support NONE on this slurm machine); check the "
                  "placement support first");
    expect_error (&m, 1, NULL, &q, "placement support NONE");
    /* a too-small core set is an error even where Slurm picks the cores */
    c = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    expect_error (&m, 1, &c, &q,
                  "placement node nid001 has 3 cores, too few for 4 tasks x 2 cpus per "
                  "task = 8");
    m.max_mpi_tasks_per_node = 2;
    expect_error (&m, 8, &c, &q,
                  "4 tasks on 1 placement nodes is 4 tasks per node, above "
                  "max_mpi_tasks_per_node = 2: the placement needs at least 2 nodes");
    m = pm_cpu ();
    s.p.gpus = -1;
    expect_error (&m, 1, &c, &q, "placement GPUs -1 is negative");
}
END_TEST

START_TEST (memory_caps)
{
    struct launcher_caps c = caps ("slurm:23.02", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    struct launch_request q = { .argv = exe, .ntasks = 2, .cpus_per_task = 1,
                                .has_memory_cap = true, .memory_cap = 600000 };
    /* above memory_per_node: still rendered, the launcher judges */
    expect (&m, 1, &c, &q,
            "srun --label -c 1 -N 1 -n 2 --cpu-bind=cores -m plane=128 --mem=600000M ./exe");
    c = caps ("none", BERTH_SYSTEM_SLURM);
    expect (&m, 1, &c, &q, "srun --label -c 1 -N 1 -n 2 --cpu-bind=cores -m plane=128 ./exe");
    q.memory_cap = 0;
    expect_error (&m, 1, &c, &q,
                  "memory cap 0 MB: a cap must be a positive number of MB per node");
    q.memory_cap = -5;
    struct machine_parallel p = polaris ();
    expect_error (&p, 1, &c, &q, "memory cap -5 MB");
}
END_TEST

/* ---- PBS */

START_TEST (pbs_unplaced)
{
    struct launcher_caps c = caps ("pals", BERTH_SYSTEM_PBS);
    struct machine_parallel m = aurora_gpu ();
    struct launch_request q = { .argv = exe, .ntasks = 24, .cpus_per_task = 8,
                                .gpus_per_task = 1, .has_memory_cap = true,
                                .memory_cap = 1000 };
    /* no GPU flag without gpus_per_task_flag; no memory cap on PBS */
    expect (&m, 2, &c, &q,
            "mpiexec --label -n 24 --ppn 12 --depth 8 "
            "--cpu-bind list:1-8:9-16:17-24:25-32:33-40:41-48:53-60:61-68:69-76:77-84:85-92:93-100 "
            "--gpu-bind list:0.0:0.1:1.0:1.1:2.0:2.1:3.0:3.1:4.0:4.1:5.0:5.1 "
            "--mem-bind list:0:0:0:0:0:0:1:1:1:1:1:1 ./exe");
    m = polaris ();
    m.gpus_per_task_flag = "--gpus-per-rank";
    m.cpus_per_task_flag = NULL;
    q.ntasks = 3;
    expect (&m, 2, &c, &q,
            "mpiexec --label -n 3 --ppn 3 -c 8 --gpus-per-rank 1 --cpu-bind cores ./exe");
    q.ntasks = 9;
    expect_error (&m, 2, &c, &q,
                  "9 tasks on 2 allocation nodes is 5 tasks per node, above "
                  "max_mpi_tasks_per_node = 4: the allocation needs at least 3 nodes");
    m.max_mpi_tasks_per_node = 0;
    expect_error (&m, 2, &c, &q, "max_mpi_tasks_per_node is not set for this pbs machine");
}
END_TEST

START_TEST (pbs_placed_examples)
{
    struct launcher_caps c = caps ("pals", BERTH_SYSTEM_PBS);
    struct machine_parallel m = aurora_gpu ();
    struct pl s;
    struct launch_request q = {
        .argv = run, .ntasks = 2, .cpus_per_task = 1, .has_memory_cap = true,
        .memory_cap = 5000,
        .placement = mkpl (&s, 1, (const char *[]){ "x4401c1s0b0n0" }, (int[]){ 1, 2 }, 2,
                           2, (int[]){ 2, 3 }, 2),
    };
    expect (&m, 1, &c, &q,
            "mpiexec --label -n 2 --ppn 2 --depth 1 --hosts x4401c1s0b0n0 --cpu-bind "
            "list:1:2 --env ZE_AFFINITY_MASK=1.0,1.1 ./run");
    /* one entry per task across all hosts */
    m = polaris ();
    q.ntasks = 4;
    q.cpus_per_task = 2;
    /* 4 GPUs on 2 nodes: each node's 2 ids, the same on both */
    q.placement = mkpl (&s, 2, (const char *[]){ "a", "b" }, (int[]){ 1, 2, 3, 4 }, 4, 4,
                        (int[]){ 3, 1 }, 2);
    expect (&m, 1, &c, &q,
            "mpiexec --label -n 4 --ppn 2 --depth 2 --hosts a,b --cpu-bind "
            "list:1,2:3,4:1,2:3,4 --env CUDA_VISIBLE_DEVICES=3,1 ./run");
}
END_TEST

START_TEST (pbs_placed_rules)
{
    struct launcher_caps c = caps ("pals", BERTH_SYSTEM_PBS);
    struct machine_parallel m = polaris ();
    struct pl s;
    struct launch_request q = {
        .argv = run, .ntasks = 3, .cpus_per_task = 0, .gpus_per_task = 1,
        .placement = mkpl (&s, 2, (const char *[]){ "a", "b" }, (int[]){ 7, 5 }, 2, 0,
                           NULL, 0),
    };
    /* GPUs 0: an explicit empty value; ppn spread over the hosts; policy
     * mem_bind kept as two items */
    m.mem_bind = "local";
    expect (&m, 1, &c, &q,
            "mpiexec --label -n 3 --ppn 2 --hosts a,b --cpu-bind list:7:5:7 "
            "--mem-bind local --env CUDA_VISIBLE_DEVICES= ./run");
    /* no variable and no GPUs: nothing; resource-naming mem_bind dropped */
    m.gpu_visible_devices_var = NULL;
    m.mem_bind = "list:0:1";
    expect (&m, 1, &c, &q,
            "mpiexec --label -n 3 --ppn 2 --hosts a,b --cpu-bind list:7:5:7 ./run");
    /* GPUs without the variable */
    s.p.gpus = 1;
    expect_error (&m, 1, &c, &q,
                  "the placement has 1 GPUs but this machine sets no "
                  "gpu_visible_devices_var");
    /* GPUs without ids */
    m = polaris ();
    expect_error (&m, 1, &c, &q,
                  "the placement has 1 GPUs but no GPU ids: a PBS launch needs the ids "
                  "of the free GPUs to set CUDA_VISIBLE_DEVICES");
    /* out of range: 0..gpus_per_node-1, or the gpu_bind list's items */
    s.gpu_ids[0] = 4;
    s.p.gpu_ids = s.gpu_ids;
    s.p.ngpu_ids = 1;
    expect_error (&m, 1, &c, &q,
                  "GPU id 4 is out of range: this machine has 4 GPU devices per node "
                  "(ids 0 to 3)");
    m = aurora_gpu ();
    s.gpu_ids[0] = 12;
    expect_error (&m, 1, &c, &q, "GPU id 12 is out of range: this machine has 12 GPU devices");
    s.gpu_ids[0] = 11;
    expect (&m, 1, &c, &q,
            "mpiexec --label -n 3 --ppn 2 --hosts a,b --cpu-bind list:7:5:7 "
            "--env ZE_AFFINITY_MASK=5.1 ./run");
    /* no placement support */
    c = caps ("none", BERTH_SYSTEM_PBS);
    expect_error (&m, 1, &c, &q, "cannot place a launch");
    /* tasks per node against the placement's nodes */
    c = caps ("pals", BERTH_SYSTEM_PBS);
    q.ntasks = 30;
    expect_error (&m, 1, &c, &q,
                  "30 tasks on 2 placement nodes is 15 tasks per node, above "
                  "max_mpi_tasks_per_node = 12");
    q.ntasks = 6;
    expect_error (&m, 1, &c, &q,
                  "placement node a has 2 cores, too few for 3 tasks x 1 cpus per task = 3");
}
END_TEST

/* ---- single_node and login */

START_TEST (single_node)
{
    struct launcher_caps c = caps ("taskset", BERTH_SYSTEM_SINGLE_NODE);
    struct machine_parallel m = localhost ();
    struct launch_request q = { .argv = exe, .ntasks = 2, .cpus_per_task = 2,
                                .has_memory_cap = true, .memory_cap = 100 };
    /* an MPI not known: cores per rank left to its binding, never "-c" (Open
     * MPI's -c is the process count) */
    expect (&m, 1, &c, &q, "mpirun -n 2 ./exe");
    struct pl s;
    q.placement = mkpl (&s, 1, (const char *[]){ "host" }, (int[]){ 6, 3, 2, 4 }, 4, 0,
                        NULL, 0);
    expect (&m, 1, &c, &q, "taskset -c 2-4,6 mpirun -n 2 ./exe");
    q.ntasks = 3;
    expect_error (&m, 1, &c, &q,
                  "placement node host has 4 cores, too few for 3 tasks x 2 cpus per "
                  "task = 6");
    q.ntasks = 2;
    s.p.gpus = 1;
    expect_error (&m, 1, &c, &q, "a single_node launch cannot be confined to 1 GPUs");
    s.p.gpus = 0;
    q.placement = mkpl (&s, 2, (const char *[]){ "h1", "h2" }, (int[]){ 0, 1, 2, 3 }, 4, 0,
                        NULL, 0);
    expect_error (&m, 1, &c, &q,
                  "a single_node machine runs on one node, but the placement names 2 nodes");
    c = caps ("none", BERTH_SYSTEM_SINGLE_NODE);
    expect_error (&m, 1, &c, &q, "cannot place a launch");
}
END_TEST

/* Each MPI's own spelling of cores per rank, and placed launches that stay
 * inside the taskset (both MPIs' binding otherwise leaves it). */
START_TEST (single_node_mpi)
{
    struct launcher_caps ompi = caps ("openmpi", BERTH_SYSTEM_SINGLE_NODE);
    struct launcher_caps mpich = caps ("mpich", BERTH_SYSTEM_SINGLE_NODE);
    struct machine_parallel m = localhost ();
    struct launch_request q = { .argv = exe, .ntasks = 2, .cpus_per_task = 2 };
    expect (&m, 1, &ompi, &q, "mpirun -n 2 --map-by slot:PE=2 --bind-to core ./exe");
    expect (&m, 1, &mpich, &q, "mpirun -n 2 -bind-to core:2 ./exe");
    q.cpus_per_task = 0;
    expect (&m, 1, &ompi, &q, "mpirun -n 2 ./exe");
    expect (&m, 1, &mpich, &q, "mpirun -n 2 ./exe");
    struct pl s;
    q.cpus_per_task = 2;
    q.placement = mkpl (&s, 1, (const char *[]){ "host" }, (int[]){ 6, 3, 2, 4 }, 4, 0,
                        NULL, 0);
    expect (&m, 1, &ompi, &q, "taskset -c 2-4,6 mpirun -n 2 --bind-to none ./exe");
    /* hydra: each rank its own cores, in the placement's order */
    expect (&m, 1, &mpich, &q, "taskset -c 2-4,6 mpirun -n 2 -bind-to user:6+3,2+4 ./exe");
    q.cpus_per_task = 0;
    expect (&m, 1, &mpich, &q, "taskset -c 2-4,6 mpirun -n 2 -bind-to user:6,3 ./exe");
    /* a step that is not MPI: no MPI launcher at all */
    q.ntasks = 1;
    q.cpus_per_task = 4;
    q.single_process = true;
    expect (&m, 1, &ompi, &q, "taskset -c 2-4,6 ./exe");
    expect (&m, 1, &mpich, &q, "taskset -c 2-4,6 ./exe");
    q.placement = NULL;
    expect (&m, 1, &ompi, &q, "./exe");
    q.ntasks = 2;
    expect_error (&m, 1, &ompi, &q,
                  "a step that is not MPI is one process, but 2 tasks were asked for");
    /* elsewhere a single process still needs the launcher to reach its node */
    struct machine_parallel pm = pm_cpu ();
    struct launcher_caps s25 = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    q.ntasks = 1;
    expect (&pm, 1, &s25, &q, "srun --label -c 4 -N 1 -n 1 --cpu-bind=cores -m plane=128 ./exe");
}
END_TEST

/* No cpus per task given: no flag at all (srun refuses -c 0, PALS --depth
 * 0), the launcher's one core per task. */
START_TEST (no_cpus_per_task)
{
    struct machine_parallel pm = pm_cpu (), pol = polaris ();
    struct launcher_caps s25 = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    struct launcher_caps s20 = caps ("slurm:20.02", BERTH_SYSTEM_SLURM);
    struct launcher_caps pals = caps ("pals", BERTH_SYSTEM_PBS);
    struct launch_request q = { .argv = exe, .ntasks = 4 };
    expect (&pm, 1, &s25, &q, "srun --label -N 1 -n 4 --cpu-bind=cores -m plane=128 ./exe");
    expect (&pol, 1, &pals, &q, "mpiexec --label -n 4 --ppn 4 --cpu-bind cores ./exe");
    struct pl s;
    q.placement = mkpl (&s, 1, (const char *[]){ "n1" }, (int[]){ 0, 1, 2, 3 }, 4, 0,
                        NULL, 0);
    expect (&pm, 1, &s25, &q,
            "srun --label -N 1 -n 4 -w n1 --exact --gres=none --cpu-bind=cores ./exe");
    expect (&pm, 1, &s20, &q,
            "srun --label -N 1 -n 4 -w n1 --cpu-bind=mask_cpu:0x1,0x2,0x4,0x8 ./exe");
    expect (&pol, 1, &pals, &q,
            "mpiexec --label -n 4 --ppn 4 --hosts n1 --cpu-bind list:0:1:2:3 "
            "--env CUDA_VISIBLE_DEVICES= ./exe");
}
END_TEST

/* Core sets without node names: "here, on whichever node the launcher uses". */
START_TEST (unnamed_node)
{
    struct machine_parallel pm = pm_cpu (), pol = polaris (), lh = localhost ();
    struct launcher_caps s25 = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    struct launcher_caps s20 = caps ("slurm:20.02", BERTH_SYSTEM_SLURM);
    struct launcher_caps pals = caps ("pals", BERTH_SYSTEM_PBS);
    struct launcher_caps ts = caps ("taskset", BERTH_SYSTEM_SINGLE_NODE);
    struct pl s;
    struct launch_request q = {
        .argv = exe, .ntasks = 2, .cpus_per_task = 2,
        .placement = mkpl (&s, 1, (const char *[]){ NULL }, (int[]){ 2, 3, 4, 6 }, 4, 0,
                           NULL, 0),
    };
    expect (&lh, 1, &ts, &q, "taskset -c 2-4,6 mpirun -n 2 ./exe");
    expect (&pm, 1, &s25, &q,
            "srun --label -c 2 -N 1 -n 2 --exact --gres=none --cpu-bind=cores ./exe");
    expect (&pm, 1, &s20, &q, "srun --label -c 2 -N 1 -n 2 --cpu-bind=mask_cpu:0xc,0x50 ./exe");
    expect (&pol, 1, &pals, &q,
            "mpiexec --label -n 2 --ppn 2 --depth 2 --cpu-bind list:2,3:4,6 "
            "--env CUDA_VISIBLE_DEVICES= ./exe");
    q.ntasks = 3;
    expect_error (&pm, 1, &s25, &q,
                  "placement node (the launcher's node) has 4 cores, too few for 3 tasks");
    /* two nodes, one unnamed: refused */
    q.ntasks = 2;
    q.placement = mkpl (&s, 2, (const char *[]){ "a", NULL }, (int[]){ 0, 1 }, 2, 0, NULL, 0);
    expect_error (&pm, 1, &s25, &q, "placement node 1 has no name: only a placement of "
                  "one node may leave its node unnamed (it has 2)");
}
END_TEST

/* The visible-devices variable only where the compiler section has GPUs. */
START_TEST (gpu_var_only_with_gpus)
{
    struct launcher_caps pals = caps ("pals", BERTH_SYSTEM_PBS);
    struct machine_parallel cpu = aurora_gpu ();
    cpu.gpus_per_node = 0;          /* Aurora's oneapi-ifx section */
    cpu.cpu_bind = "core";
    cpu.gpu_bind = cpu.mem_bind = NULL;
    cpu.max_mpi_tasks_per_node = 102;
    struct pl s;
    struct launch_request q = {
        .argv = exe, .ntasks = 2, .cpus_per_task = 1,
        .placement = mkpl (&s, 1, (const char *[]){ "x1" }, (int[]){ 1, 2 }, 2, 0, NULL, 0),
    };
    expect (&cpu, 1, &pals, &q, "mpiexec --label -n 2 --ppn 2 --depth 1 --hosts x1 "
            "--cpu-bind list:1:2 ./exe");
    struct machine_parallel gpu = aurora_gpu ();
    expect (&gpu, 1, &pals, &q, "mpiexec --label -n 2 --ppn 2 --depth 1 --hosts x1 "
            "--cpu-bind list:1:2 --env ZE_AFFINITY_MASK= ./exe");
}
END_TEST

static void set_node_gpus (struct pl *s, int node, const int *ids, int n, int *store)
{
    memcpy (store, ids, (size_t)n * sizeof (int));
    s->nodes[node].gpu_ids = store;
    s->nodes[node].ngpu_ids = n;
    s->p.node_gpu_ids = true;
}

/* GPU ids per node: one list where PALS can say only one, refused with the
 * ids where they differ. */
START_TEST (per_node_gpu_ids)
{
    struct launcher_caps pals = caps ("pals", BERTH_SYSTEM_PBS);
    struct launcher_caps s25 = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    struct machine_parallel pol = polaris (), pg = pm_gpu ();
    struct pl s;
    int a[2], b[2];
    struct launch_request q = {
        .argv = run, .ntasks = 4, .cpus_per_task = 2,
        .placement = mkpl (&s, 2, (const char *[]){ "a", "b" }, (int[]){ 0, 1, 2, 3 }, 4, 4,
                           NULL, 0),
    };
    set_node_gpus (&s, 0, (int[]){ 0, 1 }, 2, a);
    set_node_gpus (&s, 1, (int[]){ 0, 1 }, 2, b);
    expect (&pol, 1, &pals, &q,
            "mpiexec --label -n 4 --ppn 2 --depth 2 --hosts a,b --cpu-bind "
            "list:0,1:2,3:0,1:2,3 --env CUDA_VISIBLE_DEVICES=0,1 ./run");
    b[0] = 2;
    b[1] = 3;
    expect_error (&pol, 1, &pals, &q,
                  "PALS's --env sets one CUDA_VISIBLE_DEVICES for every node of a launch, "
                  "but the placement gives node a GPU ids 0-1, node b GPU ids 2-3: place "
                  "the same GPU ids on every node");
    /* the ids of both nodes written as one list: every node would see all 4 */
    s.p.node_gpu_ids = false;
    s.p.gpu_ids = (int[]){ 0, 1, 2, 3 };
    s.p.ngpu_ids = 4;
    s.nodes[0].gpu_ids = s.nodes[1].gpu_ids = NULL;
    s.nodes[0].ngpu_ids = s.nodes[1].ngpu_ids = 0;
    expect_error (&pol, 1, &pals, &q,
                  "the placement lists 4 GPU ids for 4 GPUs on 2 nodes (at most 2 on a "
                  "node), but PALS's --env sets one CUDA_VISIBLE_DEVICES for every node, "
                  "so each node would see all 4");
    s.p.ngpu_ids = 2;     /* a node's share: the same ids on both */
    expect (&pol, 1, &pals, &q,
            "mpiexec --label -n 4 --ppn 2 --depth 2 --hosts a,b --cpu-bind "
            "list:0,1:2,3:0,1:2,3 --env CUDA_VISIBLE_DEVICES=0,1 ./run");
    s.p.gpu_ids = NULL;
    s.p.ngpu_ids = 0;
    set_node_gpus (&s, 0, (int[]){ 0, 1 }, 2, a);
    set_node_gpus (&s, 1, (int[]){ 2, 3 }, 2, b);
    /* Slurm's --exact --gpus takes the count: its own accounting picks them */
    expect (&pg, 1, &s25, &q, "srun --label -c 2 -N 2 -n 4 -w a,b --exact --gpus=4 "
            "--cpu-bind=cores ./run");
    /* per-node ids must add up to the GPUs */
    s.p.gpus = 3;
    expect_error (&pol, 1, &pals, &q,
                  "placement has 3 GPUs but its nodes' GPU id lists hold 4 ids");
    s.p.gpus = 4;
    b[1] = 2;
    expect_error (&pol, 1, &pals, &q, "placement node b lists GPU id 2 twice");
    b[1] = 3;
    s.p.gpu_ids = a;
    s.p.ngpu_ids = 2;
    expect_error (&pol, 1, &pals, &q, "placement gives GPU ids both per node and for every "
                  "node");
}
END_TEST

START_TEST (login)
{
    struct launcher_caps c = caps ("none", BERTH_SYSTEM_LOGIN);
    struct machine_parallel m = { .system = BERTH_SYSTEM_LOGIN,
                                  .parallel_executable = "mpirun" };
    struct launch_request q = { .argv = exe, .ntasks = 1 };
    expect_error (&m, 1, &c, &q, "MPI is not allowed on a login node");
}
END_TEST

START_TEST (request_errors)
{
    struct launcher_caps c = caps ("slurm:25.11", BERTH_SYSTEM_SLURM);
    struct machine_parallel m = pm_cpu ();
    char *const empty[] = { NULL };
    struct launch_request q = { .argv = empty, .ntasks = 1 };
    expect_error (&m, 1, &c, &q, "nothing to launch: the program argv is empty");
    q.argv = exe;
    q.ntasks = 0;
    expect_error (&m, 1, &c, &q, "ntasks 0: a launch needs at least 1 task");
    q.ntasks = 1;
    q.cpus_per_task = -1;
    expect_error (&m, 1, &c, &q, "cpus per task -1 is negative");
    q.cpus_per_task = 1;
    q.gpus_per_task = -2;
    expect_error (&m, 1, &c, &q, "GPUs per task -2 is negative");
    q.gpus_per_task = 0;
    expect_error (&m, 0, &c, &q, "the allocation has 0 nodes: at least 1 is needed");
    m.parallel_executable = NULL;
    expect_error (&m, 1, &c, &q, "parallel_executable is not set for this slurm machine");
    m.parallel_executable = "";
    expect_error (&m, 1, &c, &q, "parallel_executable is not set");
    /* a flag the launcher already carries is not added twice */
    m.parallel_executable = "srun --cpu-bind=threads";
    expect_error (&m, 1, &c, &q,
                  "the launch would carry --cpu-bind twice (\"--cpu-bind=threads\" and "
                  "\"--cpu-bind=cores\")");
    m.parallel_executable = "srun -n 4";
    expect_error (&m, 1, &c, &q, "carry -n twice");
    struct launch l;
    ck_assert_int_eq (render_launch (&m, 1, &c, &q, NULL, NULL), -1);
    ck_assert_int_eq (render_launch (NULL, 1, &c, &q, &l, NULL), -1);
}
END_TEST

START_TEST (shell_quote)
{
    char *const argv[] = { "srun", "-w", "a,b", "--mem=10M", "two words", "it's", "",
                           "$HOME", "~x", NULL };
    char *s = render_shell_quote (argv);
    ck_assert_str_eq (s, "srun -w a,b --mem=10M 'two words' 'it'\\''s' '' '$HOME' '~x'");
    free (s);
    char *const none[] = { NULL };
    s = render_shell_quote (none);
    ck_assert_str_eq (s, "");
    free (s);
}
END_TEST

/* The BERTH_* variables berthd sends and libberth derives: in order, cores
 * of the first node as an id set, GPUs in their order, memory only when
 * known, the visible-devices variable only when asked for. */
START_TEST (lease_env)
{
    int c0[] = { 0, 1, 2, 5 }, c1[] = { 3 }, gpus[] = { 1, 0 };
    struct placement_node nodes[] = { { "n1", c0, 4, NULL, 0 },
                                      { "n2", c1, 1, NULL, 0 } };
    struct placement p = { nodes, 2, 2, gpus, 2, false };
    struct env_set_item *env = NULL;
    int n = 0;
    ck_assert_int_eq (render_lease_env (&p, "L7", 8000, "CUDA_VISIBLE_DEVICES",
                                        &env, &n), 0);
    const char *want[][2] = { { "BERTH_LEASE", "L7" }, { "BERTH_NODES", "n1,n2" },
                              { "BERTH_CORES", "0-2,5" }, { "BERTH_GPUS", "1,0" },
                              { "BERTH_MEMORY_MB", "8000" },
                              { "CUDA_VISIBLE_DEVICES", "1,0" } };
    ck_assert_int_eq (n, 6);
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq (env[i].name, want[i][0]);
        ck_assert_str_eq (env[i].value, want[i][1]);
    }
    env_set_free (env, n);
    /* no memory figure, no GPUs, no nodes */
    struct placement none = { NULL, 0, 0, NULL, 0, false };
    env = NULL;
    n = 0;
    ck_assert_int_eq (render_lease_env (&none, "L8", -1, NULL, &env, &n), 0);
    ck_assert_int_eq (n, 4);
    ck_assert_str_eq (env[1].value, "");
    ck_assert_str_eq (env[2].value, "");
    ck_assert_str_eq (env[3].value, "");
    env_set_free (env, n);
    char *ids = render_id_list (gpus, 0);
    ck_assert_str_eq (ids, "");
    free (ids);
}
END_TEST

START_TEST (free_is_safe)
{
    struct launch l = { 0 };
    launch_free (&l);
    launch_free (NULL);
    ck_assert_ptr_null (l.argv);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("render");
    TCase *tc = tcase_create ("all");
    tcase_add_test (tc, slurm_unplaced_examples);
    tcase_add_test (tc, slurm_unplaced_rules);
    tcase_add_test (tc, slurm_unplaced_errors);
    tcase_add_test (tc, slurm_placed_examples);
    tcase_add_test (tc, slurm_placed_rules);
    tcase_add_test (tc, slurm_placed_env);
    tcase_add_test (tc, slurm_cpu_binding);
    tcase_add_test (tc, slurm_placed_errors);
    tcase_add_test (tc, slurm_uneven_span);
    tcase_add_test (tc, slurm_uneven_span_too_long);
    tcase_add_test (tc, slurm_cpu_binding_balanced_nodes);
    tcase_add_test (tc, memory_caps);
    tcase_add_test (tc, pbs_unplaced);
    tcase_add_test (tc, pbs_placed_examples);
    tcase_add_test (tc, pbs_placed_rules);
    tcase_add_test (tc, single_node);
    tcase_add_test (tc, single_node_mpi);
    tcase_add_test (tc, no_cpus_per_task);
    tcase_add_test (tc, unnamed_node);
    tcase_add_test (tc, gpu_var_only_with_gpus);
    tcase_add_test (tc, per_node_gpu_ids);
    tcase_add_test (tc, login);
    tcase_add_test (tc, request_errors);
    tcase_add_test (tc, shell_quote);
    tcase_add_test (tc, free_is_safe);
    tcase_add_test (tc, lease_env);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
