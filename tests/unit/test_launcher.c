/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launcher.h"
#include "launcher_detect.h"
#include "testutil.h"

START_TEST (names)
{
    ck_assert_str_eq (placement_support_name (PLACEMENT_NONE), "NONE");
    ck_assert_str_eq (placement_support_name (PLACEMENT_CPU_BINDING), "CPU_BINDING");
    ck_assert_str_eq (placement_support_name (PLACEMENT_SCHEDULER), "SCHEDULER");
    ck_assert_str_eq (memcap_support_name (MEMCAP_NONE), "NONE");
    ck_assert_str_eq (memcap_support_name (MEMCAP_ENFORCED), "ENFORCED");
}
END_TEST

static void slurm_caps (int a, int b, int c, enum placement_support p,
                        enum memcap_support m, const char *desc)
{
    struct launcher_caps caps;
    launcher_caps_from_slurm (a, b, c, &caps);
    ck_assert_msg (caps.placement == p, "%d.%d.%d: placement %s", a, b, c,
                   placement_support_name (caps.placement));
    ck_assert_msg (caps.memcap == m, "%d.%d.%d: memcap %s", a, b, c,
                   memcap_support_name (caps.memcap));
    ck_assert_str_eq (caps.desc, desc);
}

START_TEST (from_slurm)
{
    slurm_caps (25, 11, -1, PLACEMENT_SCHEDULER, MEMCAP_ENFORCED, "slurm 25.11");
    slurm_caps (22, 5, 8, PLACEMENT_SCHEDULER, MEMCAP_ENFORCED, "slurm 22.05.8");
    slurm_caps (20, 11, 3, PLACEMENT_SCHEDULER, MEMCAP_ENFORCED, "slurm 20.11.3");
    slurm_caps (20, 11, 2, PLACEMENT_CPU_BINDING, MEMCAP_ENFORCED, "slurm 20.11.2");
    slurm_caps (20, 11, 0, PLACEMENT_CPU_BINDING, MEMCAP_ENFORCED, "slurm 20.11.0");
    slurm_caps (20, 11, -1, PLACEMENT_CPU_BINDING, MEMCAP_ENFORCED, "slurm 20.11");
    slurm_caps (20, 2, 7, PLACEMENT_CPU_BINDING, MEMCAP_NONE, "slurm 20.02.7");
    slurm_caps (19, 5, -1, PLACEMENT_CPU_BINDING, MEMCAP_NONE, "slurm 19.05");
    slurm_caps (-1, -1, -1, PLACEMENT_NONE, MEMCAP_NONE, "no usable srun");
    struct launcher_caps caps;
    launcher_caps_from_slurm (22, 5, 8, &caps);
    ck_assert_int_eq (caps.slurm_major, 22);
    ck_assert_int_eq (caps.slurm_minor, 5);
    ck_assert_int_eq (caps.slurm_micro, 8);
    ck_assert (!caps.pals && !caps.taskset);
}
END_TEST

static struct launcher_caps parse_ok (const char *spec, enum berth_system sys,
                                      enum placement_support p, enum memcap_support m)
{
    struct launcher_caps caps;
    berth_error_t err = { 0 };
    ck_assert_msg (launcher_caps_parse (spec, sys, &caps, &err) == 0, "%s: %s", spec,
                   err.text);
    ck_assert_msg (caps.placement == p, "%s on %d: %s", spec, sys,
                   placement_support_name (caps.placement));
    ck_assert_msg (caps.memcap == m, "%s on %d: %s", spec, sys,
                   memcap_support_name (caps.memcap));
    return caps;
}

static void parse_bad (const char *spec, enum berth_system sys, const char *needle)
{
    struct launcher_caps caps = { .desc = "untouched" };
    berth_error_t err = { 0 };
    ck_assert_int_eq (launcher_caps_parse (spec, sys, &caps, &err), -1);
    ck_assert_msg (strstr (err.text, needle), "%s: want \"%s\", got \"%s\"", spec,
                   needle, err.text);
    ck_assert_str_eq (caps.desc, "untouched");
}

