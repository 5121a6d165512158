/* SPDX-License-Identifier: MIT */
/* The journal's mark (journal_mark.h): what it writes reads back; a mark
 * torn by a kill mid-store (the new one's first bytes over the last one's)
 * or of another format reads as none; a mapped mark set by one handle is
 * what the next one finds, as after a kill -9. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal_mark.h"
#include "testutil.h"

START_TEST (round_trip)
{
    struct journal_mark_facts f = { 1234567, 98765, 42 }, g = { 0 };
    char buf[4096];
    size_t n = journal_mark_format (&f, buf, sizeof (buf));
    ck_assert_uint_gt (n, 0);
    ck_assert_int_eq (journal_mark_parse (buf, n, &g), 0);
    ck_assert_uint_eq (g.ino, f.ino);
    ck_assert_int_eq (g.size, f.size);
    ck_assert_uint_eq (g.next_id, f.next_id);
}
END_TEST

START_TEST (torn_and_foreign)
{
    struct journal_mark_facts old = { 77, 1000, 5 }, new = { 77, 2000, 9 }, g;
    char a[256], b[256], mixed[256];
    size_t n = journal_mark_format (&old, a, sizeof (a));
    ck_assert_uint_eq (journal_mark_format (&new, b, sizeof (b)), n);
    /* every cut of the new store over the old: none reads as a mark but the
     * old one (nothing changed yet) or the new one (all that differs
     * written) */
    for (size_t cut = 0; cut < n; cut++) {
        memcpy (mixed, b, cut);
        memcpy (mixed + cut, a + cut, n - cut);
        int rc = journal_mark_parse (mixed, n, &g);
        bool whole = memcmp (mixed, b, n) == 0;   /* the rest was the same */
        ck_assert_msg (rc == -1 || (g.size == old.size && g.next_id == old.next_id)
                       || (whole && g.size == new.size && g.next_id == new.next_id),
                       "a store cut at %zu read as size %lld", cut,
                       (long long) g.size);
    }
    const char *bad[] = { "", "berthjm2 and forty bytes more of anything at all",
                          "garbage", "berthjm1" };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        ck_assert_int_eq (journal_mark_parse (bad[i], strlen (bad[i]), &g), -1);
    /* a page of zeros: a mark just made */
    char zeros[64] = { 0 };
    ck_assert_int_eq (journal_mark_parse (zeros, sizeof (zeros), &g), -1);
}
END_TEST

START_TEST (mapped)
{
    char dir[] = "/tmp/test-journal-mark-XXXXXX", path[64];
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (path, sizeof (path), "%s/journal.jsonl.mark", dir);
    berth_error_t err;
    struct journal_mark_facts was, f = { 9, 4096, 17 };
    int found = -1;
    struct journal_mark *m = journal_mark_open (path, &was, &found, &err);
    ck_assert_msg (m != NULL, "%s", err.text);
    ck_assert_int_eq (found, 0);
    journal_mark_set (m, &f);
    /* not closed, as a kill -9 leaves it: the page holds the store */
    struct journal_mark *again = journal_mark_open (path, &was, &found, &err);
    ck_assert_ptr_nonnull (again);
    ck_assert_int_eq (found, 1);
    ck_assert_int_eq (was.size, 4096);
    ck_assert_uint_eq (was.next_id, 17);
    journal_mark_close (m);
    journal_mark_close (again);
    unlink (path);
    rmdir (dir);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("journal_mark");
    TCase *tc = tcase_create ("journal_mark");
    tcase_add_test (tc, round_trip);
    tcase_add_test (tc, torn_and_foreign);
    tcase_add_test (tc, mapped);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
