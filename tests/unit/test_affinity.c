/* SPDX-License-Identifier: MIT */
/* The CPU set of a local step, from recorded topologies. */
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "testutil.h"

static char *threads_text (const char *topology, const int *cores, int ncores,
                           const int *usable, int nusable)
{
    berth_error_t err = { 0 };
    int *t = NULL, n = 0;
    static char buf[256];
    int rc = affinity_threads (testdata (topology), cores, ncores, usable, nusable, &t, &n, &err);
    ck_assert_msg (rc == 0, "%s", err.text);
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf (buf + strlen (buf), sizeof (buf) - strlen (buf), "%s%d", i ? "," : "", t[i]);
    free (t);
    return buf;
}

static const int all8[] = { 0, 1, 2, 3, 4, 5, 6, 7 };

START_TEST (test_siblings_join)
{
    /* interleaved: cpu 2k and 2k+1 are one core, named 2k */
    ck_assert_str_eq (threads_text ("sysfs/interleaved", (int[]){ 0, 4 }, 2, all8, 8),
                      "0,1,4,5");
    ck_assert_str_eq (threads_text ("sysfs/interleaved", (int[]){ 6 }, 1, all8, 8), "6,7");
}
END_TEST

START_TEST (test_only_usable_threads)
{
    /* a sibling this process may not use is left out */
    ck_assert_str_eq (threads_text ("sysfs/interleaved", (int[]){ 0, 2 }, 2,
                                    (int[]){ 0, 2, 3 }, 3), "0,2,3");
}
END_TEST

START_TEST (test_unreadable_topology)
{
    /* no siblings file: each id is its own core */
    ck_assert_str_eq (threads_text ("sysfs/none-here", (int[]){ 3, 1 }, 2, all8, 8), "1,3");
}
END_TEST

START_TEST (test_none_usable)
{
    berth_error_t err = { 0 };
    int *t = (int *) 1, n = -1;
    int rc = affinity_threads (testdata ("sysfs/interleaved"), (int[]){ 4, 6 }, 2,
                               (int[]){ 0, 1 }, 2, &t, &n, &err);
    ck_assert_int_eq (rc, -1);
    ck_assert_msg (strstr (err.text, "none of the placed cores 4,6 may be used here "
                                     "(this process may use CPUs 0-1)"), "%s", err.text);
    ck_assert_msg (strstr (err.text, "on berthd's node"), "%s", err.text);
    ck_assert_ptr_eq (t, (int *) 1);     /* untouched on failure */
    ck_assert_int_eq (n, -1);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("affinity");
    TCase *tc = tcase_create ("threads");
    tcase_add_test (tc, test_siblings_join);
    tcase_add_test (tc, test_only_usable_threads);
    tcase_add_test (tc, test_unreadable_topology);
    tcase_add_test (tc, test_none_usable);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
