/* SPDX-License-Identifier: MIT */
/* The lease book: records added, found by id and by both name forms (and
 * malformed names refused), removed, counted and walked; holders bound,
 * counted and their leases taken one by one; a walk that removes as it
 * goes; removing a record unbinds it; the oldest records in order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lease_book.h"
#include "testutil.h"

static struct lease *rec (uint64_t id)
{
    struct ledger_lease ll = { .id = id };
    ll.shape.local = id % 2 == 0;
    struct lease *ls = lease_new (&ll);
    ck_assert_ptr_nonnull (ls);
    return ls;
}

static struct lease_book *book_of (uint64_t n)
{
    struct lease_book *b = lease_book_create ();
    berth_error_t err;
    ck_assert_ptr_nonnull (b);
    for (uint64_t i = 1; i <= n; i++)
        ck_assert_int_eq (lease_book_add (b, rec (i), &err), 0);
    return b;
}

START_TEST (test_new_record)
{
    struct lease *ls = rec (12);
    ck_assert_str_eq (ls->name, "L12");
    ck_assert_uint_eq (ls->id, 12);
    ck_assert (ls->local);
    ck_assert (ls->expires < 0);
    ck_assert (ls->reclaim_by < 0);
    ck_assert_ptr_null (ls->request);
    lease_free (ls);
    lease_free (NULL);
}
END_TEST

START_TEST (test_add_find_lookup)
{
    struct lease_book *b = book_of (20);
    berth_error_t err;
    ck_assert_uint_eq (lease_book_count (b), 20);
    struct lease *l12 = lease_book_find (b, 12);
    ck_assert_ptr_nonnull (l12);
    ck_assert_uint_eq (l12->id, 12);
    ck_assert_ptr_eq (lease_book_lookup (b, "L12"), l12);
    ck_assert_ptr_eq (lease_book_lookup (b, "12"), l12);
    ck_assert_ptr_null (lease_book_find (b, 21));
    ck_assert_ptr_null (lease_book_find (b, 0));
    ck_assert_ptr_null (lease_book_lookup (b, "L21"));
    static const char *const bad[] = {
        "", "L", "L-1", "-1", "+12", "L+12", "12x", "L12 ", "LL12", "l12",
        "99999999999999999999", "L99999999999999999999", "0x0c",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        ck_assert_msg (lease_book_lookup (b, bad[i]) == NULL,
                       "'%s' names a lease", bad[i]);
    /* an id taken already is refused, and the record stays the caller's */
    struct lease *dup = rec (12);
    ck_assert_int_eq (lease_book_add (b, dup, &err), -1);
    ck_assert_ptr_eq (lease_book_find (b, 12), l12);
    ck_assert_uint_eq (lease_book_count (b), 20);
    lease_free (dup);
    lease_book_destroy (b);
}
END_TEST

START_TEST (test_remove)
{
    struct lease_book *b = book_of (10);
    struct lease *ls = lease_book_remove (b, 4);
    ck_assert_ptr_nonnull (ls);
    ck_assert_uint_eq (ls->id, 4);
    ck_assert_uint_eq (lease_book_count (b), 9);
    ck_assert_ptr_null (lease_book_find (b, 4));
    ck_assert_ptr_null (lease_book_lookup (b, "L4"));
    ck_assert_ptr_null (lease_book_remove (b, 4));
    ck_assert_ptr_null (lease_book_remove (b, 77));
    ck_assert_uint_eq (lease_book_count (b), 9);
    lease_free (ls);
    for (uint64_t i = 1; i <= 10; i++)
        if (i != 4)
            ck_assert_ptr_nonnull (lease_book_find (b, i));
    lease_book_destroy (b);
}
END_TEST

START_TEST (test_walk)
{
    struct lease_book *b = book_of (50);
    int seen[51] = { 0 };
    size_t pos = 0, n = 0;
    for (struct lease *ls; (ls = lease_book_next (b, &pos)); n++)
        seen[ls->id]++;
    ck_assert_uint_eq (n, 50);
    for (int i = 1; i <= 50; i++)
        ck_assert_int_eq (seen[i], 1);
    size_t nids;
    uint64_t *ids = lease_book_ids (b, &nids);
    ck_assert_ptr_nonnull (ids);
    ck_assert_uint_eq (nids, 50);
    for (size_t i = 0; i < nids; i++)
        ck_assert_uint_eq (ids[i], i + 1);    /* ascending */
    free (ids);
    lease_book_destroy (b);
}
END_TEST

