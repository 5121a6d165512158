/* SPDX-License-Identifier: MIT */
/* Which machine is loaded when none is named, and the generic machines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "machine_select.h"
#include "machine_fake.h"
#include "testutil.h"

static struct fake fk;

/* Select with fk (set up by the caller) and no options. */
static struct machine *select_ok (const struct machine_options *o)
{
    struct machine *m = NULL;
    berth_error_t err;
    ck_assert_msg (machine_load_env (o, &fk.env, &m, &err) == 0, "%s",
                   err.text);
    return m;
}

static const char *origin (struct machine *m, const char *key)
{
    const char *file = NULL;
    int line;
    ck_assert_int_eq (config_origin (m->cfg, "parallel", key, &file, &line),
                      0);
    return file;
}

START_TEST (named_wins)
{
    fake_init (&fk);
    fk.vars[0] = "BERTH_MACHINE=frontier";
    fk.vars[1] = "SLURM_JOB_ID=42";
    fk.env.hostname = "x4102c5s2b0n0";
    struct machine_options o = { "pm-cpu", NULL, NULL, NULL };
    struct machine *m = select_ok (&o);
    ck_assert_str_eq (m->name, "pm-cpu");
    ck_assert_str_eq (m->chosen_why, "--machine pm-cpu");
    machine_destroy (m);

    /* BERTH_MACHINE before the host name and the job */
    m = select_ok (NULL);
    ck_assert_str_eq (m->name, "frontier");
    ck_assert_str_eq (m->chosen_why, "BERTH_MACHINE=frontier");
    ck_assert_int_eq (m->par.cores_per_node, 56);
    machine_destroy (m);

    /* --compiler applies to a chosen machine too */
    o.name = NULL;
    o.compiler = "craycray-mphipcc";
    m = select_ok (&o);
    ck_assert_int_eq (m->par.gpus_per_node, 8);
    machine_destroy (m);

    /* an empty variable is no choice */
    fk.vars[0] = "BERTH_MACHINE=";
    m = select_ok (NULL);
    ck_assert_str_eq (m->name, "aurora");
    machine_destroy (m);

    /* an unknown name is an error */
    fk.vars[0] = "BERTH_MACHINE=nosuch";
    berth_error_t err;
    ck_assert_int_eq (machine_load_env (NULL, &fk.env, &m, &err), -1);
    ck_assert (strstr (err.text, "unknown machine 'nosuch'"));
    ck_assert (strstr (err.text, "localhost, pm-cpu"));
}
END_TEST

static const struct {
    const char *host, *machine;
} hosts[] = {
    { "frontier01234", "frontier" },
    { "frontier01234.frontier.olcf.ornl.gov", "frontier" },
    { "x4102c5s2b0n0", "aurora" },
    { "x4102c5s2b0n0.hostmgmt2102.cm.aurora.alcf.anl.gov", "aurora" },
    { "aurora-uan-0010.hostmgmt.cm.aurora.alcf.anl.gov", "aurora" },
    { "x3005c0s7b0n0", "polaris" },
    { "polaris-login-02", "polaris" },
    { "chr-0493", "chrysalis" },
    { "chrlogin1.lcrc.anl.gov", "chrysalis" },
    { "compy01", "compy" },
    /* the sites' own patterns: Compy's compute nodes, bare login names */
    { "n0123", "compy" },
    { "aurora", "aurora" },
    { "polaris", "polaris" },
    { "dane17", "dane" },
    { "ch-fe1", "chicoma-cpu" },
    { "ilogin2", "improv" },
    /* not anyone's: nid and login names are shared between sites */
    { "nid001234", "localhost" },
    { "login05", "localhost" },
    { "x9999c0s0b0n0", "localhost" },
    { "", "localhost" },
};

START_TEST (discovery)
{
    fake_init (&fk);
    fk.env.hostname = hosts[_i].host;
    struct machine *m = select_ok (NULL);
    ck_assert_str_eq (m->name, hosts[_i].machine);
    if (strcmp (hosts[_i].machine, "localhost") != 0) {
        char want[256];
        snprintf (want, sizeof (want), "host %s matches %s [discovery] "
                  "hostnames", hosts[_i].host, hosts[_i].machine);
        ck_assert_msg (strstr (m->chosen_why, want), "%s", m->chosen_why);
        ck_assert_int_eq (fk.detect_calls, 0);
    }
    machine_destroy (m);
}
END_TEST

