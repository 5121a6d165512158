/* SPDX-License-Identifier: MIT */
/* The shipped machine files, layering, compiler overlays and bad files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "machine_select.h"
#include "machine_fake.h"
#include "testutil.h"

static struct fake fk;

/* Load with an empty injected environment; configs NULL-terminated. */
static int load (const char *name, const char *compiler,
                 const char *const *configs, struct machine **m,
                 berth_error_t *err)
{
    struct machine_options o = { name, configs, compiler, NULL };
    fake_init (&fk);
    return machine_load_env (&o, &fk.env, m, err);
}

static struct machine *must_load (const char *name, const char *compiler)
{
    struct machine *m = NULL;
    berth_error_t err;
    ck_assert_msg (load (name, compiler, NULL, &m, &err) == 0, "%s/%s: %s",
                   name, compiler ? compiler : "-", err.text);
    return m;
}

static void load_fails (const char *name, const char *fixture,
                        const char *want1, const char *want2)
{
    struct machine *m = NULL;
    berth_error_t err;
    const char *configs[] = { NULL, NULL };
    char path[4096];
    if (fixture) {
        snprintf (path, sizeof (path), "%s", testdata (fixture));
        configs[0] = path;
    }
    ck_assert_int_eq (load (name, NULL, fixture ? configs : NULL, &m, &err),
                      -1);
    ck_assert_ptr_null (m);
    ck_assert_msg (strstr (err.text, want1), "'%s' lacks '%s'", err.text,
                   want1);
    ck_assert_msg (!want2 || strstr (err.text, want2), "'%s' lacks '%s'",
                   err.text, want2);
}

static const char *opt (struct machine *m, const char *key)
{
    const char **k, **v;
    int n;
    static char out[512];
    berth_error_t err;
    ck_assert_msg (machine_parallel_options (m, &k, &v, &n, &err) == 0, "%s",
                   err.text);
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        if (strcmp (k[i], key) == 0)
            snprintf (out, sizeof (out), "%s", v[i]);
    free (k);
    free (v);
    return out;
}

#define STR_OR_NULL(got, want)                                               \
    do {                                                                     \
        if (want)                                                            \
            ck_assert_str_eq (got, want);                                    \
        else                                                                 \
            ck_assert_ptr_null (got);                                        \
    } while (0)

