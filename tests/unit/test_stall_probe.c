/* SPDX-License-Identifier: MIT */
/* The benchmarks' speed witness (tests/bench/stall_probe.c): its reading of
 * a made-up log, without starting any witness. bench_socket's claim that
 * slow operations ran on slowed CPUs rests on this arithmetic. */
#include <stdlib.h>

#include "stall_probe.h"
#include "testutil.h"

/* A probe over `ticks` made-up wakes, two CPUs interleaved out of order,
 * one per CPU every millisecond from t = 100 s; the loop takes 5 us, except
 * from 100.5 s to 100.55 s where it takes 50 us. */
static struct stall_probe made_up (long ticks)
{
    struct stall_probe p = { 0 };
    p.cap = ticks;
    p.count = malloc (sizeof (long));
    p.log = malloc (sizeof (struct probe_tick) * (size_t) (ticks ? ticks : 1));
    ck_assert (p.count && p.log);
    *p.count = ticks;
    for (long i = 0; i < ticks; i++) {
        long ms = i / 2;
        double t = 100 + ms * 1e-3 + (i % 2) * 2e-4;
        bool slow = t >= 100.5 && t < 100.55;
        /* written back to front, so that stopping has to sort */
        p.log[ticks - 1 - i] = (struct probe_tick){ .woke = t, .late = 1e-5f,
                                                    .loop = slow ? 50e-6f : 5e-6f };
    }
    stall_probe_stop (&p); /* no witnesses: sorts and finds full speed */
    return p;
}

static void made_up_free (struct stall_probe *p)
{
    free (p->count);
    free (p->log);
}

START_TEST (full_speed_and_slowdown)
{
    struct stall_probe p = made_up (2000);
    ck_assert_double_eq_tol (p.usual, 5e-6, 1e-9);
    for (long i = 1; i < 2000; i++)
        ck_assert (p.log[i - 1].woke <= p.log[i].woke);
    /* inside the slow stretch, outside it, and half in */
    ck_assert_double_eq_tol (stall_probe_slowdown (&p, 100.51, 100.54), 10, 1e-3);
    ck_assert_double_eq_tol (stall_probe_slowdown (&p, 100.1, 100.2), 1, 1e-3);
    double half = stall_probe_slowdown (&p, 100.5 - 0.025, 100.5 + 0.025 - 1e-6);
    ck_assert_double_gt (half, 4.5);
    ck_assert_double_lt (half, 6.0);
    /* an interval between two ticks takes the next one */
    ck_assert_double_eq_tol (stall_probe_slowdown (&p, 100.5101, 100.5102), 10, 1e-3);
    ck_assert_double_eq_tol (stall_probe_slowdown (&p, 100.1001, 100.1002), 1, 1e-3);
    /* past the last tick: the last one */
    ck_assert_double_eq_tol (stall_probe_slowdown (&p, 200, 201), 1, 1e-3);
    made_up_free (&p);
}
END_TEST

START_TEST (windows_base_rate)
{
    struct stall_probe p = made_up (2000);
    long windows, slowed;
    double worst;
    stall_probe_summary (&p, 5, 0.005, &windows, &slowed, &worst);
    /* 0.9992 s of ticks in 5 ms windows; the 50 ms slow stretch is 10 */
    ck_assert_int_eq (windows, 199);
    ck_assert_int_eq (slowed, 10);
    ck_assert_double_eq_tol (worst, 10, 1e-3);
    stall_probe_summary (&p, 11, 0.005, &windows, &slowed, &worst);
    ck_assert_int_eq (slowed, 0);
    made_up_free (&p);
}
END_TEST

START_TEST (empty_log)
{
    struct stall_probe p = made_up (0);
    ck_assert_double_eq (stall_probe_slowdown (&p, 1, 2), 0);
    long windows = -1, slowed = -1;
    double worst = -1;
    stall_probe_summary (&p, 5, 0.005, &windows, &slowed, &worst);
    ck_assert_int_eq (windows, 0);
    ck_assert_int_eq (slowed, 0);
    ck_assert_double_eq (worst, 0);
    made_up_free (&p);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("stall_probe");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, full_speed_and_slowdown);
    tcase_add_test (tc, windows_base_rate);
    tcase_add_test (tc, empty_log);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
