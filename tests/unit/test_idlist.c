#include <string.h>

#include "idlist.h"
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
    rejects ("1,x,3", "'x' in '1,x,3'");
    rejects ("5-2", "'5-2'");
    rejects ("-1", "'-1'");
    rejects ("1,,2", "'1,,2' has an empty item");
    rejects ("1,", "'1,' has an empty item");
    rejects ("2-", "'2-'");
    rejects ("1048577", "1048577");
    rejects ("0-1048576,1", "more than");
    rejects ("1 2", "'1 2'");
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