/* The figures of the brief's table, machine by machine and build by build. */
static const struct expect {
    const char *name, *compiler;
    enum berth_system system;
    const char *launcher;
    int cores, gpus, maxmpi;
    long long mem;
    const char *cpu_bind, *gpu_bind, *mem_bind, *distribution, *placement;
    const char *cpt_flag, *visible_var, *account;
} expects[] = {
    { "pm-cpu", NULL, BERTH_SYSTEM_SLURM, "srun --label", 128, 0, 128, 515100,
      "cores", NULL, NULL, NULL, "plane", NULL, NULL, "e3sm" },
    { "pm-gpu", NULL, BERTH_SYSTEM_SLURM, "srun --label", 64, 4, 4, 257200,
      "cores", "none", NULL, NULL, "plane", NULL, NULL, "e3sm" },
    { "pm-gpu", "gnu", BERTH_SYSTEM_SLURM, "srun --label", 64, 0, 64, 257200,
      "cores", "none", NULL, NULL, "plane", NULL, NULL, "e3sm" },
    { "pm-gpu", "nvidiagpu", BERTH_SYSTEM_SLURM, "srun --label", 64, 4, 4,
      257200, "cores", "none", NULL, NULL, "plane", NULL, NULL, "e3sm" },
    { "frontier", NULL, BERTH_SYSTEM_SLURM, "srun -l -K --threads-per-core=1",
      56, 0, 56, 512000, "threads", NULL, NULL, "block:cyclic", NULL, NULL,
      NULL, "cli115" },
    { "frontier", "craygnu-mphipcc", BERTH_SYSTEM_SLURM,
      "srun -l -K --threads-per-core=1", 56, 8, 8, 512000, "threads",
      "closest", NULL, "block:cyclic", NULL, NULL, NULL, "cli115" },
    { "frontier", "craycray-mphipcc", BERTH_SYSTEM_SLURM,
      "srun -l -K --threads-per-core=1", 56, 8, 8, 512000, "threads",
      "closest", NULL, "block:cyclic", NULL, NULL, NULL, "cli115" },
    { "frontier", "craygnu-hipcc", BERTH_SYSTEM_SLURM,
      "srun -l -K --threads-per-core=1", 56, 8, 8, 512000, "threads",
      "closest", NULL, "block:cyclic", NULL, NULL, NULL, "cli115" },
    { "chrysalis", NULL, BERTH_SYSTEM_SLURM, "srun --mpi=pmi2 -l", 64, 0, 64,
      253000, "cores", NULL, NULL, NULL, "plane", NULL, NULL, NULL },
    { "compy", NULL, BERTH_SYSTEM_SLURM, "srun --mpi=pmi2 --kill-on-bad-exit",
      40, 0, 40, 180000, "cores", NULL, NULL, NULL, "plane", NULL, NULL,
      "e3sm" },
    { "dane", NULL, BERTH_SYSTEM_SLURM, "srun --mpi=pmi2 --export=ALL", 112,
      0, 112, 240000, "cores", NULL, NULL, NULL, "plane", NULL, NULL, NULL },
    { "chicoma-cpu", NULL, BERTH_SYSTEM_SLURM, "srun --label", 128, 0, 128,
      480000, "cores", NULL, NULL, NULL, "plane", NULL, NULL, NULL },
    { "aurora", NULL, BERTH_SYSTEM_PBS, "mpiexec --label", 102, 0, 102,
      960000, "core", NULL, NULL, NULL, NULL, "--depth", "ZE_AFFINITY_MASK",
      "E3SM_Dec" },
    { "aurora", "oneapi-ifxgpu", BERTH_SYSTEM_PBS, "mpiexec --label", 96, 12,
      12, 960000,
      "list:1-8:9-16:17-24:25-32:33-40:41-48:53-60:61-68:69-76:77-84:85-92:"
      "93-100",
      "list:0.0:0.1:1.0:1.1:2.0:2.1:3.0:3.1:4.0:4.1:5.0:5.1",
      "list:0:0:0:0:0:0:1:1:1:1:1:1", NULL, NULL, "--depth",
      "ZE_AFFINITY_MASK", "E3SM_Dec" },
    { "polaris", NULL, BERTH_SYSTEM_PBS, "mpiexec --label", 32, 4, 4, 480000,
      "core", NULL, NULL, NULL, NULL, "--depth", "CUDA_VISIBLE_DEVICES",
      "E3SMinput" },
    { "polaris", "gnu", BERTH_SYSTEM_PBS, "mpiexec --label", 32, 0, 32,
      480000, "core", NULL, NULL, NULL, NULL, "--depth",
      "CUDA_VISIBLE_DEVICES", "E3SMinput" },
    { "improv", NULL, BERTH_SYSTEM_PBS, "mpirun --tag-output", 128, 0, 128,
      240000, "cores", NULL, NULL, NULL, "plane", NULL, NULL, NULL },
};

