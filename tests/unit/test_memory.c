/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "memory.h"
#include "testutil.h"

static struct memory_facts facts_of (const char *fixture)
{
    char proc[4200], cg[4200];
    struct memory_facts f;
    berth_error_t err;
    snprintf (proc, sizeof (proc), "%s/proc", testdata (fixture));
    snprintf (cg, sizeof (cg), "%s/cgroup", testdata (fixture));
    ck_assert_msg (memory_read_facts (proc, cg, &f, &err) == 0, "%s: %s",
                   fixture, err.text);
    return f;
}

START_TEST (v2_limit_on_the_job_level)
{
    struct memory_facts f = facts_of ("memory/v2-limit");
    ck_assert_int_eq (f.mem_total_mb, 257404);
    ck_assert_int_eq (f.mem_available_mb, 239633);
    ck_assert_int_eq (f.cgroup_limit_mb, 8192);
    ck_assert_int_eq (f.credited_mb, 8192);
}
END_TEST

START_TEST (v1_memory_line_wins_on_hybrid)
{
    struct memory_facts f = facts_of ("memory/v1-limit");
    ck_assert_int_eq (f.cgroup_limit_mb, 2048);
    ck_assert_int_eq (f.credited_mb, 2048);
}
END_TEST

START_TEST (no_limit_credits_mem_available)
{
    struct memory_facts f = facts_of ("memory/nolimit");
    ck_assert_int_eq (f.cgroup_limit_mb, -1);
    ck_assert_int_eq (f.credited_mb, 239633);
}
END_TEST

START_TEST (available_below_limit)
{
    struct memory_facts f = facts_of ("memory/low-available");
    ck_assert_int_eq (f.cgroup_limit_mb, 4096);
    ck_assert_int_eq (f.mem_available_mb, 1024);
    ck_assert_int_eq (f.credited_mb, 1024);
}
END_TEST

START_TEST (hidden_cgroup_uses_the_root)
{
    struct memory_facts f = facts_of ("memory/hidden");
    ck_assert_int_eq (f.cgroup_limit_mb, 1024);
    ck_assert_int_eq (f.credited_mb, 1024);
}
END_TEST

START_TEST (nothing_readable_is_unknown)
{
    struct memory_facts f;
    ck_assert_int_eq (memory_read_facts ("/nonexistent/proc", "/nonexistent",
                                         &f, NULL), 0);
    ck_assert_int_eq (f.mem_total_mb, -1);
    ck_assert_int_eq (f.mem_available_mb, -1);
    ck_assert_int_eq (f.cgroup_limit_mb, -1);
    ck_assert_int_eq (f.credited_mb, -1);
}
END_TEST

START_TEST (this_machine)
{
    struct memory_facts f;
    ck_assert_int_eq (memory_read_facts (NULL, NULL, &f, NULL), 0);
    ck_assert_int_gt (f.mem_total_mb, 0);
    ck_assert_int_gt (f.credited_mb, 0);
    ck_assert_int_le (f.credited_mb, f.mem_total_mb);
}
END_TEST

START_TEST (malformed_files_are_errors)
{
    char proc[4200], cg[4200];
    struct memory_facts f = { 7, 7, 7, 7 };
    berth_error_t err;
    snprintf (proc, sizeof (proc), "%s/proc", testdata ("memory/garbage"));
    snprintf (cg, sizeof (cg), "%s/cgroup", testdata ("memory/garbage"));
    ck_assert_int_eq (memory_read_facts (proc, cg, &f, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "job_1/memory.max: cannot read "
                                   "memory limit 'lots'"));
    ck_assert_int_eq (f.credited_mb, 7);
    snprintf (proc, sizeof (proc), "%s/proc", testdata ("memory/bad-meminfo"));
    ck_assert_int_eq (memory_read_facts (proc, cg, &f, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "meminfo: cannot read "
                                   "'MemTotal:       many kB'"));
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("memory");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, v2_limit_on_the_job_level);
    tcase_add_test (tc, v1_memory_line_wins_on_hybrid);
    tcase_add_test (tc, no_limit_credits_mem_available);
    tcase_add_test (tc, available_below_limit);
    tcase_add_test (tc, hidden_cgroup_uses_the_root);
    tcase_add_test (tc, nothing_readable_is_unknown);
    tcase_add_test (tc, this_machine);
    tcase_add_test (tc, malformed_files_are_errors);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
