/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "socket_path.h"
#include "testutil.h"

START_TEST (runtime_dir_first_then_tmp)
{
    char buf[108];
    berth_error_t err;
    ck_assert_int_eq (socket_default_path ("/run/user/7", 7, "123", buf, sizeof (buf),
                                           &err), 0);
    ck_assert_str_eq (buf, "/run/user/7/berth/123.sock");
    /* a relative runtime dir is not trusted: the per-uid /tmp place */
    ck_assert_int_eq (socket_default_path ("run", 7, "123", buf, sizeof (buf), &err), 0);
    ck_assert_str_eq (buf, "/tmp/berth-7/123.sock");
    ck_assert_int_eq (socket_default_path (NULL, 0, NULL, buf, sizeof (buf), &err), 0);
    ck_assert_str_eq (buf, "/tmp/berth-0/local.sock");
}
END_TEST

START_TEST (a_job_id_with_a_slash_is_not_a_path)
{
    char buf[108];
    berth_error_t err;
    ck_assert_int_eq (socket_default_path (NULL, 5, "../x", buf, sizeof (buf), &err), 0);
    ck_assert_str_eq (buf, "/tmp/berth-5/local.sock");
    ck_assert_int_eq (socket_default_path (NULL, 5, "", buf, sizeof (buf), &err), 0);
    ck_assert_str_eq (buf, "/tmp/berth-5/local.sock");
}
END_TEST

START_TEST (lock_pid_first_line)
{
    const char *ok = "4242\n/run/state\n";
    ck_assert_int_eq (lock_text_pid (ok, strlen (ok)), 4242);
    ck_assert_int_eq (lock_text_pid ("17", 2), 17);
    /* not a pid: none (an empty lock is one being written) */
    const char *bad[] = { "", "\n", "-3\n", "0\n", "12x\n", "abc", "99999999999\n" };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        ck_assert_int_eq (lock_text_pid (bad[i], strlen (bad[i])), 0);
}
END_TEST

START_TEST (too_long_is_refused_naming_the_limit)
{
    char dir[200], buf[512];
    berth_error_t err;
    memset (dir, 'd', sizeof (dir) - 1);
    dir[0] = '/';
    dir[sizeof (dir) - 1] = '\0';
    ck_assert_int_eq (socket_default_path (dir, 1, "9", buf, sizeof (buf), &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "socket path for job 9 is too long (at most 107"));
    ck_assert_ptr_nonnull (strstr (err.text, "give --socket"));
    /* the buffer is the limit too */
    ck_assert_int_eq (socket_default_path ("/r", 1, "9", buf, 8, &err), -1);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("socket_path");
    TCase *tc = tcase_create ("socket_path");
    tcase_add_test (tc, runtime_dir_first_then_tmp);
    tcase_add_test (tc, a_job_id_with_a_slash_is_not_a_path);
    tcase_add_test (tc, too_long_is_refused_naming_the_limit);
    tcase_add_test (tc, lock_pid_first_line);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