START_TEST (discovery_in_machines_dir)
{
    char var[4200];
    fake_init (&fk);
    snprintf (var, sizeof (var), "BERTH_MACHINES_DIR=%s",
              testdata ("machines/dir"));
    fk.vars[0] = var;
    fk.env.hostname = "pmtest07";
    struct machine *m = select_ok (NULL);
    ck_assert_str_eq (m->name, "pm-cpu");
    ck_assert_int_eq (m->par.cores_per_node, 100);
    machine_destroy (m);

    /* a host name matching nothing there or shipped: a job's machine */
    fk.env.hostname = "elsewhere";
    fk.vars[1] = "SLURM_JOB_ID=7";
    fk.vars[2] = "SLURM_CPUS_ON_NODE=16";
    m = select_ok (NULL);
    ck_assert_str_eq (m->name, "slurm");
    machine_destroy (m);
}
END_TEST

START_TEST (generic_slurm)
{
    fake_init (&fk);
    fk.vars[0] = "SLURM_JOB_ID=42";
    fk.vars[1] = "SLURM_JOB_CPUS_PER_NODE=64(x2),32";
    fk.vars[2] = "SLURM_CPUS_ON_NODE=32";
    fk.vars[3] = "SLURM_MEM_PER_NODE=1000";
    fk.vars[4] = "SLURM_GPUS_ON_NODE=4";
    fk.vars[5] = "SLURM_JOB_GPUS=0,1";
    fk.vars[6] = "PBS_JOBID=9.pbs";
    struct machine *m = select_ok (NULL);
    ck_assert_str_eq (m->name, "slurm");
    ck_assert_str_eq (m->chosen_why,
                      "inside Slurm job 42: generic slurm machine");
    ck_assert_int_eq (m->par.system, BERTH_SYSTEM_SLURM);
    ck_assert_str_eq (m->par.parallel_executable, "srun");
    ck_assert_int_eq (m->par.cores_per_node, 64);
    ck_assert_int_eq (m->par.max_mpi_tasks_per_node, 64);
    ck_assert_int_eq (m->par.memory_per_node, 1000);
    ck_assert_int_eq (m->par.gpus_per_node, 4);
    ck_assert_int_eq (m->par.login_cores, 4);
    ck_assert_ptr_null (m->par.account);
    ck_assert_str_eq (origin (m, "cores_per_node"), "SLURM_JOB_CPUS_PER_NODE");
    ck_assert_str_eq (origin (m, "memory_per_node"), "SLURM_MEM_PER_NODE");
    ck_assert (!config_has_section (m->cfg, "partition.batch"));
    ck_assert_int_eq (fk.detect_calls, 0);
    machine_destroy (m);

    /* next sources: SLURM_CPUS_ON_NODE, SLURM_JOB_GPUS; memory detected */
    fk.vars[1] = "SLURM_JOB_CPUS_PER_NODE=";
    fk.vars[3] = "SLURM_MEM_PER_NODE=lots";
    fk.vars[4] = "SLURM_GPUS_ON_NODE=x";
    m = select_ok (NULL);
    ck_assert_int_eq (m->par.cores_per_node, 32);
    ck_assert_int_eq (m->par.gpus_per_node, 2);
    ck_assert_int_eq (m->par.memory_per_node, 16000);
    ck_assert_str_eq (origin (m, "memory_per_node"), "detected");
    ck_assert_str_eq (origin (m, "gpus_per_node"), "SLURM_JOB_GPUS");
    ck_assert_int_eq (fk.detect_calls, 1);
    machine_destroy (m);

    /* nothing from the job: this node's cores, no GPUs */
    fake_init (&fk);
    fk.vars[0] = "SLURM_JOB_ID=43";
    m = select_ok (NULL);
    ck_assert_int_eq (m->par.cores_per_node, 8);
    ck_assert_int_eq (m->par.max_mpi_tasks_per_node, 8);
    ck_assert_int_eq (m->par.gpus_per_node, 0);
    ck_assert_int_eq (fk.detect_calls, 1); /* once, however many figures */
    machine_destroy (m);

    /* detection failing inside a job is an error */
    fk.detect_fails = 1;
    berth_error_t err;
    ck_assert_int_eq (machine_load_env (NULL, &fk.env, &m, &err), -1);
    ck_assert (strstr (err.text, "no sysfs here"));
}
END_TEST

