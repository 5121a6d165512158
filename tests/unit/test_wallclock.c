/* SPDX-License-Identifier: MIT */
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

static long long rd (const char *text, enum wallclock_dialect d)
{
    long long s = -1;
    ck_assert_msg (wallclock_read (text, d, &s) == 0, "'%s' should read",
                   text);
    return s;
}

/* sbatch --time's forms and qsub walltime's (issue 16: 1-00:00:00 was
 * refused as "wants HH:MM:SS"). */
START_TEST (read_forms)
{
    const enum wallclock_dialect S = WALLCLOCK_SLURM, P = WALLCLOCK_PBS;
    /* MM (Slurm) and SECONDS (PBS): the one form they read differently */
    ck_assert_int_eq (rd ("90", S), 90 * 60);
    ck_assert_int_eq (rd ("90", P), 90);
    ck_assert_int_eq (rd ("0", S), 0);
    /* MM:SS, HH:MM:SS: the same to both */
    ck_assert_int_eq (rd ("30:15", S), 30 * 60 + 15);
    ck_assert_int_eq (rd ("30:15", P), 30 * 60 + 15);
    ck_assert_int_eq (rd ("100:00:00", S), 100 * 3600);
    ck_assert_int_eq (rd ("100:00:00", P), 100 * 3600);
    ck_assert_int_eq (rd ("1:00:00", P), 3600);
    /* D-HH, D-HH:MM, D-HH:MM:SS */
    ck_assert_int_eq (rd ("1-00:00:00", S), 86400);
    ck_assert_int_eq (rd ("1-00:00:00", P), 86400);
    ck_assert_int_eq (rd ("2-12", S), 2 * 86400 + 12 * 3600);
    ck_assert_int_eq (rd ("0-01:30", S), 5400);
    ck_assert_int_eq (rd ("7-00:00:01", S), 7 * 86400 + 1);
    /* fields may run past 24 and 60, as the schedulers let them */
    ck_assert_int_eq (rd ("00:90:00", S), 5400);
}
END_TEST

START_TEST (read_refused)
{
    static const char *bad[] = {
        "", "4 hours", "2h", "1.5", " 01:00:00", "01:00:00 ", "-1", "+1",
        "1-", "-01:00", "1-2-3", "1-00:00:00:00", "01:00:00:00", "::",
        "01::00", ":30", "30:", "a-01:00", "1-aa", "1234567890",
        "1-1234567890",
    };
    long long s = 42;
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        ck_assert_msg (wallclock_read (bad[i], WALLCLOCK_SLURM, &s) == -1,
                       "'%s' read", bad[i]);
        ck_assert_msg (wallclock_read (bad[i], WALLCLOCK_PBS, &s) == -1,
                       "'%s' read", bad[i]);
    }
    ck_assert_int_eq (wallclock_read (NULL, WALLCLOCK_SLURM, &s), -1);
    ck_assert_int_eq (s, 42);
    ck_assert_int_eq (wallclock_dialect_of ("pbs"), WALLCLOCK_PBS);
    ck_assert_int_eq (wallclock_dialect_of ("slurm"), WALLCLOCK_SLURM);
    ck_assert_int_eq (wallclock_dialect_of (NULL), WALLCLOCK_SLURM);
    /* the message names every form */
    ck_assert (strstr (WALLCLOCK_FORMS, "D-HH:MM:SS"));
    ck_assert (strstr (WALLCLOCK_FORMS, "SECONDS"));
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
    tcase_add_test (tc, format);
    tcase_add_test (tc, read_forms);
    tcase_add_test (tc, read_refused);
    tcase_add_test (tc, format_brief);
    tcase_add_test (tc, format_brief_cases);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
