/* SPDX-License-Identifier: MIT */
/* idlist_parse: the id-set grammar with the order written and repeats kept. */
#include <string.h>

#include "idset.h"
#include "testutil.h"

static void parses (const char *text, const int *want, int nwant)
{
    int *ids = NULL, n = -1;
    berth_error_t err;
    ck_assert_msg (idlist_parse (text, &ids, &n, &err) == 0, "%s: %s", text, err.text);
    ck_assert_int_eq (n, nwant);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq (ids[i], want[i]);
    free (ids);
}

static void rejects (const char *text, const char *want)
{
    int *ids = (int *) 1, n = -1;
    berth_error_t err;
    ck_assert_int_eq (idlist_parse (text, &ids, &n, &err), -1);
    ck_assert_msg (strstr (err.text, want), "'%s' lacks '%s'", err.text, want);
    ck_assert_ptr_eq (ids, (int *) 1);   /* outputs untouched on failure */
    ck_assert_int_eq (n, -1);
}

START_TEST (order_and_repeats_kept)
{
    parses ("4-7,0-3", (int[]) { 4, 5, 6, 7, 0, 1, 2, 3 }, 8);
    parses ("3,3", (int[]) { 3, 3 }, 2);
    parses (" 1 , 2-2 ", (int[]) { 1, 2 }, 2);
    parses ("", NULL, 0);
    parses ("1048576", (int[]) { 1048576 }, 1);
}
END_TEST

START_TEST (bad_items_named)
{
    rejects ("1,x,3", "item \"x\" is not an id");
    rejects ("5-2", "range \"5-2\" is reversed; write it as 2-5");
    rejects ("-1", "item \"-1\" is negative");
    rejects ("1,,2", "item \"\" is not an id");
    rejects ("1,", "item \"\" is not an id");
    rejects ("2-", "item \"2-\"");
    rejects ("1048577", "ids 0 to 1048576");
    rejects ("1 2", "item \"1 2\"");
    /* a set compacts repeated ranges; a list refuses to grow past the bound */
    rejects ("0-1048576,0-1048576,0", "names more than");
    int *ids, n;
    berth_error_t err;
    ck_assert_int_eq (idset_parse ("0-1048576,0-1048576,0", &ids, &n, &err), 0);
    ck_assert_int_eq (n, 1048577);
    free (ids);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("idlist");
    TCase *tc = tcase_create ("idlist");
    tcase_add_test (tc, order_and_repeats_kept);
    tcase_add_test (tc, bad_items_named);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