START_TEST (caps_parse)
{
    parse_ok ("slurm:25.11", BERTH_SYSTEM_SLURM, PLACEMENT_SCHEDULER, MEMCAP_ENFORCED);
    parse_ok ("slurm:20.02", BERTH_SYSTEM_SLURM, PLACEMENT_CPU_BINDING, MEMCAP_NONE);
    parse_ok ("slurm:20.11.2", BERTH_SYSTEM_SLURM, PLACEMENT_CPU_BINDING,
              MEMCAP_ENFORCED);
    parse_ok ("slurm:20.11.3", BERTH_SYSTEM_SLURM, PLACEMENT_SCHEDULER, MEMCAP_ENFORCED);
    struct launcher_caps c = parse_ok ("none", BERTH_SYSTEM_SLURM, PLACEMENT_NONE,
                                       MEMCAP_NONE);
    ck_assert_str_eq (c.desc, "no srun");
    c = parse_ok ("pals", BERTH_SYSTEM_PBS, PLACEMENT_CPU_BINDING, MEMCAP_NONE);
    ck_assert (c.pals);
    parse_ok ("none", BERTH_SYSTEM_PBS, PLACEMENT_NONE, MEMCAP_NONE);
    c = parse_ok ("taskset", BERTH_SYSTEM_SINGLE_NODE, PLACEMENT_CPU_BINDING,
                  MEMCAP_NONE);
    ck_assert (c.taskset);
    parse_ok ("none", BERTH_SYSTEM_SINGLE_NODE, PLACEMENT_NONE, MEMCAP_NONE);
    /* a login node places nothing, whatever is installed */
    parse_ok ("slurm:25.11", BERTH_SYSTEM_LOGIN, PLACEMENT_NONE, MEMCAP_NONE);
    parse_ok ("pals", BERTH_SYSTEM_LOGIN, PLACEMENT_NONE, MEMCAP_NONE);
    parse_ok ("taskset", BERTH_SYSTEM_LOGIN, PLACEMENT_NONE, MEMCAP_NONE);
    parse_ok ("none", BERTH_SYSTEM_LOGIN, PLACEMENT_NONE, MEMCAP_NONE);
}
END_TEST

/* Which MPI a single_node machine's mpirun is, from --version output as the
 * Debian packages print it (Open MPI 4.1.4, MPICH 4.0.2's hydra). */
START_TEST (mpi_flavour)
{
    ck_assert_int_eq (launcher_output_mpi ("mpirun (Open MPI) 4.1.4\n\nReport bugs to "
                                           "http://www.open-mpi.org/community/help/\n"),
                      MPI_OPENMPI);
    ck_assert_int_eq (launcher_output_mpi ("mpiexec (OpenRTE) 4.0.3\n"), MPI_OPENMPI);
    ck_assert_int_eq (launcher_output_mpi ("HYDRA build details:\n    Version:"
                                           "                                 4.0.2\n"),
                      MPI_MPICH);
    ck_assert_int_eq (launcher_output_mpi ("Intel(R) MPI Library for Linux* OS\n"),
                      MPI_UNKNOWN);
    ck_assert_int_eq (launcher_output_mpi (""), MPI_UNKNOWN);
    ck_assert_int_eq (launcher_output_mpi (NULL), MPI_UNKNOWN);
    struct launcher_caps c;
    berth_error_t err;
    ck_assert_int_eq (launcher_caps_parse ("openmpi", BERTH_SYSTEM_SINGLE_NODE, &c, &err), 0);
    ck_assert_int_eq (c.mpi, MPI_OPENMPI);
    ck_assert (c.taskset);
    ck_assert_int_eq (c.placement, PLACEMENT_CPU_BINDING);
    ck_assert_int_eq (launcher_caps_parse ("mpich", BERTH_SYSTEM_SINGLE_NODE, &c, &err), 0);
    ck_assert_int_eq (c.mpi, MPI_MPICH);
    ck_assert_str_eq (c.desc, "taskset, mpich");
    ck_assert_int_eq (launcher_caps_parse ("taskset", BERTH_SYSTEM_SINGLE_NODE, &c, &err), 0);
    ck_assert_int_eq (c.mpi, MPI_UNKNOWN);
    ck_assert_str_eq (mpi_flavour_name (MPI_OPENMPI), "openmpi");
}
END_TEST