/* Ending leases while walking: each step may remove others too, and every
 * lease still held when its turn comes is met exactly once. */
START_TEST (test_walk_while_removing)
{
    struct lease_book *b = book_of (300);
    int met[301] = { 0 };
    size_t n;
    uint64_t *ids = lease_book_ids (b, &n);
    ck_assert_ptr_nonnull (ids);
    for (size_t i = 0; i < n; i++) {
        struct lease *ls = lease_book_find (b, ids[i]);
        if (!ls)
            continue;
        met[ls->id]++;
        uint64_t id = ls->id;
        lease_free (lease_book_remove (b, id));
        if (id % 3 == 0)          /* and the next one with it */
            lease_free (lease_book_remove (b, id + 1));
    }
    free (ids);
    ck_assert_uint_eq (lease_book_count (b), 0);
    for (int i = 1; i <= 300; i++)
        ck_assert_int_eq (met[i], i % 3 == 1 && i > 1 ? 0 : 1);
    ids = lease_book_ids (b, &n);
    ck_assert_ptr_nonnull (ids);
    ck_assert_uint_eq (n, 0);
    free (ids);
    lease_book_destroy (b);
}
END_TEST

START_TEST (test_holders)
{
    struct lease_book *b = book_of (10);
    berth_error_t err;
    int conn_a, conn_b;           /* two holders: only their addresses */
    void *a = &conn_a, *h = &conn_b;
    ck_assert_uint_eq (lease_book_held (b, a), 0);
    ck_assert_uint_eq (lease_book_held (b, NULL), 0);
    for (uint64_t i = 1; i <= 6; i++)
        ck_assert_int_eq (lease_book_bind (b, i, i <= 4 ? a : h, &err), 0);
    ck_assert_uint_eq (lease_book_held (b, a), 4);
    ck_assert_uint_eq (lease_book_held (b, h), 2);
    ck_assert_ptr_eq (lease_book_holder (b, 3), a);
    ck_assert_ptr_eq (lease_book_holder (b, 5), h);
    ck_assert_ptr_null (lease_book_holder (b, 7));
    ck_assert_ptr_null (lease_book_holder (b, 99));
    /* binding again to the same holder changes nothing */
    ck_assert_int_eq (lease_book_bind (b, 3, a, &err), 0);
    ck_assert_uint_eq (lease_book_held (b, a), 4);
    /* moving one over */
    ck_assert_int_eq (lease_book_bind (b, 4, h, &err), 0);
    ck_assert_uint_eq (lease_book_held (b, a), 3);
    ck_assert_uint_eq (lease_book_held (b, h), 3);
    ck_assert_ptr_eq (lease_book_holder (b, 4), h);
    /* unbinding */
    ck_assert_int_eq (lease_book_bind (b, 4, NULL, &err), 0);
    ck_assert_ptr_null (lease_book_holder (b, 4));
    ck_assert_uint_eq (lease_book_held (b, h), 2);
    ck_assert_int_eq (lease_book_bind (b, 4, NULL, &err), 0);
    /* a lease the book does not hold cannot be bound */
    ck_assert_int_eq (lease_book_bind (b, 42, a, &err), -1);
    ck_assert_uint_eq (lease_book_held (b, a), 3);
    lease_book_destroy (b);       /* frees bound records and holdings */
}
END_TEST

/* "Its connection closed: end them all": taken one by one, newest bound
 * first, each unbound as it is taken and still in the book. */
