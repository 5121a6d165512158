/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <unistd.h>

#include "run_command.h"
#include "testutil.h"

static char *const plain_env[] = { "PATH=/usr/bin:/bin", "GREETING=hi", NULL };

START_TEST (captures_both_streams)
{
    /* sh is the program here; run_command itself never uses a shell. */
    const char *argv[] = { "sh", "-c", "echo out; echo err >&2; echo $GREETING",
                           NULL };
    struct run_output o;
    int status = -1;
    berth_error_t err;
    ck_assert_int_eq (run_command (argv, plain_env, 10, &o, &status, &err), 0);
    ck_assert_str_eq (o.out, "out\nhi\n");
    ck_assert_str_eq (o.err, "err\n");
    ck_assert_int_eq (status, 0);
    run_output_free (&o);
}
END_TEST

START_TEST (arguments_are_not_shell_words)
{
    const char *argv[] = { "printf", "%s|", "a b", "$HOME", "*", NULL };
    struct run_output o;
    ck_assert_int_eq (run_command (argv, plain_env, 10, &o, NULL, NULL), 0);
    ck_assert_str_eq (o.out, "a b|$HOME|*|");
    run_output_free (&o);
}
END_TEST

START_TEST (non_zero_exit_names_command_and_stderr)
{
    const char *argv[] = { "sh", "-c", "echo partial; echo 'no controller' >&2; "
                           "echo 'try later' >&2; exit 3", NULL };
    struct run_output o = { (char *) 1, (char *) 1 };
    int status = -1;
    berth_error_t err;
    ck_assert_int_eq (run_command (argv, plain_env, 10, &o, &status, &err), -1);
    ck_assert_int_eq (status, 3);
    ck_assert_str_eq (err.code, "command_failed");
    ck_assert_ptr_nonnull (strstr (err.text, "`sh -c echo partial"));
    ck_assert_ptr_nonnull (strstr (err.text, "status 3: no controller; try "
                                   "later"));
    ck_assert_ptr_eq (o.out, (char *) 1); /* nothing handed back */
}
END_TEST

START_TEST (killed_by_signal)
{
    const char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
    struct run_output o;
    int status = -1;
    berth_error_t err;
    ck_assert_int_eq (run_command (argv, plain_env, 10, &o, &status, &err), -1);
    ck_assert_int_eq (status, 128 + 15);
    ck_assert_ptr_nonnull (strstr (err.text, "killed by signal 15"));
}
END_TEST

START_TEST (timeout_kills_the_group)
{
    /* The shell's child keeps the pipes open: only killing the group ends
     * it. */
    const char *argv[] = { "sh", "-c", "echo started >&2; sleep 30; echo late",
                           NULL };
    struct run_output o;
    berth_error_t err;
    ck_assert_int_eq (run_command (argv, plain_env, 0.3, &o, NULL, &err), -1);
    ck_assert_str_eq (err.code, "command_timeout");
    ck_assert_ptr_nonnull (strstr (err.text, "did not finish within 0.3 s"));
    ck_assert_ptr_nonnull (strstr (err.text, "it said: started"));
}
END_TEST

START_TEST (path_comes_from_the_given_environment)
{
    char path[4200];
    snprintf (path, sizeof (path), "PATH=/nonexistent:%s:/usr/bin:/bin",
              testdata ("fake-scheduler"));
    char calls[] = "/tmp/berth-test-calls-XXXXXX";
    int fd = mkstemp (calls);
    ck_assert_int_ge (fd, 0);
    char callvar[128];
    snprintf (callvar, sizeof (callvar), "FAKE_CALLS=%s", calls);
    char *env[] = { path, callvar, "FAKE_MODE=live", NULL };
    const char *argv[] = { "squeue", "-j", "7", NULL };
    struct run_output o;
    ck_assert_int_eq (run_command (argv, env, 10, &o, NULL, NULL), 0);
    ck_assert_str_eq (o.out, "RUNNING\n");
    run_output_free (&o);
    char buf[256] = "";
    FILE *f = fdopen (fd, "r");
    ck_assert_ptr_nonnull (fgets (buf, sizeof (buf), f));
    ck_assert_str_eq (buf, "squeue -j 7\n");
    fclose (f);
    unlink (calls);
}
END_TEST

START_TEST (missing_program)
{
    const char *argv[] = { "no-such-program-berth", "x", NULL };
    struct run_output o;
    berth_error_t err;
    char *env[] = { "PATH=/nonexistent:/also/not", NULL };
    ck_assert_int_eq (run_command (argv, env, 10, &o, NULL, &err), -1);
    ck_assert_str_eq (err.code, "command_not_found");
    ck_assert_ptr_nonnull (strstr (err.text, "no-such-program-berth not found "
                                   "on PATH (/nonexistent:/also/not)"));
    const char *abs[] = { "/nonexistent/prog", NULL };
    ck_assert_int_eq (run_command (abs, env, 10, &o, NULL, &err), -1);
    ck_assert_str_eq (err.code, "command_not_found");
    ck_assert_ptr_nonnull (strstr (err.text, "cannot start /nonexistent/prog"));
}
END_TEST

START_TEST (large_output)
{
    const char *argv[] = { "sh", "-c", "seq 1 100000; seq 1 50000 >&2", NULL };
    struct run_output o;
    ck_assert_int_eq (run_command (argv, plain_env, 30, &o, NULL, NULL), 0);
    ck_assert_ptr_nonnull (strstr (o.out, "\n99999\n100000\n"));
    ck_assert_ptr_nonnull (strstr (o.err, "\n50000\n"));
    run_output_free (&o);
}
END_TEST

START_TEST (env_lookup)
{
    char *envp[] = { "PATHX=no", "PATH=/bin", "EMPTY=", NULL };
    ck_assert_str_eq (run_command_env (envp, "PATH"), "/bin");
    ck_assert_str_eq (run_command_env (envp, "EMPTY"), "");
    ck_assert_ptr_null (run_command_env (envp, "PAT"));
    ck_assert_ptr_null (run_command_env (NULL, "PATH"));
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("run_command");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, captures_both_streams);
    tcase_add_test (tc, arguments_are_not_shell_words);
    tcase_add_test (tc, non_zero_exit_names_command_and_stderr);
    tcase_add_test (tc, killed_by_signal);
    tcase_add_test (tc, timeout_kills_the_group);
    tcase_add_test (tc, path_comes_from_the_given_environment);
    tcase_add_test (tc, missing_program);
    tcase_add_test (tc, large_output);
    tcase_add_test (tc, env_lookup);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