START_TEST (shipped_figures)
{
    const struct expect *e = &expects[_i];
    struct machine *m = must_load (e->name, e->compiler);
    const struct machine_parallel *p = &m->par;
    ck_assert_str_eq (m->name, e->name);
    ck_assert_int_eq (p->system, e->system);
    ck_assert_str_eq (p->parallel_executable, e->launcher);
    ck_assert_int_eq (p->cores_per_node, e->cores);
    ck_assert_int_eq (p->gpus_per_node, e->gpus);
    ck_assert_int_eq (p->max_mpi_tasks_per_node, e->maxmpi);
    ck_assert_int_eq (p->memory_per_node, e->mem);
    STR_OR_NULL (p->cpu_bind, e->cpu_bind);
    STR_OR_NULL (p->gpu_bind, e->gpu_bind);
    STR_OR_NULL (p->mem_bind, e->mem_bind);
    STR_OR_NULL (p->distribution, e->distribution);
    STR_OR_NULL (p->placement, e->placement);
    STR_OR_NULL (p->cpus_per_task_flag, e->cpt_flag);
    STR_OR_NULL (p->gpu_visible_devices_var, e->visible_var);
    STR_OR_NULL (p->account, e->account);
    ck_assert_ptr_null (p->gpus_per_task_flag);
    ck_assert_int_eq (p->login_cores, 4);
    ck_assert_int_eq (p->login_gpus, 0);
    machine_destroy (m);
}
END_TEST

/* Every shipped machine loads with its default compiler and with each of
 * its compiler sections, and every target section has sane figures. */
START_TEST (every_machine_every_section)
{
    int nmachines = 0;
    for (const char *const *n = machine_shipped_names (); *n; n++) {
        if (strcmp (*n, "localhost") == 0)
            continue;
        struct machine *m = must_load (*n, NULL);
        nmachines++;
        ck_assert_msg (m->compiler, "%s has no [build] compiler", *n);
        ck_assert_int_gt (m->par.cores_per_node, 0);
        ck_assert_int_gt (m->par.max_mpi_tasks_per_node, 0);
        ck_assert_int_gt (m->par.memory_per_node, 0);
        ck_assert (m->par.system == BERTH_SYSTEM_SLURM
                   || m->par.system == BERTH_SYSTEM_PBS);
        size_t ns = config_section_count (m->cfg);
        for (size_t i = 0; i < ns; i++) {
            const char *sec = config_section_name (m->cfg, i);
            if (strncmp (sec, "parallel.", 9) == 0) {
                struct machine *mc = must_load (*n, sec + 9);
                ck_assert_int_le (mc->par.max_mpi_tasks_per_node,
                                  mc->par.cores_per_node);
                ck_assert_int_ge (mc->par.gpus_per_node, 0);
                machine_destroy (mc);
            }
            /* target sections name a target of their axis's list */
            const char *axes[][2] = { { "partition.", "partitions" },
                                      { "qos.", "qos" },
                                      { "queue.", "queues" } };
            for (int a = 0; a < 3; a++) {
                size_t len = strlen (axes[a][0]);
                if (strncmp (sec, axes[a][0], len) != 0)
                    continue;
                char **items;
                int count, found = 0;
                berth_error_t err;
                ck_assert_int_eq (machine_list (m, "parallel", axes[a][1],
                                                &items, &count, &err), 0);
                for (int j = 0; j < count; j++)
                    found |= strcmp (items[j], sec + len) == 0;
                for (int j = 0; j < count; j++)
                    free (items[j]);
                free (items);
                ck_assert_msg (found, "%s: [%s] is not in %s", *n, sec,
                               axes[a][1]);
            }
        }
        machine_destroy (m);
    }
    ck_assert_int_eq (nmachines, 10);
}
END_TEST

static const char *get (struct machine *m, const char *sec, const char *key)
{
    const char *v;
    berth_error_t err;
    ck_assert_msg (config_get (m->cfg, sec, key, &v, &err) == 0, "%s",
                   err.text);
    return v;
}