START_TEST (generic_pbs)
{
    fake_init (&fk);
    fk.vars[0] = "PBS_JOBID=123.aurora-pbs";
    struct machine_options o = { NULL, NULL, NULL, NULL };
    struct machine *m = select_ok (&o);
    ck_assert_str_eq (m->name, "pbs");
    ck_assert_str_eq (m->chosen_why,
                      "inside PBS job 123.aurora-pbs: generic pbs machine");
    ck_assert_int_eq (m->par.system, BERTH_SYSTEM_PBS);
    ck_assert_str_eq (m->par.parallel_executable, "mpiexec");
    ck_assert_int_eq (m->par.cores_per_node, 8);
    ck_assert_int_eq (m->par.max_mpi_tasks_per_node, 8);
    ck_assert_int_eq (m->par.gpus_per_node, 2);
    ck_assert_int_eq (m->par.memory_per_node, 16000);
    ck_assert_str_eq (m->par.gpu_visible_devices_var, "CUDA_VISIBLE_DEVICES");
    machine_destroy (m);
}
END_TEST

START_TEST (localhost_default)
{
    fake_init (&fk);
    struct machine *m = select_ok (NULL);
    ck_assert_str_eq (m->name, "localhost");
    ck_assert_str_eq (m->chosen_why, "no machine named: localhost default");
    ck_assert_int_eq (m->par.system, BERTH_SYSTEM_SINGLE_NODE);
    ck_assert_int_eq (m->par.cores_per_node, 8);
    machine_destroy (m);
}
END_TEST

/* The real environment: whatever this host is, some machine loads (the test
 * environment names no machine and holds no job unless a CI runner does). */
START_TEST (real_environment)
{
    struct machine *m = NULL;
    berth_error_t err;
    struct machine_options o = { "localhost", NULL, NULL, NULL };
    ck_assert_msg (machine_load (&o, &m, &err) == 0, "%s", err.text);
    ck_assert_int_eq (m->par.system, BERTH_SYSTEM_SINGLE_NODE);
    ck_assert_int_gt (m->par.cores_per_node, 0);
    ck_assert_int_eq (m->par.max_mpi_tasks_per_node, m->par.cores_per_node);
    ck_assert (m->par.memory_per_node == -1 || m->par.memory_per_node > 0);
    ck_assert (m->par.parallel_executable);
    machine_destroy (m);

    struct machine_facts f;
    ck_assert_msg (machine_detect_facts (NULL, &f, &err) == 0, "%s",
                   err.text);
    ck_assert_int_gt (f.cores, 0);
    ck_assert_int_ge (f.gpus, 0);
    ck_assert (f.gpus == 0 || f.gpu_visible_devices_var);
}
END_TEST

/* The machine search path: --machine-path directories, then
 * BERTH_MACHINE_PATH's, then the shipped machines; and which file was read. */
