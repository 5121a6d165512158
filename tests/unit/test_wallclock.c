#include <math.h>
#include <string.h>

#include "testutil.h"
#include "wallclock.h"

static long long secs (const char *text)
{
    long long s = -1;
    ck_assert_msg (wallclock_parse (text, &s) == 0, "'%s' should parse", text);
    return s;
}

START_TEST (parse_valid)
{
    ck_assert_int_eq (secs ("00:00:00"), 0);
    ck_assert_int_eq (secs ("02:00:00"), 7200);
    ck_assert_int_eq (secs ("00:30:00"), 1800);
    ck_assert_int_eq (secs ("1:02:03"), 3723);
    /* Hours may exceed 24. */
    ck_assert_int_eq (secs ("168:00:00"), 168 * 3600);
    ck_assert_int_eq (secs ("48:00:01"), 48 * 3600 + 1);
    /* Three integer fields is all that is asked. */
    ck_assert_int_eq (secs ("00:90:00"), 5400);
}
END_TEST

START_TEST (parse_invalid)
{
    static const char *bad[] = {
        "", "02:00", "2", "1-00:00:00", "01:00:00:00", "aa:00:00", "01::00",
        ":00:00", "01:00:", " 01:00:00", "01:00:00 ", "-1:00:00", "+1:00:00",
        "1.5:00:00", "1234567890:00:00",
    };
    long long s = 42;
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        ck_assert_msg (wallclock_parse (bad[i], &s) == -1, "'%s' parsed", bad[i]);
    ck_assert_int_eq (wallclock_parse (NULL, &s), -1);
    ck_assert_int_eq (s, 42);
}
END_TEST

START_TEST (compare)
{
    int cmp = 99;
    ck_assert_int_eq (wallclock_compare ("01:00:00", "02:00:00", &cmp), 0);
    ck_assert_int_lt (cmp, 0);
    ck_assert_int_eq (wallclock_compare ("24:00:00", "23:59:59", &cmp), 0);
    ck_assert_int_gt (cmp, 0);
    ck_assert_int_eq (wallclock_compare ("1:00:00", "00:60:00", &cmp), 0);
    ck_assert_int_eq (cmp, 0);
    cmp = 99;
    ck_assert_int_eq (wallclock_compare ("1-00:00:00", "02:00:00", &cmp), -1);
    ck_assert_int_eq (wallclock_compare ("02:00:00", "2h", &cmp), -1);
    ck_assert_int_eq (cmp, 99);
}
END_TEST

START_TEST (format)
{
    char buf[32];
    ck_assert_str_eq (wallclock_format (0, buf, sizeof (buf)), "00:00:00");
    ck_assert_str_eq (wallclock_format (3723, buf, sizeof (buf)), "01:02:03");
    ck_assert_str_eq (wallclock_format (168 * 3600, buf, sizeof (buf)),
                      "168:00:00");
    ck_assert_str_eq (wallclock_format (-5, buf, sizeof (buf)), "00:00:00");
}
END_TEST

START_TEST (cap)
{
    /* Capped only when both parse and desired is longer. */
    ck_assert_str_eq (cap_wall_time ("03:00:00", "02:00:00"), "02:00:00");
    ck_assert_str_eq (cap_wall_time ("01:00:00", "02:00:00"), "01:00:00");
    ck_assert_str_eq (cap_wall_time ("02:00:00", "02:00:00"), "02:00:00");
    ck_assert_str_eq (cap_wall_time ("200:00:00", "168:00:00"), "168:00:00");
    /* Left alone: not three fields, or one side empty. */
    ck_assert_str_eq (cap_wall_time ("1-00:00:00", "02:00:00"), "1-00:00:00");
    ck_assert_str_eq (cap_wall_time ("03:00", "02:00:00"), "03:00");
    ck_assert_str_eq (cap_wall_time ("03:00:00", "1-00:00:00"), "03:00:00");
    ck_assert_str_eq (cap_wall_time ("03:00:00", ""), "03:00:00");
    ck_assert_str_eq (cap_wall_time ("03:00:00", NULL), "03:00:00");
    ck_assert_str_eq (cap_wall_time ("", "02:00:00"), "");
    ck_assert_ptr_null (cap_wall_time (NULL, "02:00:00"));
}
END_TEST

START_TEST (format_brief)
{
    char buf[32];
    wallclock_format_brief (4 * 3600 + 48 * 60 + 59, buf, sizeof (buf));
    ck_assert_str_eq (buf, "4h48m");
    wallclock_format_brief (725, buf, sizeof (buf));
    ck_assert_str_eq (buf, "12m05s");
    wallclock_format_brief (2 * 86400 + 3 * 3600, buf, sizeof (buf));
    ck_assert_str_eq (buf, "2d3h");
    wallclock_format_brief (-3, buf, sizeof (buf));
    ck_assert_str_eq (buf, "0s");
}
END_TEST

START_TEST (format_brief_cases)
{
    char b[32];
    static const struct { double s; const char *want; } cases[] = {
        { 0, "0s" }, { 59.9, "59s" }, { 60, "1m00s" }, { 190.2, "3m10s" }, { 3600, "1h00m" },
        { 4325, "1h12m" }, { 86400, "1d0h" }, { 200000, "2d7h" }, { -5, "0s" },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        wallclock_format_brief (cases[i].s, b, sizeof (b));
        ck_assert_str_eq (b, cases[i].want);
    }
    wallclock_format_brief (NAN, b, sizeof (b));
    ck_assert_str_eq (b, "0s");
    wallclock_format_brief (INFINITY, b, sizeof (b));
    ck_assert_str_eq (b, "0s");
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("wallclock");
    TCase *tc = tcase_create ("wallclock");
    tcase_add_test (tc, parse_valid);
    tcase_add_test (tc, parse_invalid);
    tcase_add_test (tc, compare);
    tcase_add_test (tc, format);
    tcase_add_test (tc, cap);
    tcase_add_test (tc, format_brief);
    tcase_add_test (tc, format_brief_cases);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