START_TEST (targets)
{
    struct machine *m = must_load ("frontier", NULL);
    ck_assert_str_eq (get (m, "partition.batch", "max_wallclock_bins"),
                      "91: 02:00:00, 183: 06:00:00, 9472: 12:00:00");
    ck_assert_str_eq (get (m, "partition.batch", "max_nodes"), "9472");
    ck_assert_str_eq (get (m, "partition.extended", "max_nodes"), "64");
    ck_assert_str_eq (get (m, "partition.extended", "max_wallclock"),
                      "24:00:00");
    ck_assert_str_eq (get (m, "qos.debug", "max_wallclock"), "02:00:00");
    machine_destroy (m);

    m = must_load ("aurora", NULL);
    ck_assert_str_eq (get (m, "queue.capacity", "max_nodes"), "16");
    ck_assert_str_eq (get (m, "queue.capacity", "max_wallclock"),
                      "168:00:00");
    ck_assert_str_eq (get (m, "queue.prod", "min_nodes"), "256");
    ck_assert_str_eq (get (m, "queue.prod", "max_nodes"), "");
    ck_assert_str_eq (get (m, "queue.prod", "max_wallclock"), "12:00:00");
    ck_assert_str_eq (get (m, "queue.debug", "max_nodes"), "2");
    ck_assert_str_eq (get (m, "queue.debug", "max_wallclock"), "01:00:00");
    machine_destroy (m);

    m = must_load ("pm-gpu", NULL);
    ck_assert_str_eq (get (m, "qos.regular", "max_nodes"), "3072");
    ck_assert_str_eq (get (m, "qos.debug", "max_wallclock"), "00:30:00");
    ck_assert_str_eq (get (m, "parallel", "constraints"), "gpu");
    machine_destroy (m);

    m = must_load ("compy", NULL);
    ck_assert_str_eq (get (m, "partition.slurm", "max_nodes"), "440");
    ck_assert_str_eq (get (m, "partition.short", "max_wallclock"),
                      "02:00:00");
    machine_destroy (m);

    m = must_load ("chrysalis", NULL);
    ck_assert_str_eq (get (m, "partition.debug", "max_nodes"), "10");
    ck_assert_str_eq (get (m, "partition.compute", "max_wallclock"),
                      "168:00:00");
    machine_destroy (m);
}
END_TEST

START_TEST (compiler_overlay)
{
    /* '-' becomes '_' in the section name; the compiler is kept as given */
    struct machine *m = must_load ("frontier", "craygnu-mphipcc");
    ck_assert_str_eq (m->compiler, "craygnu-mphipcc");
    ck_assert_str_eq (opt (m, "gpus_per_node"), "8");
    ck_assert_str_eq (opt (m, "gpu_bind"), "closest");
    ck_assert_str_eq (opt (m, "cpu_bind"), "threads");
    machine_destroy (m);

    /* the default comes from [build] compiler */
    m = must_load ("aurora", NULL);
    ck_assert_str_eq (m->compiler, "oneapi-ifx");
    machine_destroy (m);

    /* pm-gpu reads ${gpus_per_node} as 4; options list it interpolated */
    m = must_load ("pm-gpu", NULL);
    ck_assert_str_eq (m->compiler, "gnugpu");
    ck_assert_str_eq (opt (m, "max_mpi_tasks_per_node"), "4");
    ck_assert_str_eq (config_get_raw (m->cfg, "parallel",
                                      "max_mpi_tasks_per_node"),
                      "${gpus_per_node}");
    machine_destroy (m);

    /* a compiler without a section is the plain [parallel] */
    m = must_load ("pm-cpu", "intel");
    ck_assert_str_eq (m->compiler, "intel");
    ck_assert_int_eq (m->par.cores_per_node, 128);
    ck_assert_ptr_null (m->compiler_warning);
    ck_assert_str_eq (m->compiler_why, "given (--compiler): no [parallel.intel] section, "
                      "[parallel] as it is");
    machine_destroy (m);
}
END_TEST

/* Which compilers a machine knows; one it does not know is refused where the
 * machine lists its compilers, taken with a warning where it lists none. */
