/* SPDX-License-Identifier: MIT */
/* The allocation's end: the scheduler's words parsed, a step's duration
 * checked against it, and the one query (with fake squeue and qstat). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "deadline_query.h"
#include "testutil.h"

#define HAS(text, want) ck_assert_msg (strstr (text, want), "missing [%s] in [%s]", want, text)

static void utc (void)
{
    setenv ("TZ", "UTC", 1);
    tzset ();
}

START_TEST (policy)
{
    enum deadline_policy p = DEADLINE_WARN;
    berth_error_t err;
    ck_assert_int_eq (deadline_policy_parse ("refuse", &p, &err), 0);
    ck_assert_int_eq (p, DEADLINE_REFUSE);
    ck_assert_int_eq (deadline_policy_parse ("warn", &p, &err), 0);
    ck_assert_int_eq (p, DEADLINE_WARN);
    ck_assert_int_eq (deadline_policy_parse ("ignore", &p, &err), -1);
    HAS (err.text, "must be 'refuse' or 'warn', got 'ignore'");
    ck_assert_int_eq (p, DEADLINE_WARN);
    ck_assert_int_eq (deadline_policy_parse (NULL, &p, &err), -1);
    ck_assert_str_eq (deadline_policy_name (DEADLINE_REFUSE), "refuse");
    ck_assert_str_eq (deadline_policy_name (DEADLINE_WARN), "warn");
}
END_TEST

START_TEST (epoch)
{
    double end = -1;
    ck_assert_int_eq (deadline_parse_epoch ("1754300000", &end), 0);
    ck_assert (end == 1754300000.0);
    static const char *bad[] = { "", "0", "-5", "12x", " 12", "1.5", "N/A" };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        end = 7;
        ck_assert_msg (deadline_parse_epoch (bad[i], &end) == -1, "'%s' parsed", bad[i]);
        ck_assert (end == 7);
    }
    ck_assert_int_eq (deadline_parse_epoch (NULL, &end), -1);
}
END_TEST

START_TEST (squeue_text)
{
    double end = -1;
    berth_error_t err;
    utc ();
    ck_assert_int_eq (deadline_parse_squeue ("2025-08-01T14:00:00\n", &end, &err), 0);
    ck_assert (end == 1754056800.0);
    ck_assert_int_eq (deadline_parse_squeue ("  2025-08-01T14:00:01  \nmore\n", &end, &err), 0);
    ck_assert (end == 1754056801.0);
    end = 5;
    ck_assert_int_eq (deadline_parse_squeue ("", &end, &err), -1);
    HAS (err.text, "squeue printed no end time");
    ck_assert_int_eq (deadline_parse_squeue ("N/A\n", &end, &err), -1);
    HAS (err.text, "no end time ('N/A'): it has no time limit");
    ck_assert_int_eq (deadline_parse_squeue ("Unknown", &end, &err), -1);
    HAS (err.text, "'Unknown'");
    ck_assert_int_eq (deadline_parse_squeue ("Fri Aug 01 14:00", &end, &err), -1);
    HAS (err.text, "squeue printed 'Fri Aug 01 14:00' for the end time, not YYYY-MM-DDTHH:MM:SS");
    ck_assert_int_eq (deadline_parse_squeue ("2025-08-01T14:00:00x", &end, &err), -1);
    ck_assert (end == 5);
}
END_TEST

static const char qstat_running[] =
    "Job Id: 8123.pbs01\n"
    "    Job_Name = ensemble\n"
    "    job_state = R\n"
    "    Resource_List.nodect = 3\n"
    "    Resource_List.walltime = 01:30:00\n"
    "    stime = Fri Aug  1 12:00:00 2025\n"
    "    resources_used.walltime = 00:10:00\n";

START_TEST (qstat_text)
{
    double end = -1;
    berth_error_t err;
    utc ();
    ck_assert_int_eq (deadline_parse_qstat (qstat_running, &end, &err), 0);
    ck_assert (end == 1754049600.0 + 5400);
    end = 5;
    ck_assert_int_eq (deadline_parse_qstat ("Job Id: 1\n    Resource_List.walltime = 01:00:00\n",
                                            &end, &err), -1);
    HAS (err.text, "qstat -f shows no stime: the job has not started");
    ck_assert_int_eq (deadline_parse_qstat ("    stime = Fri Aug  1 12:00:00 2025\n", &end,
                                            &err), -1);
    HAS (err.text, "no Resource_List.walltime");
    ck_assert_int_eq (deadline_parse_qstat ("    stime = yesterday\n"
                                            "    Resource_List.walltime = 01:00:00\n", &end,
                                            &err), -1);
    HAS (err.text, "stime = 'yesterday', not a time like");
    ck_assert_int_eq (deadline_parse_qstat ("    stime = Fri Aug  1 12:00:00 2025\n"
                                            "    Resource_List.walltime = 90\n", &end, &err), -1);
    HAS (err.text, "Resource_List.walltime = '90', not HH:MM:SS");
    ck_assert_int_eq (deadline_parse_qstat (NULL, &end, &err), -1);
    ck_assert (end == 5);
}
END_TEST

START_TEST (check)
{
    char msg[512];
    /* Fits, exactly fits, no end, no duration. */
    ck_assert_int_eq (deadline_check (1000, 5000, 3000, "a", msg, sizeof (msg)), 0);
    ck_assert_str_eq (msg, "");
    ck_assert_int_eq (deadline_check (1000, 5000, 4000, "a", msg, sizeof (msg)), 0);
    ck_assert_int_eq (deadline_check (1000, -1, 1e6, "a", msg, sizeof (msg)), 0);
    ck_assert_int_eq (deadline_check (1000, 5000, -1, "a", msg, sizeof (msg)), 0);
    /* Runs past the end: by how much, in words. */
    ck_assert_int_eq (deadline_check (0, 3600, 7200, "forward", msg, sizeof (msg)), 1);
    HAS (msg, "step 'forward' states a duration of 2h00m (7200 s) but the allocation ends "
              "in 1h00m: it would run 1h00m past the end; shorten the step");
    ck_assert_int_eq (deadline_check (0, 3600, 3601, NULL, msg, sizeof (msg)), 1);
    HAS (msg, "request states a duration of 1h00m (3601 s)");
    HAS (msg, "run 1s past the end");
    /* The end has passed: any duration is too long. */
    ck_assert_int_eq (deadline_check (4000, 3600, 0, "late", msg, sizeof (msg)), 1);
    HAS (msg, "ends in 0s (it has ended)");
}
END_TEST

