/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "error.h"
#include "testutil.h"

START_TEST (errprintf_fills_and_returns_minus_one)
{
    berth_error_t err;
    errno = EAGAIN;
    ck_assert_int_eq (errprintf (&err, "bad %d", 7), -1);
    ck_assert_int_eq (errno, EAGAIN);
    ck_assert_str_eq (err.text, "bad 7");
    ck_assert_str_eq (err.code, "error");
    ck_assert_int_eq (errprintf_code (&err, "render", "x=%s", "y"), -1);
    ck_assert_str_eq (err.code, "render");
    ck_assert_str_eq (err.text, "x=y");
    ck_assert_int_eq (errprintf (NULL, "ignored"), -1);
}
END_TEST

START_TEST (errprefix_prepends_and_truncates)
{
    berth_error_t err;
    errprintf_code (&err, "render", "inner");
    ck_assert_int_eq (errprefix (&err, "%s: ", "outer"), -1);
    ck_assert_str_eq (err.text, "outer: inner");
    ck_assert_str_eq (err.code, "render");
    char big[2000];
    memset (big, 'a', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    errprintf (&err, "%s", big);
    ck_assert_uint_eq (strlen (err.text), sizeof (err.text) - 1);
    errprefix (&err, "p: ");
    ck_assert_uint_eq (strlen (err.text), sizeof (err.text) - 1);
    ck_assert (!strncmp (err.text, "p: aaa", 6));
    error_clear (&err);
    ck_assert_str_eq (err.text, "");
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("error");
    TCase *tc = tcase_create ("error");
    tcase_add_test (tc, errprintf_fills_and_returns_minus_one);
    tcase_add_test (tc, errprefix_prepends_and_truncates);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