START_TEST (compilers_known)
{
    struct machine *m = must_load ("frontier", NULL);
    char **v;
    int n;
    berth_error_t err;
    ck_assert_int_eq (machine_compilers (m, &v, &n, &err), 0);
    ck_assert_int_eq (n, 8);
    ck_assert_str_eq (v[0], "craygnu");          /* the [build] compiler first */
    ck_assert_str_eq (v[3], "craygnu-mphipcc");  /* as the list spells it */
    for (int i = 0; i < n; i++)
        free (v[i]);
    free (v);
    ck_assert (machine_has_compiler_section (m, "craygnu-mphipcc"));
    ck_assert (machine_has_compiler_section (m, "CRAYGNU_MPHIPCC"));
    ck_assert (!machine_has_compiler_section (m, "craygnu"));
    ck_assert_msg (strstr (m->compiler_why, "the machine's [build] compiler ("), "%s",
                   m->compiler_why);
    machine_destroy (m);

    struct machine *bad = NULL;
    ck_assert_int_eq (load ("pm-cpu", "bogus", NULL, &bad, &err), -1);
    ck_assert_ptr_null (bad);
    ck_assert_str_eq (err.text, "machine pm-cpu has no compiler 'bogus': it knows gnu, "
                      "intel and nvidia ([build] compilers and its "
                      "[parallel.<compiler>] sections); give one of them with --compiler");
    ck_assert_int_eq (load ("aurora", "oneapi_ifxgpu", NULL, &bad, &err), 0);
    ck_assert_int_eq (bad->par.gpus_per_node, 12);
    machine_destroy (bad);

    /* localhost lists none: taken, with a warning naming what it knows */
    m = must_load ("localhost", "gnu");
    ck_assert_ptr_nonnull (m->compiler_warning);
    ck_assert_msg (strstr (m->compiler_warning, "machine localhost has no [parallel.gnu] "
                           "section and lists no [build] compilers"), "%s",
                   m->compiler_warning);
    machine_destroy (m);
    m = must_load ("localhost", NULL);
    ck_assert_ptr_null (m->compiler);
    ck_assert_ptr_null (m->compiler_warning);
    ck_assert_str_eq (m->compiler_why, "no compiler given and no [build] compiler: "
                      "[parallel] as it is");
    machine_destroy (m);
}
END_TEST

START_TEST (options_table)
{
    struct machine *m = must_load ("aurora", "oneapi-ifxgpu");
    const char **k, **v;
    int n;
    berth_error_t err;
    ck_assert_int_eq (machine_parallel_options (m, &k, &v, &n, &err), 0);
    /* known options first in a fixed order, overlay values winning */
    ck_assert_int_ge (n, 12);
    ck_assert_str_eq (k[0], "system");
    ck_assert_str_eq (v[0], "pbs");
    ck_assert_str_eq (k[1], "parallel_executable");
    ck_assert_str_eq (k[2], "cores_per_node");
    int cores = -1, login = -1, queues = -1;
    for (int i = 0; i < n; i++) {
        if (!strcmp (k[i], "cores_per_node"))
            cores = i;
        if (!strcmp (k[i], "login_cores"))
            login = i;
        if (!strcmp (k[i], "queues"))
            queues = i;
        for (int j = 0; j < i; j++)
            ck_assert_str_ne (k[i], k[j]);
    }
    ck_assert_int_ge (cores, 0);
    ck_assert_str_eq (v[cores], "96");
    ck_assert_int_ge (login, 0);
    ck_assert_str_eq (v[login], "4");
    ck_assert_str_eq (v[queues], "capacity, prod, debug");
    free (k);
    free (v);
    machine_destroy (m);

    /* keys only an overlay has are listed too */
    const char *configs[] = { testdata ("machines/mybox.cfg"), NULL };
    ck_assert_int_eq (load (NULL, NULL, configs, &m, &err), 0);
    ck_assert_str_eq (opt (m, "gpus_per_node"), "1");
    ck_assert_int_eq (m->par.gpus_per_node, 1);
    machine_destroy (m);
}
END_TEST