START_TEST (from_env)
{
    char *env[] = { (char *) "PATH=/bin", (char *) "SLURM_JOB_END_TIME=1754056800", NULL };
    char *bad[] = { (char *) "SLURM_JOB_END_TIME=soon", NULL };
    char *none[] = { (char *) "SLURM_JOB_END_TIMEX=5", NULL };
    struct deadline_source src = { "" };
    double end = -1;
    ck_assert_int_eq (deadline_from_env (env, &end, &src), 1);
    ck_assert (end == 1754056800.0);
    ck_assert_str_eq (src.name, "SLURM_JOB_END_TIME");
    end = -1;
    ck_assert_int_eq (deadline_from_env (bad, &end, &src), 0);
    ck_assert_int_eq (deadline_from_env (none, &end, &src), 0);
    ck_assert (end == -1);
}
END_TEST

/* A fake scheduler command in dir: it records its arguments and
 * SLURM_TIME_FORMAT in dir/calls, then prints out. */
static void fake (const char *dir, const char *name, const char *out, int status)
{
    char path[512];
    snprintf (path, sizeof (path), "%s/%s", dir, name);
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    fprintf (f, "#!/bin/sh\necho \"$0 $* fmt=$SLURM_TIME_FORMAT\" >> '%s/calls'\n"
             "printf '%%s' '%s'\nexit %d\n", dir, out, status);
    fclose (f);
    chmod (path, 0755);
}

static char *calls (const char *dir)
{
    static char buf[1024];
    char path[512];
    snprintf (path, sizeof (path), "%s/calls", dir);
    FILE *f = fopen (path, "r");
    size_t n = f ? fread (buf, 1, sizeof (buf) - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose (f);
    unlink (path);
    return buf;
}

START_TEST (query)
{
    char dir[] = "/tmp/berth-deadline.XXXXXX", path_var[600];
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (path_var, sizeof (path_var), "PATH=%s", dir);
    char *env[] = { path_var, (char *) "SLURM_TIME_FORMAT=relative", NULL };
    struct deadline_source src = { "" };
    berth_error_t err;
    double end = -1;
    utc ();

    fake (dir, "squeue", "2025-08-01T14:00:00\n", 0);
    ck_assert_int_eq (deadline_query (BERTH_SYSTEM_SLURM, "4242", env, 5, &end, &src, &err), 0);
    ck_assert (end == 1754056800.0);
    ck_assert_str_eq (src.name, "squeue");
    /* The job's end, with ISO times whatever the user's SLURM_TIME_FORMAT. */
    HAS (calls (dir), "/squeue -h -j 4242 -o %e fmt=standard\n");

    fake (dir, "squeue", "N/A\n", 0);
    end = -1;
    ck_assert_int_eq (deadline_query (BERTH_SYSTEM_SLURM, "4242", env, 5, &end, &src, &err), -1);
    HAS (err.text, "it has no time limit");
    fake (dir, "squeue", "", 1);
    ck_assert_int_eq (deadline_query (BERTH_SYSTEM_SLURM, "4242", env, 5, &end, &src, &err), -1);
    HAS (err.text, "squeue");

    fake (dir, "qstat", qstat_running, 0);
    ck_assert_int_eq (deadline_query (BERTH_SYSTEM_PBS, "8123.pbs01", env, 5, &end, &src, &err), 0);
    ck_assert (end == 1754049600.0 + 5400);
    ck_assert_str_eq (src.name, "qstat");
    HAS (calls (dir), "/qstat -f 8123.pbs01 ");

    ck_assert_int_eq (deadline_query (BERTH_SYSTEM_SINGLE_NODE, "1", env, 5, &end, &src, &err), -1);
    HAS (err.text, "a single_node allocation has no end time");
    ck_assert_int_eq (deadline_query (BERTH_SYSTEM_SLURM, NULL, env, 5, &end, &src, &err), -1);
    HAS (err.text, "no batch job");
    ck_assert_str_eq (calls (dir), "");
    ck_assert (end == 1754049600.0 + 5400);

    char p[600];
    snprintf (p, sizeof (p), "%s/squeue", dir);
    unlink (p);
    snprintf (p, sizeof (p), "%s/qstat", dir);
    unlink (p);
    rmdir (dir);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("deadline");
    TCase *tc = tcase_create ("deadline");
    tcase_add_test (tc, policy);
    tcase_add_test (tc, epoch);
    tcase_add_test (tc, squeue_text);
    tcase_add_test (tc, qstat_text);
    tcase_add_test (tc, check);
    tcase_add_test (tc, from_env);
    tcase_add_test (tc, query);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