START_TEST (caps_parse_errors)
{
    parse_bad ("pals", BERTH_SYSTEM_SLURM,
               "launcher version \"pals\" does not fit a slurm machine; give "
               "slurm:MAJOR.MINOR[.MICRO] or none");
    parse_bad ("taskset", BERTH_SYSTEM_PBS, "does not fit a pbs machine; give pals or none");
    parse_bad ("slurm:22.05", BERTH_SYSTEM_PBS, "does not fit a pbs machine");
    parse_bad ("slurm:22.05", BERTH_SYSTEM_SINGLE_NODE,
               "does not fit a single_node machine; give openmpi, mpich, taskset or none");
    parse_bad ("pals", BERTH_SYSTEM_SINGLE_NODE, "does not fit a single_node machine");
    parse_bad ("mpich", BERTH_SYSTEM_PBS,
               "launcher version \"mpich\" does not fit a pbs machine; give pals "
               "or none");
    parse_bad ("openmpi", BERTH_SYSTEM_SLURM, "does not fit a slurm machine");
    parse_bad ("ompi", BERTH_SYSTEM_SINGLE_NODE,
               "launcher version \"ompi\" is not known; for a single_node machine give "
               "openmpi, mpich, taskset or none");
    parse_bad ("", BERTH_SYSTEM_SLURM, "is not known");
    parse_bad ("slurm:", BERTH_SYSTEM_SLURM, "expected slurm:MAJOR.MINOR[.MICRO]");
    parse_bad ("slurm:22", BERTH_SYSTEM_SLURM, "expected slurm:MAJOR.MINOR");
    parse_bad ("slurm:22.05x", BERTH_SYSTEM_SLURM, "expected slurm:MAJOR.MINOR");
    parse_bad ("slurm:22.05.1.4", BERTH_SYSTEM_SLURM, "expected slurm:MAJOR.MINOR");
    parse_bad ("slurm:a.b", BERTH_SYSTEM_SLURM, "expected slurm:MAJOR.MINOR");
    parse_bad ("slurm:22..1", BERTH_SYSTEM_SLURM, "expected slurm:MAJOR.MINOR");
    parse_bad ("SLURM:22.05", BERTH_SYSTEM_SLURM, "is not known");
}
END_TEST

static void version (const char *text, int a, int b, int c)
{
    int x = -9, y = -9, z = -9;
    ck_assert_msg (launcher_parse_srun_version (text, &x, &y, &z) == 0, "%s", text);
    ck_assert_int_eq (x, a);
    ck_assert_int_eq (y, b);
    ck_assert_int_eq (z, c);
}

START_TEST (srun_version)
{
    version ("slurm 22.05.8\n", 22, 5, 8);
    version ("slurm-wlm 20.11.4\n", 20, 11, 4);
    version ("slurm 23.02.0-0rc1", 23, 2, 0);
    version ("slurm 25.11", 25, 11, -1);
    version ("slurm 20.02.7\nsomething 1.2.3", 20, 2, 7);
    int x, y, z;
    ck_assert_int_eq (launcher_parse_srun_version ("srun: error: no config", &x, &y, &z),
                      -1);
    ck_assert_int_eq (launcher_parse_srun_version ("", &x, &y, &z), -1);
    ck_assert_int_eq (launcher_parse_srun_version (NULL, &x, &y, &z), -1);
    ck_assert_int_eq (launcher_parse_srun_version ("slurm 22.", &x, &y, &z), -1);
}
END_TEST

START_TEST (pals_output)
{
    ck_assert (launcher_output_is_pals ("mpiexec version 1.2.3 (PALS)\n"));
    ck_assert (launcher_output_is_pals ("banner\n  mpiexec version 2\n"));
    ck_assert (!launcher_output_is_pals ("HYDRA build details:\n    Version: 4.0.2\n"));
    ck_assert (!launcher_output_is_pals ("mpiexec (OpenRTE) 4.1.4\n"));
    ck_assert (!launcher_output_is_pals ("mpiexec version x\n"));
    ck_assert (!launcher_output_is_pals ("my mpiexec version 1\n"));
    ck_assert (!launcher_output_is_pals (""));
    ck_assert (!launcher_output_is_pals (NULL));
}
END_TEST