START_TEST (lists)
{
    struct machine *m = must_load ("pm-cpu", NULL);
    char **items;
    int n;
    berth_error_t err;
    ck_assert_int_eq (machine_list (m, "parallel", "qos", &items, &n, &err),
                      0);
    ck_assert_int_eq (n, 3);
    ck_assert_str_eq (items[0], "regular");
    ck_assert_str_eq (items[1], "debug");
    ck_assert_str_eq (items[2], "premium");
    for (int i = 0; i < n; i++)
        free (items[i]);
    free (items);
    /* absent: no items */
    ck_assert_int_eq (machine_list (m, "parallel", "queues", &items, &n,
                                    &err), 0);
    ck_assert_int_eq (n, 0);
    free (items);
    ck_assert_int_eq (machine_list (m, "nosection", "x", &items, &n, &err),
                      0);
    ck_assert_int_eq (n, 0);
    free (items);
    machine_destroy (m);
}
END_TEST

START_TEST (layering)
{
    struct machine *m;
    berth_error_t err;
    const char *configs[] = { testdata ("machines/override.cfg"), NULL };
    ck_assert_int_eq (load ("pm-cpu", NULL, configs, &m, &err), 0);
    ck_assert_int_eq (m->par.memory_per_node, 400000);
    ck_assert_int_eq (m->par.cores_per_node, 128);
    ck_assert_str_eq (m->par.cpu_bind, "cores");
    ck_assert_str_eq (opt (m, "my_tool_option"), "kept");
    ck_assert (strstr (m->chosen_why, "--machine pm-cpu"));
    ck_assert (strstr (m->chosen_why, "override.cfg"));
    const char *file;
    int line;
    ck_assert_int_eq (config_origin (m->cfg, "parallel", "memory_per_node",
                                     &file, &line), 0);
    ck_assert (strstr (file, "override.cfg"));
    ck_assert_int_eq (line, 3);
    machine_destroy (m);

    /* hyperthreading is a user's opt-in; later files win */
    char a[4096], b[4096];
    snprintf (a, sizeof (a), "%s", testdata ("machines/hyperthreading.cfg"));
    snprintf (b, sizeof (b), "%s", testdata ("machines/override.cfg"));
    const char *two[] = { a, b, NULL };
    ck_assert_int_eq (load ("pm-cpu", NULL, two, &m, &err), 0);
    ck_assert_int_eq (m->par.cores_per_node, 256);
    ck_assert_int_eq (m->par.max_mpi_tasks_per_node, 256);
    ck_assert_str_eq (m->par.cpu_bind, "threads");
    ck_assert_int_eq (m->par.memory_per_node, 400000);
    machine_destroy (m);

    /* --config alone: a machine named after the file */
    const char *mine[] = { testdata ("machines/mybox.cfg"), NULL };
    ck_assert_int_eq (load (NULL, NULL, mine, &m, &err), 0);
    ck_assert_str_eq (m->name, "mybox");
    ck_assert (strstr (m->chosen_why, "--config"));
    ck_assert_str_eq (m->compiler, "gnu-x");
    ck_assert_int_eq (m->par.system, BERTH_SYSTEM_SINGLE_NODE);
    ck_assert_int_eq (m->par.cores_per_node, 6);
    ck_assert_int_eq (m->par.login_cores, 4);
    machine_destroy (m);
}
END_TEST

START_TEST (machines_dir)
{
    struct machine *m;
    berth_error_t err;
    char var[4200];
    struct machine_options o = { "pm-cpu", NULL, NULL, NULL };
    fake_init (&fk);
    snprintf (var, sizeof (var), "BERTH_MACHINES_DIR=%s",
              testdata ("machines/dir"));
    fk.vars[0] = var;
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), 0);
    ck_assert_int_eq (m->par.cores_per_node, 100);
    ck_assert_ptr_null (m->par.placement); /* the shipped text is not read */
    machine_destroy (m);

    /* a machine only the directory has */
    o.name = "custom";
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), 0);
    ck_assert_int_eq (m->par.system, BERTH_SYSTEM_PBS);
    ck_assert_int_eq (m->par.cores_per_node, 12);
    machine_destroy (m);

    /* machines the directory lacks are the shipped ones */
    o.name = "frontier";
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), 0);
    ck_assert_int_eq (m->par.cores_per_node, 56);
    machine_destroy (m);
}
END_TEST

