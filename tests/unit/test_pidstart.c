/* SPDX-License-Identifier: MIT */
/* A process's start time from /proc/PID/stat (pidstart.h): the command name
 * may hold spaces and parentheses; a text that is not a stat line is
 * refused; this process's own entry reads and stays the same. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "pidstart.h"
#include "testutil.h"

START_TEST (parse)
{
    uint64_t v = 0;
    const char *plain = "1234 (sleep) S 1 1234 1234 0 -1 4194304 100 0 0 0 0 0 0 0 "
                        "20 0 1 0 987654321 5558272 200 18446744073709551615\n";
    ck_assert_int_eq (pidstart_parse (plain, strlen (plain), &v), 0);
    ck_assert_uint_eq (v, 987654321);
    /* ") S 1" in the name itself: the last ')' ends it */
    const char *odd = "77 (a) S 1 (b) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42 99\n";
    ck_assert_int_eq (pidstart_parse (odd, strlen (odd), &v), 0);
    ck_assert_uint_eq (v, 42);
    const char *bad[] = { "", "no parenthesis at all", "1 (x) S 1 2 3",
                          "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -5" };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        ck_assert_int_eq (pidstart_parse (bad[i], strlen (bad[i]), &v), -1);
}
END_TEST

START_TEST (read_self)
{
    uint64_t a = 0, b = 0;
    ck_assert_int_eq (pidstart_read (getpid (), &a), 0);
    ck_assert_int_eq (pidstart_read (getpid (), &b), 0);
    ck_assert_uint_eq (a, b);
    ck_assert_uint_gt (a, 0);
    ck_assert_int_eq (pidstart_read (0x3fffffff, &a), -1);
    ck_assert_int_eq (errno, ENOENT);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("pidstart");
    TCase *tc = tcase_create ("pidstart");
    tcase_add_test (tc, parse);
    tcase_add_test (tc, read_self);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
