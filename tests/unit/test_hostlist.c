/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "hostlist.h"
#include "testutil.h"

/* Expand text and join the names with spaces. */
static const char *expand_joined (const char *text)
{
    static char buf[4096];
    char **names;
    int n;
    berth_error_t err;
    if (hostlist_expand (text, &names, &n, &err) < 0) {
        snprintf (buf, sizeof (buf), "ERROR %s", err.text);
        return buf;
    }
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        strcat (buf, i ? " " : "");
        strcat (buf, names[i]);
    }
    hostlist_free (names, n);
    return buf;
}

static const char *compress_list (const char *const *names, int n)
{
    static char buf[4096];
    char *text;
    berth_error_t err;
    if (hostlist_compress (names, n, &text, &err) < 0) {
        snprintf (buf, sizeof (buf), "ERROR %s", err.text);
        return buf;
    }
    snprintf (buf, sizeof (buf), "%s", text);
    free (text);
    return buf;
}

START_TEST (expand_plain_and_ranges)
{
    ck_assert_str_eq (expand_joined ("login01"), "login01");
    ck_assert_str_eq (expand_joined ("a,b,c"), "a b c");
    ck_assert_str_eq (expand_joined ("nid[001-003,010],login[1-2]"),
                      "nid001 nid002 nid003 nid010 login1 login2");
    ck_assert_str_eq (expand_joined ("nid[000002-000003]"),
                      "nid000002 nid000003");
    ck_assert_str_eq (expand_joined ("n[8-11]"), "n8 n9 n10 n11");
    ck_assert_str_eq (expand_joined ("n[098-101]"), "n098 n099 n100 n101");
    ck_assert_str_eq (expand_joined ("x[7]"), "x7");
    ck_assert_str_eq (expand_joined ("  node[1-2]\n"), "node1 node2");
}
END_TEST

START_TEST (expand_several_brackets_and_suffix)
{
    ck_assert_str_eq (expand_joined ("r[1-2]n[01-02]"),
                      "r1n01 r1n02 r2n01 r2n02");
    ck_assert_str_eq (expand_joined ("c[1,3]-ib"), "c1-ib c3-ib");
    ck_assert_str_eq (expand_joined ("vm,node[1-2],r[0-1]s[5]x"),
                      "vm node1 node2 r0s5x r1s5x");
}
END_TEST

START_TEST (expand_rejects_malformed)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        { "", "empty" },
        { "  ", "empty" },
        { "a,,b", "empty item" },
        { "a,", "empty item" },
        { "nid[1-3", "'[' without ']'" },
        { "nid1-3]", "']' without '['" },
        { "nid[1-[2]]", "nested brackets" },
        { "nid[]", "empty brackets" },
        { "nid[3-1]", "backwards" },
        { "nid[a-b]", "not a number" },
        { "nid[1,,2]", "empty number" },
        { "nid[1,2,]", "empty range" },
        { "nid[1-]", "empty number" },
        { "nid[1234567890]", "more than 9 digits" },
        { "nid 1", "white space" },
        { "n[0-999]m[0-999]x[0-9]", "more than 1000000" },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        char **names = (char **) 1;
        int n = -1;
        berth_error_t err;
        ck_assert_int_eq (hostlist_expand (cases[i].text, &names, &n, &err),
                          -1);
        ck_assert_msg (strstr (err.text, cases[i].want), "'%s': %s",
                       cases[i].text, err.text);
        ck_assert_ptr_eq (names, (char **) 1); /* untouched on failure */
        ck_assert_int_eq (n, -1);
    }
    berth_error_t err;
    char **names;
    int n;
    hostlist_expand ("good[1-2],bad[2-1]", &names, &n, &err);
    ck_assert_ptr_nonnull (strstr (err.text, "bad[2-1]"));
}
END_TEST

START_TEST (compress_groups)
{
    const char *a[] = { "nid002", "nid001", "nid003", "login1", "nid010",
                        "login2", "nid002" };
    ck_assert_str_eq (compress_list (a, 7), "nid[001-003,010],login[1-2]");
    const char *b[] = { "vm" };
    ck_assert_str_eq (compress_list (b, 1), "vm");
    const char *c[] = { "n9", "n10", "n11", "n013" };
    ck_assert_str_eq (compress_list (c, 4), "n[9-11],n013");
    const char *d[] = { "c1-ib", "c2-ib", "c3-eth", "head", "head" };
    ck_assert_str_eq (compress_list (d, 5), "c[1-2]-ib,c3-eth,head");
    const char *e[] = { "r1n01", "r1n02", "r2n01" };
    ck_assert_str_eq (compress_list (e, 3), "r1n[01-02],r2n01");
    ck_assert_str_eq (compress_list (NULL, 0), "");
    const char *f[] = { "nid0", "x" };
    ck_assert_str_eq (compress_list (f, 2), "nid0,x");
}
END_TEST

