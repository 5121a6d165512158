/* SPDX-License-Identifier: MIT */
/* berthd's id map: put, get, remove (with probe runs re-seated), growth,
 * visiting every value, and walking them with idmap_next. */
#include <stdint.h>

#include "idmap.h"
#include "testutil.h"

static void count_cb (void *value, void *arg)
{
    (void) value;
    (*(int *) arg)++;
}

START_TEST (test_put_get_remove)
{
    struct idmap *m = idmap_create ();
    ck_assert_ptr_nonnull (m);
    static int vals[5000];
    for (uint64_t i = 1; i <= 5000; i++)
        ck_assert_int_eq (idmap_put (m, i, &vals[i - 1]), 0);
    ck_assert_uint_eq (idmap_count (m), 5000);
    for (uint64_t i = 1; i <= 5000; i++)
        ck_assert_ptr_eq (idmap_get (m, i), &vals[i - 1]);
    ck_assert_ptr_null (idmap_get (m, 5001));
    ck_assert_ptr_null (idmap_get (m, 0));
    /* remove every other one: the rest must still be found */
    for (uint64_t i = 1; i <= 5000; i += 2)
        ck_assert_ptr_eq (idmap_remove (m, i), &vals[i - 1]);
    ck_assert_ptr_null (idmap_remove (m, 1));
    ck_assert_uint_eq (idmap_count (m), 2500);
    for (uint64_t i = 2; i <= 5000; i += 2)
        ck_assert_ptr_eq (idmap_get (m, i), &vals[i - 1]);
    for (uint64_t i = 1; i <= 5000; i += 2)
        ck_assert_ptr_null (idmap_get (m, i));
    int n = 0;
    idmap_each (m, count_cb, &n);
    ck_assert_int_eq (n, 2500);
    /* replacing keeps the count */
    ck_assert_int_eq (idmap_put (m, 2, &vals[0]), 0);
    ck_assert_ptr_eq (idmap_get (m, 2), &vals[0]);
    ck_assert_uint_eq (idmap_count (m), 2500);
    idmap_destroy (m);
}
END_TEST

START_TEST (test_zero_refused)
{
    struct idmap *m = idmap_create ();
    int v;
    ck_assert_int_eq (idmap_put (m, 0, &v), -1);
    ck_assert_uint_eq (idmap_count (m), 0);
    ck_assert_ptr_null (idmap_remove (m, 0));
    idmap_destroy (m);
}
END_TEST

START_TEST (test_churn)
{
    /* ids that collide in the low bits, added and removed in waves */
    struct idmap *m = idmap_create ();
    static int v;
    for (int round = 0; round < 50; round++) {
        for (uint64_t i = 1; i <= 200; i++)
            ck_assert_int_eq (idmap_put (m, i * 1024 + round, &v), 0);
        for (uint64_t i = 1; i <= 200; i += 3)
            ck_assert_ptr_eq (idmap_remove (m, i * 1024 + round), &v);
        for (uint64_t i = 1; i <= 200; i++)
            ck_assert_ptr_eq (idmap_get (m, i * 1024 + round),
                              (i - 1) % 3 == 0 ? NULL : &v);
        for (uint64_t i = 1; i <= 200; i++)
            idmap_remove (m, i * 1024 + round);
        ck_assert_uint_eq (idmap_count (m), 0);
    }
    idmap_destroy (m);
}
END_TEST

START_TEST (test_next_walks_each_once)
{
    /* a walk after removals meets every remaining value exactly once */
    struct idmap *m = idmap_create ();
    static int vals[300];
    int seen[300] = { 0 };
    for (uint64_t i = 1; i <= 300; i++)
        ck_assert_int_eq (idmap_put (m, i * 64, &vals[i - 1]), 0);
    for (uint64_t i = 1; i <= 300; i += 2)
        ck_assert_ptr_eq (idmap_remove (m, i * 64), &vals[i - 1]);
    size_t pos = 0, n = 0;
    for (int *v; (v = idmap_next (m, &pos));) {
        seen[v - vals]++;
        n++;
    }
    ck_assert_uint_eq (n, 150);
    for (int i = 0; i < 300; i++)
        ck_assert_int_eq (seen[i], i % 2 ? 1 : 0);
    ck_assert_ptr_null (idmap_next (m, &pos));     /* stays at the end */
    idmap_destroy (m);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("idmap");
    TCase *tc = tcase_create ("idmap");
    tcase_add_test (tc, test_put_get_remove);
    tcase_add_test (tc, test_zero_refused);
    tcase_add_test (tc, test_churn);
    tcase_add_test (tc, test_next_walks_each_once);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