/* ---- detection with fake launchers first on PATH */

static char dir[64];

static void fake (const char *name, const char *body)
{
    char path[256];
    snprintf (path, sizeof (path), "%s/%s", dir, name);
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    fprintf (f, "#!/bin/sh\n%s\n", body);
    fclose (f);
    ck_assert_int_eq (chmod (path, 0755), 0);
}

static void setup (void)
{
    snprintf (dir, sizeof (dir), "/tmp/berth-launcher-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    setenv ("PATH", dir, 1);
    launcher_detect_forget ();
}

static void teardown (void)
{
    char cmd[128];
    snprintf (cmd, sizeof (cmd), "/bin/rm -rf %s", dir);
    ck_assert_int_eq (system (cmd), 0);
}

static struct launcher_caps detect (enum berth_system sys, const char *exe)
{
    struct machine m = { 0 };
    struct launcher_caps caps;
    m.par.system = sys;
    m.par.parallel_executable = (char *)exe;
    launcher_detect (&m, &caps);
    return caps;
}

START_TEST (detect_srun)
{
    fake ("srun", "echo 'slurm 22.05.8'");
    struct launcher_caps c = detect (BERTH_SYSTEM_SLURM, "srun --label");
    ck_assert_int_eq (c.placement, PLACEMENT_SCHEDULER);
    ck_assert_int_eq (c.memcap, MEMCAP_ENFORCED);
    ck_assert_str_eq (c.desc, "slurm 22.05.8");
    /* once per process: a changed srun is not asked again ... */
    fake ("srun", "echo 'slurm 20.02.7' >&2");
    c = detect (BERTH_SYSTEM_SLURM, "srun --label");
    ck_assert_str_eq (c.desc, "slurm 22.05.8");
    /* ... until forgotten; stderr is read too */
    launcher_detect_forget ();
    c = detect (BERTH_SYSTEM_SLURM, "srun --label");
    ck_assert_str_eq (c.desc, "slurm 20.02.7");
    ck_assert_int_eq (c.placement, PLACEMENT_CPU_BINDING);
    ck_assert_int_eq (c.memcap, MEMCAP_NONE);
}
END_TEST

START_TEST (detect_srun_missing_or_failing)
{
    struct launcher_caps c = detect (BERTH_SYSTEM_SLURM, "srun");
    ck_assert_int_eq (c.placement, PLACEMENT_NONE);
    ck_assert_int_eq (c.memcap, MEMCAP_NONE);
    ck_assert_str_eq (c.desc, "no usable srun");
    launcher_detect_forget ();
    fake ("srun", "echo 'slurm 22.05.8'; exit 1");
    c = detect (BERTH_SYSTEM_SLURM, "srun");
    ck_assert_int_eq (c.placement, PLACEMENT_NONE);
    launcher_detect_forget ();
    fake ("srun", "echo 'srun: error: unknown option'");
    c = detect (BERTH_SYSTEM_SLURM, "srun");
    ck_assert_int_eq (c.placement, PLACEMENT_NONE);
    ck_assert_str_eq (c.desc, "srun version unparsable");
}
END_TEST

/* State of a process from /proc: 0 when it is gone or a zombie. */
static int alive (pid_t pid)
{
    char path[64], buf[256];
    snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return 0;
    size_t n = fread (buf, 1, sizeof (buf) - 1, f);
    fclose (f);
    buf[n] = '\0';
    char *p = strrchr (buf, ')');
    return !(p && p[1] == ' ' && p[2] == 'Z');
}

START_TEST (detect_srun_hangs)
{
    /* prints a version, then hangs with a child holding the output open */
    char body[256];
    snprintf (body, sizeof (body),
              "echo 'slurm 22.05.8'; /bin/sleep 1000 & echo $! > %s/pid; wait", dir);
    fake ("srun", body);
    struct launcher_caps c = detect (BERTH_SYSTEM_SLURM, "srun");
    ck_assert_int_eq (c.placement, PLACEMENT_NONE);
    ck_assert_str_eq (c.desc, "no usable srun");
    char path[128];
    snprintf (path, sizeof (path), "%s/pid", dir);
    FILE *f = fopen (path, "r");
    ck_assert_ptr_nonnull (f);
    int pid = 0;
    ck_assert_int_eq (fscanf (f, "%d", &pid), 1);
    fclose (f);
    /* the whole probe was killed: the sleeping grandchild goes too */
    for (int i = 0; i < 200 && alive (pid); i++)
        nanosleep (&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
    ck_assert_msg (!alive (pid), "probe child %d survived the timeout", pid);
}
END_TEST

START_TEST (detect_pals)
{
    fake ("mpiexec", "echo 'mpiexec version 1.2.12'");
    struct launcher_caps c = detect (BERTH_SYSTEM_PBS, "mpiexec --label");
    ck_assert_int_eq (c.placement, PLACEMENT_CPU_BINDING);
    ck_assert_int_eq (c.memcap, MEMCAP_NONE);
    ck_assert (c.pals);
    /* another launcher word is another detection */
    fake ("mpirun", "echo 'mpirun (Open MPI) 4.1.4'");
    c = detect (BERTH_SYSTEM_PBS, "mpirun --tag-output");
    ck_assert_int_eq (c.placement, PLACEMENT_NONE);
    ck_assert (!c.pals);
    c = detect (BERTH_SYSTEM_PBS, "");
    ck_assert_int_eq (c.placement, PLACEMENT_NONE);
}
END_TEST

START_TEST (detect_taskset_and_login)
{
    struct launcher_caps c = detect (BERTH_SYSTEM_SINGLE_NODE, "mpirun");
    ck_assert_int_eq (c.placement, PLACEMENT_NONE);
    ck_assert_str_eq (c.desc, "no taskset");
    launcher_detect_forget ();
    fake ("taskset", "exit 0");
    c = detect (BERTH_SYSTEM_SINGLE_NODE, "mpirun");
    ck_assert_int_eq (c.placement, PLACEMENT_CPU_BINDING);
    ck_assert (c.taskset);
    ck_assert_int_eq (c.mpi, MPI_UNKNOWN);
    ck_assert_str_eq (c.desc, "taskset");
    /* the machine's mpirun says which MPI it is */
    launcher_detect_forget ();
    fake ("mpirun", "echo 'mpirun (Open MPI) 4.1.4'");
    c = detect (BERTH_SYSTEM_SINGLE_NODE, "mpirun");
    ck_assert_int_eq (c.mpi, MPI_OPENMPI);
    ck_assert_str_eq (c.desc, "taskset, openmpi");
    fake ("mpiexec.hydra", "echo 'HYDRA build details:'; echo '    Version: 4.0.2'");
    c = detect (BERTH_SYSTEM_SINGLE_NODE, "mpiexec.hydra");
    ck_assert_int_eq (c.mpi, MPI_MPICH);
    fake ("srun", "echo 'slurm 22.05.8'");
    c = detect (BERTH_SYSTEM_LOGIN, "srun");
    ck_assert_int_eq (c.placement, PLACEMENT_NONE);
    ck_assert_int_eq (c.memcap, MEMCAP_NONE);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("launcher");
    TCase *tc = tcase_create ("pure");
    tcase_add_test (tc, names);
    tcase_add_test (tc, from_slurm);
    tcase_add_test (tc, caps_parse);
    tcase_add_test (tc, caps_parse_errors);
    tcase_add_test (tc, mpi_flavour);
    tcase_add_test (tc, srun_version);
    tcase_add_test (tc, pals_output);
    suite_add_tcase (s, tc);
    TCase *td = tcase_create ("detect");
    tcase_add_checked_fixture (td, setup, teardown);
    tcase_add_test (td, detect_srun);
    tcase_add_test (td, detect_srun_missing_or_failing);
    tcase_set_timeout (td, 30);   /* the hanging probe takes its 5 s */
    tcase_add_test (td, detect_srun_hangs);
    tcase_add_test (td, detect_pals);
    tcase_add_test (td, detect_taskset_and_login);
    suite_add_tcase (s, td);
    return run_suite (s);
}
