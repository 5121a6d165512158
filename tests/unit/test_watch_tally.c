/* SPDX-License-Identifier: MIT */
/* The figures of a live watch: counts per kind and the grant rate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "watch_tally.h"
#include "testutil.h"

START_TEST (test_counts)
{
    struct watch_tally t;
    watch_tally_init (&t, 1000.0);
    watch_tally_add (&t, "granted", 1000.5);
    watch_tally_add (&t, "granted", 1001.0);
    watch_tally_add (&t, "waited", 1001.0);
    watch_tally_add (&t, "released", 1002.0);
    watch_tally_add (&t, "refused", 1002.0);
    watch_tally_add (&t, "something_new", 1002.0);
    watch_tally_add (&t, NULL, 1002.0);
    ck_assert_int_eq (t.granted, 2);
    ck_assert_int_eq (t.waited, 1);
    ck_assert_int_eq (t.released, 1);
    ck_assert_int_eq (t.refused, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    watch_tally_print (f, &t, 1004.0);
    fclose (f);
    ck_assert_msg (strstr (buf, ": 2 granted, 1 waited, 1 released, 1 refused \u00b7 0.5 grants/s (last 4 s)"), "%s", buf);
    free (buf);
}
END_TEST

START_TEST (test_rate_window)
{
    struct watch_tally t;
    watch_tally_init (&t, 0.0);
    ck_assert (watch_tally_rate (&t, 0.2) == 0.0);
    watch_tally_add (&t, "granted", 0.1);
    ck_assert (watch_tally_rate (&t, 0.2) == 1.0);     /* at least 1 s */
    for (int i = 0; i < 100; i++)
        watch_tally_add (&t, "granted", 50.0 + i * 0.1);   /* 10/s from 50 s to 60 s */
    ck_assert (fabs (watch_tally_rate (&t, 60.0) - 10.0) < 1e-9);
    ck_assert (fabs (watch_tally_rate (&t, 65.0) - 5.0) < 1e-9);   /* half gone by */
    ck_assert (watch_tally_rate (&t, 80.0) == 0.0);            /* quiet again */
}
END_TEST

START_TEST (test_ring)
{
    struct watch_tally t;
    watch_tally_init (&t, 0.0);
    for (int i = 0; i < WATCH_RATE_KEEP + 100; i++)
        watch_tally_add (&t, "granted", 100.0);
    ck_assert_int_eq (t.n, WATCH_RATE_KEEP);
    ck_assert_int_eq (t.granted, WATCH_RATE_KEEP + 100);
    ck_assert (watch_tally_rate (&t, 100.0) == WATCH_RATE_KEEP / WATCH_RATE_WINDOW);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("watch_tally");
    TCase *tc = tcase_create ("watch_tally");
    tcase_add_test (tc, test_counts);
    tcase_add_test (tc, test_rate_window);
    tcase_add_test (tc, test_ring);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