START_TEST (localhost_detected)
{
    struct machine *m = must_load ("localhost", NULL);
    ck_assert_int_eq (fk.detect_calls, 1);
    ck_assert_int_eq (m->par.system, BERTH_SYSTEM_SINGLE_NODE);
    ck_assert_str_eq (m->par.parallel_executable, "mpiexec");
    ck_assert_int_eq (m->par.cores_per_node, 8);
    ck_assert_int_eq (m->par.max_mpi_tasks_per_node, 8);
    ck_assert_int_eq (m->par.gpus_per_node, 2);
    ck_assert_int_eq (m->par.memory_per_node, 16000);
    ck_assert_str_eq (m->par.gpu_visible_devices_var, "CUDA_VISIBLE_DEVICES");
    const char *file;
    int line;
    ck_assert_int_eq (config_origin (m->cfg, "parallel", "cores_per_node",
                                     &file, &line), 0);
    ck_assert_str_eq (file, "detected");
    ck_assert_str_eq (opt (m, "cores_per_node"), "8");
    machine_destroy (m);

    /* nothing on PATH, nothing known: mpirun, memory unknown, no GPUs */
    struct machine_options o = { "localhost", NULL, NULL, NULL };
    berth_error_t err;
    fake_init (&fk);
    fk.facts.launcher[0] = '\0';
    fk.facts.memory_mb = -1;
    fk.facts.gpus = 0;
    fk.facts.gpu_visible_devices_var = NULL;
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), 0);
    ck_assert_str_eq (m->par.parallel_executable, "mpirun");
    ck_assert_int_eq (m->par.memory_per_node, -1);
    ck_assert_int_eq (m->par.gpus_per_node, 0);
    ck_assert_ptr_null (m->par.gpu_visible_devices_var);
    machine_destroy (m);

    /* a user's figure wins over detection; max follows the figure in force */
    const char *configs[] = { testdata ("machines/cores4.cfg"), NULL };
    ck_assert_int_eq (load ("localhost", NULL, configs, &m, &err), 0);
    ck_assert_int_eq (m->par.cores_per_node, 4);
    ck_assert_int_eq (m->par.max_mpi_tasks_per_node, 4);
    machine_destroy (m);

    /* a fully described single_node machine is not detected at all */
    const char *mine[] = { testdata ("machines/mybox.cfg"), NULL };
    ck_assert_int_eq (load (NULL, NULL, mine, &m, &err), 0);
    ck_assert_int_eq (fk.detect_calls, 1);
    ck_assert_int_eq (m->par.max_mpi_tasks_per_node, 6);
    ck_assert_int_eq (m->par.memory_per_node, 30000);
    machine_destroy (m);

    /* detection failing is an error naming the machine */
    fake_init (&fk);
    fk.detect_fails = 1;
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), -1);
    ck_assert (strstr (err.text, "localhost"));
    ck_assert (strstr (err.text, "no sysfs here"));
}
END_TEST

START_TEST (bad_files)
{
    load_fails ("nosuch", NULL, "unknown machine 'nosuch'", "pm-cpu");
    load_fails ("nosuch", NULL, "frontier, chrysalis", "--config");
    load_fails ("../etc/passwd", NULL, "unknown machine", NULL);
    load_fails (NULL, "machines/bad-system.cfg", "bad-system.cfg:3",
                "system = 'sge' is not a known system");
    load_fails (NULL, "machines/bad-system.cfg", "slurm, pbs, single_node",
                NULL);
    load_fails (NULL, "machines/bad-cores.cfg", "bad-cores.cfg:5",
                "cores_per_node = 'lots' is not an integer");
    load_fails ("pm-cpu", "machines/zero-memory.cfg", "zero-memory.cfg:2",
                "memory_per_node = 0 is out of range");
    load_fails ("pm-cpu", "machines/zero-memory.cfg", "leave it empty", NULL);
}
END_TEST