START_TEST (test_take)
{
    struct lease_book *b = book_of (8);
    berth_error_t err;
    int conn_a, conn_b;
    void *a = &conn_a, *h = &conn_b;
    static const uint64_t order[] = { 2, 7, 5, 1 };
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq (lease_book_bind (b, order[i], a, &err), 0);
    ck_assert_int_eq (lease_book_bind (b, 3, h, &err), 0);
    ck_assert_ptr_null (lease_book_take (b, NULL));
    for (size_t i = 4; i-- > 0;) {
        struct lease *ls = lease_book_take (b, a);
        ck_assert_ptr_nonnull (ls);
        ck_assert_uint_eq (ls->id, order[i]);
        ck_assert_ptr_null (lease_book_holder (b, ls->id));
        ck_assert_ptr_eq (lease_book_find (b, ls->id), ls);
        ck_assert_uint_eq (lease_book_held (b, a), i);
        lease_free (lease_book_remove (b, ls->id));
    }
    ck_assert_ptr_null (lease_book_take (b, a));
    ck_assert_uint_eq (lease_book_held (b, h), 1);
    ck_assert_uint_eq (lease_book_count (b), 4);
    /* a holder that held before can hold again */
    ck_assert_int_eq (lease_book_bind (b, 8, a, &err), 0);
    ck_assert_uint_eq (lease_book_held (b, a), 1);
    lease_book_destroy (b);
}
END_TEST

START_TEST (test_oldest)
{
    struct lease_book *b = book_of (10);
    berth_error_t err;
    const struct lease *v[16];
    ck_assert_uint_eq (lease_book_oldest (b, v, 3), 3);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq (v[i]->id, (uint64_t) i + 1);
    /* removed at the front, in the middle and at the back */
    lease_free (lease_book_remove (b, 1));
    lease_free (lease_book_remove (b, 5));
    lease_free (lease_book_remove (b, 10));
    ck_assert_int_eq (lease_book_add (b, rec (11), &err), 0);
    uint64_t want[] = { 2, 3, 4, 6, 7, 8, 9, 11 };
    ck_assert_uint_eq (lease_book_oldest (b, v, 16), 8);
    for (int i = 0; i < 8; i++)
        ck_assert_uint_eq (v[i]->id, want[i]);
    ck_assert_uint_eq (lease_book_oldest (b, v, 0), 0);
    /* a refused add leaves the order as it was */
    struct lease *dup = rec (4);
    ck_assert_int_eq (lease_book_add (b, dup, &err), -1);
    lease_free (dup);
    ck_assert_uint_eq (lease_book_oldest (b, v, 16), 8);
    ck_assert_uint_eq (v[7]->id, 11);
    while (lease_book_count (b)) {
        lease_book_oldest (b, v, 1);
        lease_free (lease_book_remove (b, v[0]->id));
    }
    ck_assert_uint_eq (lease_book_oldest (b, v, 16), 0);
    ck_assert_int_eq (lease_book_add (b, rec (12), &err), 0);
    ck_assert_uint_eq (lease_book_oldest (b, v, 16), 1);
    ck_assert_uint_eq (v[0]->id, 12);
    lease_book_destroy (b);
}
END_TEST

START_TEST (test_remove_unbinds)
{
    struct lease_book *b = book_of (5);
    berth_error_t err;
    int conn_a;
    void *a = &conn_a;
    for (uint64_t i = 1; i <= 3; i++)
        ck_assert_int_eq (lease_book_bind (b, i, a, &err), 0);
    /* from the middle, the head and the tail of the holder's list */
    static const uint64_t gone[] = { 2, 3, 1 };
    for (size_t i = 0; i < 3; i++) {
        struct lease *ls = lease_book_remove (b, gone[i]);
        ck_assert_ptr_nonnull (ls);
        lease_free (ls);
        ck_assert_uint_eq (lease_book_held (b, a), 2 - i);
        ck_assert_ptr_null (lease_book_holder (b, gone[i]));
    }
    ck_assert_ptr_null (lease_book_take (b, a));
    /* the id comes back unbound when added again */
    ck_assert_int_eq (lease_book_add (b, rec (2), &err), 0);
    ck_assert_ptr_null (lease_book_holder (b, 2));
    ck_assert_uint_eq (lease_book_held (b, a), 0);
    lease_book_destroy (b);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("lease_book");
    TCase *tc = tcase_create ("lease_book");
    tcase_add_test (tc, test_new_record);
    tcase_add_test (tc, test_add_find_lookup);
    tcase_add_test (tc, test_remove);
    tcase_add_test (tc, test_walk);
    tcase_add_test (tc, test_walk_while_removing);
    tcase_add_test (tc, test_holders);
    tcase_add_test (tc, test_take);
    tcase_add_test (tc, test_remove_unbinds);
    tcase_add_test (tc, test_oldest);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
