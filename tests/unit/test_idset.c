/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "idset.h"
#include "testutil.h"

static void parse_ok (const char *text, const int *want, int nwant)
{
    int *ids = (int *)1, n = -1;
    berth_error_t err = { 0 };
    ck_assert_msg (idset_parse (text, &ids, &n, &err) == 0, "%s: %s", text, err.text);
    ck_assert_int_eq (n, nwant);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq (ids[i], want[i]);
    free (ids);
}

static void parse_bad (const char *text, const char *needle)
{
    int *ids = NULL, n = -1;
    berth_error_t err = { 0 };
    ck_assert_int_eq (idset_parse (text, &ids, &n, &err), -1);
    ck_assert_ptr_null (ids);
    ck_assert_int_eq (n, -1);
    ck_assert_msg (strstr (err.text, needle), "\"%s\": got \"%s\"", text, err.text);
    ck_assert_str_eq (err.code, "idset");
}

START_TEST (parse_ranges)
{
    parse_ok ("0-3,8,10-11", (int[]){ 0, 1, 2, 3, 8, 10, 11 }, 7);
    parse_ok (" 6 , 2-4 ", (int[]){ 2, 3, 4, 6 }, 4);
    parse_ok ("5,5,4-6", (int[]){ 4, 5, 6 }, 3);
    parse_ok ("7-7", (int[]){ 7 }, 1);
    parse_ok ("1048576", (int[]){ 1048576 }, 1);
}
END_TEST

START_TEST (parse_repeated_large_ranges)
{
    /* many repeats of the widest range stay one set (and bounded memory) */
    size_t len = 0;
    char *text = malloc (8 * 16 + 1);
    text[0] = '\0';
    for (int i = 0; i < 8; i++)
        len += (size_t)sprintf (text + len, "%s0-1048576", i ? "," : "");
    int *ids, n;
    ck_assert_int_eq (idset_parse (text, &ids, &n, NULL), 0);
    ck_assert_int_eq (n, 1048577);
    ck_assert_int_eq (ids[0], 0);
    ck_assert_int_eq (ids[n - 1], 1048576);
    free (ids);
    free (text);
}
END_TEST

START_TEST (parse_empty)
{
    int *ids = (int *)1, n = -1;
    ck_assert_int_eq (idset_parse ("", &ids, &n, NULL), 0);
    ck_assert_int_eq (n, 0);
    ck_assert_ptr_null (ids);
    ck_assert_int_eq (idset_parse ("   ", &ids, &n, NULL), 0);
    ck_assert_int_eq (n, 0);
}
END_TEST

START_TEST (parse_errors)
{
    parse_bad ("4-2", "range \"4-2\" is reversed; write it as 2-4");
    parse_bad ("1,-3", "item \"-3\" is negative");
    parse_bad ("1,x", "item \"x\" is not an id");
    parse_bad ("1,,2", "item \"\" is not an id");
    parse_bad ("1,", "item \"\" is not an id");
    parse_bad ("2-", "item \"2-\" is not an id");
    parse_bad ("1 2", "item \"1 2\"");
    parse_bad ("3--4", "item \"3--4\"");
    parse_bad ("1048577", "ids 0 to 1048576");
    parse_bad ("99999999999999999999", "not an id");
}
END_TEST

START_TEST (format_ranges)
{
    char buf[64];
    ck_assert_int_eq (idset_format ((int[]){ 6, 2, 3, 4 }, 4, buf, sizeof (buf)), 5);
    ck_assert_str_eq (buf, "2-4,6");
    idset_format ((int[]){ 0, 1, 2, 3, 8, 10, 11, 3 }, 8, buf, sizeof (buf));
    ck_assert_str_eq (buf, "0-3,8,10-11");
    idset_format ((int[]){ 9 }, 1, buf, sizeof (buf));
    ck_assert_str_eq (buf, "9");
    ck_assert_int_eq (idset_format (NULL, 0, buf, sizeof (buf)), 0);
    ck_assert_str_eq (buf, "");
    idset_format ((int[]){ 1, 3, 5 }, 3, buf, sizeof (buf));
    ck_assert_str_eq (buf, "1,3,5");
}
END_TEST

START_TEST (format_truncates)
{
    char buf[4];
    ck_assert_int_eq (idset_format ((int[]){ 1, 3, 5, 7 }, 4, buf, sizeof (buf)), 7);
    ck_assert_str_eq (buf, "1,3");
    ck_assert_int_eq (idset_format ((int[]){ 1, 3 }, 2, NULL, 0), 3);
}
END_TEST

START_TEST (hexmask)
{
    char buf[64];
    ck_assert_int_eq (idset_hexmask ((int[]){ 0, 1 }, 2, buf, sizeof (buf)), 3);
    ck_assert_str_eq (buf, "0x3");
    idset_hexmask ((int[]){ 2, 3 }, 2, buf, sizeof (buf));
    ck_assert_str_eq (buf, "0xc");
    idset_hexmask (NULL, 0, buf, sizeof (buf));
    ck_assert_str_eq (buf, "0x0");
    idset_hexmask ((int[]){ 4 }, 1, buf, sizeof (buf));
    ck_assert_str_eq (buf, "0x10");
    idset_hexmask ((int[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, 12, buf, sizeof (buf));
    ck_assert_str_eq (buf, "0xfff");
    /* above 63: no integer type holds it */
    idset_hexmask ((int[]){ 64 }, 1, buf, sizeof (buf));
    ck_assert_str_eq (buf, "0x10000000000000000");
    idset_hexmask ((int[]){ 127, 0 }, 2, buf, sizeof (buf));
    ck_assert_str_eq (buf, "0x80000000000000000000000000000001");
}
END_TEST

START_TEST (hexmask_large)
{
    int len = idset_hexmask ((int[]){ 1000 }, 1, NULL, 0);
    ck_assert_int_eq (len, 2 + 251);
    char *buf = malloc ((size_t)len + 1);
    idset_hexmask ((int[]){ 1000 }, 1, buf, (size_t)len + 1);
    ck_assert_int_eq (buf[2], '1');
    for (int i = 3; i < len; i++)
        ck_assert_int_eq (buf[i], '0');
    free (buf);
    char small[5];
    ck_assert_int_eq (idset_hexmask ((int[]){ 8 }, 1, small, sizeof (small)), 5);
    ck_assert_str_eq (small, "0x10");
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("idset");
    TCase *tc = tcase_create ("all");
    tcase_add_test (tc, parse_ranges);
    tcase_add_test (tc, parse_empty);
    tcase_add_test (tc, parse_repeated_large_ranges);
    tcase_add_test (tc, parse_errors);
    tcase_add_test (tc, format_ranges);
    tcase_add_test (tc, format_truncates);
    tcase_add_test (tc, hexmask);
    tcase_add_test (tc, hexmask_large);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