START_TEST (compress_round_trips)
{
    const char *texts[] = { "nid[000001-000128]", "n[098-101]",
                            "a[1-3,5],b07,c", "x[0-1]y" };
    for (size_t t = 0; t < sizeof (texts) / sizeof (texts[0]); t++) {
        char **names, *text;
        int n;
        ck_assert_int_eq (hostlist_expand (texts[t], &names, &n, NULL), 0);
        ck_assert_int_eq (hostlist_compress ((const char *const *) names, n,
                                             &text, NULL), 0);
        ck_assert_str_eq (expand_joined (text), expand_joined (texts[t]));
        free (text);
        hostlist_free (names, n);
    }
}
END_TEST

START_TEST (compress_rejects_unlistable_names)
{
    const char *a[] = { "ok1", "bad,name" };
    ck_assert_ptr_nonnull (strstr (compress_list (a, 2), "bad,name"));
    const char *b[] = { "" };
    ck_assert_ptr_nonnull (strstr (compress_list (b, 1), "cannot be put"));
}
END_TEST

/* 300,000 names that share no prefix are 300,000 groups, kept in input
 * order. A search through the groups per name took 25 s for 100,000 here,
 * minutes for these (the fuzzer found 20,000 taking 11 s); sorting takes
 * well under a second. */
START_TEST (compress_many_distinct_prefixes)
{
    enum { N = 300000 };
    char **names = malloc (N * sizeof (*names));
    size_t want_len = 0;
    for (int i = 0; i < N; i++) {
        /* descending, so that input order differs from sorted order */
        ck_assert_int_gt (asprintf (&names[i], "p%dx1", N - i), 0);
        want_len += strlen (names[i]) + 1;
    }
    char *want = malloc (want_len), *w = want;
    for (int i = 0; i < N; i++)
        w += sprintf (w, "%s%s", i ? "," : "", names[i]);
    char *text;
    berth_error_t err;
    ck_assert_int_eq (hostlist_compress ((const char *const *) names, N, &text,
                                         &err), 0);
    ck_assert_str_eq (text, want);
    free (text);
    free (want);
    hostlist_free (names, N);
}
END_TEST

/* A long suffix on a wide range is refused by its size, before it takes
 * gigabytes: 100,000 names of 1,000 characters. */
START_TEST (expand_refuses_too_much_text)
{
    char text[1100];
    int k = snprintf (text, sizeof (text), "n[00000-99999]");
    memset (text + k, 'x', 1000);
    text[k + 1000] = '\0';
    const char *got = expand_joined (text);
    ck_assert_msg (strstr (got, "ERROR host list expands to more than 16 MiB "
                                "of names"), "%.200s", got);
    /* the same width with a short suffix is fine */
    char **names;
    int n;
    berth_error_t err;
    ck_assert_int_eq (hostlist_expand ("n[00000-99999]x", &names, &n, &err), 0);
    ck_assert_int_eq (n, 100000);
    hostlist_free (names, n);
}
END_TEST

START_TEST (name_follows_and_range)
{
    ck_assert (hostlist_name_follows ("nid0009", "nid0010"));
    ck_assert (hostlist_name_follows ("x1y", "x2y"));
    ck_assert (hostlist_name_follows ("r1n098", "r1n099"));
    ck_assert (!hostlist_name_follows ("n9", "n10"));          /* widths */
    ck_assert (!hostlist_name_follows ("nid0010", "nid0009"));
    ck_assert (!hostlist_name_follows ("nid0009", "nid0011"));
    ck_assert (!hostlist_name_follows ("a1", "b2"));
    ck_assert (!hostlist_name_follows ("x1y", "x2z"));
    ck_assert (!hostlist_name_follows ("login", "login"));
    /* a range of numbers too long for hostlist_expand is no range */
    ck_assert (!hostlist_name_follows ("r100000000001", "r100000000002"));
    const char *runs[][2] = { { "nid00001", "nid09999" }, { "x1y", "x3y" },
                              { "r1n098", "r1n101" } };
    const char *want[] = { "nid[00001-09999]", "x[1-3]y", "r1n[098-101]" };
    for (int i = 0; i < 3; i++) {
        char *text = hostlist_range (runs[i][0], runs[i][1]);
        ck_assert_str_eq (text, want[i]);
        char **names;
        int n;
        ck_assert_int_eq (hostlist_expand (text, &names, &n, NULL), 0);
        ck_assert_str_eq (names[0], runs[i][0]);
        ck_assert_str_eq (names[n - 1], runs[i][1]);
        for (int k = 1; k < n; k++)
            ck_assert (hostlist_name_follows (names[k - 1], names[k]));
        hostlist_free (names, n);
        free (text);
    }
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("hostlist");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, expand_plain_and_ranges);
    tcase_add_test (tc, expand_several_brackets_and_suffix);
    tcase_add_test (tc, expand_rejects_malformed);
    tcase_add_test (tc, compress_groups);
    tcase_add_test (tc, compress_round_trips);
    tcase_add_test (tc, compress_rejects_unlistable_names);
    tcase_add_test (tc, compress_many_distinct_prefixes);
    tcase_add_test (tc, expand_refuses_too_much_text);
    tcase_add_test (tc, name_follows_and_range);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