START_TEST (search_path)
{
    char a[4096], b[4096], var[8400];
    struct machine *m = NULL;
    berth_error_t err;
    snprintf (a, sizeof (a), "%s", testdata ("machines/path-a"));
    snprintf (b, sizeof (b), "%s", testdata ("machines/path-b"));
    fake_init (&fk);
    /* an entry that is not a directory is passed over, like PATH's */
    snprintf (var, sizeof (var), "BERTH_MACHINE_PATH=/no/such/dir:%s:%s", b, a);
    fk.vars[0] = var;
    struct machine_options o = { "pm-cpu", NULL, NULL, NULL };
    m = select_ok (&o);
    ck_assert_int_eq (m->par.cores_per_node, 22);
    ck_assert_str_eq (m->file, testdata ("machines/path-b/pm-cpu.cfg"));
    ck_assert_msg (strstr (m->file_why, "BERTH_MACHINE_PATH entry 2"), "%s",
                   m->file_why);
    machine_destroy (m);

    /* --machine-path comes first */
    const char *dirs[] = { a, NULL };
    o.machine_path = dirs;
    m = select_ok (&o);
    ck_assert_int_eq (m->par.cores_per_node, 11);
    ck_assert_msg (strstr (m->file_why, "(--machine-path)"), "%s",
                   m->file_why);
    machine_destroy (m);

    /* a machine only the path has; one nobody has is shipped */
    o.name = "siteonly";
    m = select_ok (&o);
    ck_assert_int_eq (m->par.system, BERTH_SYSTEM_PBS);
    machine_destroy (m);
    o.name = "frontier";
    m = select_ok (&o);
    ck_assert_str_eq (m->file, "machines/frontier.cfg");
    ck_assert_msg (strstr (m->file_why, "shipped with berth: no frontier.cfg "
                           "in the machine path"), "%s", m->file_why);
    ck_assert_int_eq (m->par.cores_per_node, 56);
    machine_destroy (m);

    /* a file with no [parallel] keeps the clear error, naming the file */
    o.name = "noparallel";
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), -1);
    ck_assert_msg (strstr (err.text, "path-b/noparallel.cfg")
                   && strstr (err.text, "[parallel] system is not set"),
                   "%s", err.text);
    /* unknown everywhere: the directories searched are named */
    o.name = "nosuch";
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), -1);
    ck_assert_msg (strstr (err.text, "no nosuch.cfg in the machine path")
                   && strstr (err.text, "path-a (--machine-path)"), "%s",
                   err.text);
    /* an explicit directory that is not there is an error */
    const char *bad[] = { "/no/such/dir", NULL };
    o.name = "pm-cpu";
    o.machine_path = bad;
    ck_assert_int_eq (machine_load_env (&o, &fk.env, &m, &err), -1);
    ck_assert_msg (strstr (err.text, "--machine-path /no/such/dir"), "%s",
                   err.text);

    /* without a path the shipped file, and it says so */
    fake_init (&fk);
    o.machine_path = NULL;
    m = select_ok (&o);
    ck_assert_str_eq (m->file, "machines/pm-cpu.cfg");
    ck_assert_msg (strstr (m->file_why, "no --machine-path or "
                           "BERTH_MACHINE_PATH set"), "%s",
                   m->file_why);
    machine_destroy (m);
}
END_TEST

/* --config with a file that names no system adjusts the machine chosen as
 * without it (issue 17: it used to become a machine named after the file
 * and fail for want of a system). */
START_TEST (config_layers_over_chosen)
{
    char gpu[4096];
    snprintf (gpu, sizeof (gpu), "%s", testdata ("machines/gpu.cfg"));
    const char *configs[] = { gpu, NULL };
    struct machine_options o = { NULL, configs, NULL, NULL };
    fake_init (&fk);
    fk.vars[0] = "BERTH_MACHINE=pm-cpu";
    struct machine *m = select_ok (&o);
    ck_assert_str_eq (m->name, "pm-cpu");
    ck_assert_int_eq (m->par.gpus_per_node, 2);
    ck_assert_int_eq (m->par.cores_per_node, 128);
    ck_assert_msg (strstr (m->chosen_why, "BERTH_MACHINE=pm-cpu, with --config")
                   && strstr (m->chosen_why, "gpu.cfg"), "%s", m->chosen_why);
    machine_destroy (m);

    /* nothing else named: the localhost default, adjusted */
    fake_init (&fk);
    m = select_ok (&o);
    ck_assert_str_eq (m->name, "localhost");
    ck_assert_int_eq (m->par.gpus_per_node, 2);
    machine_destroy (m);

    /* a file that sets a system is a machine of its own */
    char mybox[4096];
    snprintf (mybox, sizeof (mybox), "%s", testdata ("machines/mybox.cfg"));
    const char *own[] = { mybox, NULL };
    o.configs = own;
    fk.vars[0] = "BERTH_MACHINE=pm-cpu";
    m = select_ok (&o);
    ck_assert_str_eq (m->name, "mybox");
    ck_assert_str_eq (m->file, mybox);
    machine_destroy (m);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("machine_select");
    TCase *tc = tcase_create ("select");
    tcase_add_test (tc, named_wins);
    tcase_add_loop_test (tc, discovery, 0, sizeof (hosts) / sizeof (hosts[0]));
    tcase_add_test (tc, discovery_in_machines_dir);
    tcase_add_test (tc, generic_slurm);
    tcase_add_test (tc, generic_pbs);
    tcase_add_test (tc, localhost_default);
    tcase_add_test (tc, real_environment);
    tcase_add_test (tc, search_path);
    tcase_add_test (tc, config_layers_over_chosen);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
