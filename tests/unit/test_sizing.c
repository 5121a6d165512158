/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sizing.h"
#include "testutil.h"

static struct sizing_result size (int64_t cells, enum sizing_resource r,
                                  int64_t goal, int64_t max)
{
    struct sizing_request req = { cells, r, goal, max };
    struct sizing_result res = { 0 };
    berth_error_t err;
    ck_assert_msg (sizing_compute (&req, &res, &err) == 0, "%lld cells: %s",
                   (long long) cells, err.text);
    return res;
}

START_TEST (gpus_defaults)
{
    /* The brief's figures: 8000 cells per GPU at the target, 80000 at most. */
    struct sizing_result r = size (100000, SIZING_GPUS, SIZING_GOAL_CELLS_PER_GPU,
                                   SIZING_MAX_CELLS_PER_GPU);
    ck_assert_int_eq (r.resource, SIZING_GPUS);
    ck_assert_int_eq (r.target, 13);
    ck_assert_int_eq (r.min, 2);
    /* Exact multiples do not round up. */
    r = size (80000, SIZING_GPUS, 8000, 80000);
    ck_assert_int_eq (r.target, 10);
    ck_assert_int_eq (r.min, 1);
    r = size (80001, SIZING_GPUS, 8000, 80000);
    ck_assert_int_eq (r.target, 11);
    ck_assert_int_eq (r.min, 2);
    /* A tiny mesh still needs one. */
    r = size (1, SIZING_GPUS, 8000, 80000);
    ck_assert_int_eq (r.target, 1);
    ck_assert_int_eq (r.min, 1);
}
END_TEST

START_TEST (cores)
{
    struct sizing_result r = size (100000, SIZING_CORES, 2500, 25000);
    ck_assert_int_eq (r.resource, SIZING_CORES);
    ck_assert_int_eq (r.target, 40);
    ck_assert_int_eq (r.min, 4);
    /* goal == max: target and minimum agree. */
    r = size (1000, SIZING_CORES, 300, 300);
    ck_assert_int_eq (r.target, 4);
    ck_assert_int_eq (r.min, 4);
}
END_TEST

START_TEST (options_text)
{
    char buf[64];
    struct sizing_result g = { SIZING_GPUS, 13, 2 }, c = { SIZING_CORES, 40, 4 };
    ck_assert_int_eq (sizing_options (&g, buf, sizeof (buf)), 0);
    ck_assert_str_eq (buf, "--gpus 13 --min-gpus 2");
    ck_assert_int_eq (sizing_options (&c, buf, sizeof (buf)), 0);
    ck_assert_str_eq (buf, "-n 40 --min-tasks 4");
    ck_assert_int_eq (sizing_options (&c, buf, 5), -1);
    ck_assert_str_eq (sizing_resource_name (SIZING_GPUS), "gpus");
    ck_assert_str_eq (sizing_resource_name (SIZING_CORES), "cores");
}
END_TEST

static void refused (int64_t cells, enum sizing_resource r, int64_t goal, int64_t max,
                     const char *want)
{
    struct sizing_request req = { cells, r, goal, max };
    struct sizing_result res = { SIZING_CORES, 77, 77 };
    berth_error_t err;
    ck_assert_int_eq (sizing_compute (&req, &res, &err), -1);
    ck_assert_msg (strstr (err.text, want), "'%s' lacks '%s'", err.text, want);
    ck_assert_int_eq (res.target, 77);     /* nothing written */
    ck_assert_int_eq (res.min, 77);
}

START_TEST (errors)
{
    refused (0, SIZING_GPUS, 8000, 80000, "cell count must be from 1 to");
    refused (-5, SIZING_GPUS, 8000, 80000, "got -5");
    refused (SIZING_MAX_CELLS + 1, SIZING_GPUS, 8000, 80000, "cell count must be");
    refused (100, SIZING_GPUS, 0, 80000, "goal_cells_per_gpu must be a positive");
    refused (100, SIZING_CORES, 10, -1, "max_cells_per_core must be a positive");
    refused (100, SIZING_CORES, 500, 100,
             "goal_cells_per_core (500) is above max_cells_per_core (100)");
    refused (SIZING_MAX_CELLS, SIZING_CORES, 1, 1,
             "over the limit of 1048576 a request may ask for; raise goal_cells_per_core");
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("sizing");
    TCase *tc = tcase_create ("sizing");
    tcase_add_test (tc, gpus_defaults);
    tcase_add_test (tc, cores);
    tcase_add_test (tc, options_text);
    tcase_add_test (tc, errors);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
