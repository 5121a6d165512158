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

int main (void)
{
    Suite *s = suite_create ("wallclock");
    TCase *tc = tcase_create ("wallclock");
    tcase_add_test (tc, parse_valid);
    tcase_add_test (tc, parse_invalid);
    tcase_add_test (tc, compare);
    tcase_add_test (tc, format);
    tcase_add_test (tc, cap);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