START_TEST (bad_values)
{
    struct machine *m;
    berth_error_t err;
    const char *neg[] = { testdata ("machines/negative-gpus.cfg"), NULL };
    struct machine_options o = { "pm-gpu", neg, "gnu", NULL };
    fake_init (&fk);
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), -1);
    ck_assert_msg (strstr (err.text, "negative-gpus.cfg:2: [parallel.gnu] "
                           "gpus_per_node = -1"), "%s", err.text);
    /* the same file with another compiler leaves it unread */
    o.compiler = "gnugpu";
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), 0);
    ck_assert_int_eq (m->par.gpus_per_node, 4);
    machine_destroy (m);

    /* a file that sets no system adjusts the machine chosen without it
     * (here the localhost default) instead of failing for want of one */
    const char *nosys[] = { testdata ("machines/no-system.cfg"), NULL };
    ck_assert_int_eq (load (NULL, NULL, nosys, &m, &err), 0);
    ck_assert_str_eq (m->name, "localhost");
    ck_assert_int_eq (m->par.cores_per_node, 8);
    machine_destroy (m);
    load_fails (NULL, "machines/no-launcher.cfg", "parallel_executable",
                "system pbs");
    load_fails (NULL, "machines/bad-ref.cfg", "nowhere", "cores_per_node");
    load_fails (NULL, "machines/bad-syntax.cfg", "bad-syntax.cfg", NULL);
    load_fails (NULL, "machines/does-not-exist.cfg", "does-not-exist.cfg",
                NULL);
}
END_TEST

START_TEST (shipped_names_and_systems)
{
    const char *const *n = machine_shipped_names ();
    const char *want[] = { "localhost", "pm-cpu", "pm-gpu", "frontier",
                           "chrysalis", "compy", "dane", "chicoma-cpu",
                           "aurora", "polaris", "improv" };
    int count = 0;
    for (; n[count]; count++)
        ck_assert_str_eq (n[count], want[count]);
    ck_assert_int_eq (count, 11);
    ck_assert (strstr (machine_shipped_text ("default"), "login_cores = 4"));
    ck_assert (strstr (machine_shipped_text ("localhost"), "single_node"));
    ck_assert_ptr_null (machine_shipped_text ("nosuch"));
    ck_assert_ptr_null (machine_shipped_text (NULL));

    enum berth_system s;
    berth_error_t err;
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq (berth_system_parse (berth_system_name (i), &s,
                                              &err), 0);
        ck_assert_int_eq (s, i);
    }
    ck_assert_str_eq (berth_system_name (BERTH_SYSTEM_SINGLE_NODE),
                      "single_node");
    ck_assert_int_eq (berth_system_parse ("cobalt", &s, &err), -1);
    ck_assert (strstr (err.text, "unknown system 'cobalt'"));
    ck_assert_int_eq (berth_system_parse (NULL, &s, &err), -1);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("machine");
    TCase *tc = tcase_create ("machine");
    tcase_add_loop_test (tc, shipped_figures, 0,
                         sizeof (expects) / sizeof (expects[0]));
    tcase_add_test (tc, every_machine_every_section);
    tcase_add_test (tc, targets);
    tcase_add_test (tc, compiler_overlay);
    tcase_add_test (tc, compilers_known);
    tcase_add_test (tc, options_table);
    tcase_add_test (tc, lists);
    tcase_add_test (tc, layering);
    tcase_add_test (tc, machines_dir);
    tcase_add_test (tc, localhost_detected);
    tcase_add_test (tc, bad_files);
    tcase_add_test (tc, bad_values);
    tcase_add_test (tc, shipped_names_and_systems);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
