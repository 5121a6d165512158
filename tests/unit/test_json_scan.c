/* SPDX-License-Identifier: MIT */
/* json_scan: accepts only what jansson accepts, and reads the same values.
 * Each accepted line is compared token by token with jansson's tree. */
#include <jansson.h>
#include <string.h>

#include "../fuzz/json_scan_agree.h"
#include "json_scan.h"
#include "mutate.h"
#include "testutil.h"

static const int jansson_flags = JSON_REJECT_DUPLICATES;

/* 0: scan declined; 1: accepted and equal to jansson's reading. Fails the
 * test when scan accepts what jansson refuses or reads it differently. */
static int check_line (const char *line, size_t len)
{
    struct json_scan s;
    json_error_t je;
    int rc = json_scan_parse (&s, line, len);
    ck_assert_msg (rc == 0 || rc == 1, "json_scan_parse returned %d", rc);
    if (rc == 1)
        return 0;
    json_t *o = json_loadb (line, len, jansson_flags, &je);
    ck_assert_msg (o != NULL, "scan accepted what jansson refuses (%s): %.*s",
                   je.text, (int) len, line);
    char why[200] = "";
    ck_assert_msg (json_scan_agrees (&s, 0, o, why, sizeof (why)) == s.ntokens,
                   "%s: %.*s", why, (int) len, line);
    ck_assert_int_eq (json_scan_skip (&s, 0), s.ntokens);
    json_decref (o);
    return 1;
}

static int check (const char *line)
{
    return check_line (line, strlen (line));
}

static const char *const good[] = {
    "{\"op\":\"acquire\",\"id\":109,\"cores\":1}\n",
    "{}",
    " { } \r\n",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"label\":null,\"placement\":{\"nodes\":[\"vm\"],"
    "\"cores\":[[0]],\"gpus\":0,\"gpu_ids\":[]},\"memory_cap\":null,\"budget_mb\":185,"
    "\"env_delta\":{\"unset\":[],\"set\":{}},\"owner_pid\":12723,\"granted\":1796024247.2969308}\n",
    "{\"a\" : [ 1 , -2 , 0 , -0 , 3.25 , -0.5 , true , false , null , \"x y\" ] }",
    "{\"n\":999999999999999999,\"m\":-999999999999999999}",
    "{\"a\":{\"a\":{\"a\":[[[]]]}},\"b\":\"\"}",
    "{\"a\":1,\"b\":{\"a\":2}}",   /* the same key in two objects */
    "\t{\"x\":\"~!@#$%^&*()_+{}[]:;'<>,.?/|`\"}",
};

static const char *const declined[] = {
    "",
    "   ",
    "[1,2]",
    "\"text\"",
    "12",
    "{\"a\":1,}",
    "{\"a\":1 \"b\":2}",
    "{\"a\" 1}",
    "{\"a\" \"b\"}",
    "{\"a\":}",
    "{\"a\"::1}",
    "{,\"a\":1}",
    "{\"a\":[1,,2]}",
    "{\"a\":[1 2]}",
    "{\"a\":[1,]}",
    "{\"a\":1}{}",
    "{\"a\":1} x",
    "{\"a\":1",
    "{\"a\":1]",
    "{\"a\":[1}",
    "{\"a\":01}",
    "{\"a\":-01}",
    "{\"a\":1.}",
    "{\"a\":.5}",
    "{\"a\":-}",
    "{\"a\":1e5}",
    "{\"a\":1.5E-3}",
    "{\"a\":+1}",
    "{\"a\":1x}",
    "{\"a\":tru}",
    "{\"a\":nulll}",
    "{\"a\":True}",
    "{\"a\":1234567890123456789}",
    "{\"a\":1796024247.2944444444444444444444444444444444444444444444444444444}",
    "{\"a\":\"tab\there\"}",
    "{\"a\":\"esc\\\"aped\"}",
    "{\"a\":\"\\u0041\"}",
    "{\"a\":\"caf\xc3\xa9\"}",
    "{\"a\":\"\xff\"}",
    "{\"a\":1,\"a\":2}",
    "{\"a\":{\"b\":1,\"b\":1}}",
    "{1:2}",
    "{[1]:2}",
    "{\"a\":'x'}",
};

START_TEST (accepts_and_agrees)
{
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++)
        ck_assert_msg (check (good[i]) == 1, "declined: %s", good[i]);
}
END_TEST

START_TEST (declines_outside_the_subset)
{
    for (size_t i = 0; i < sizeof (declined) / sizeof (declined[0]); i++)
        ck_assert_msg (check (declined[i]) == 0, "accepted: %s", declined[i]);
}
END_TEST

START_TEST (nul_bytes_are_declined)
{
    const char a[] = "{\"a\":1}\0";
    const char b[] = "{\"a\":\"x\0y\"}";
    const char c[] = "{\"a\":1,\0\"b\":2}";
    ck_assert_int_eq (check_line (a, sizeof (a) - 1), 0);
    ck_assert_int_eq (check_line (b, sizeof (b) - 1), 0);
    ck_assert_int_eq (check_line (c, sizeof (c) - 1), 0);
}
END_TEST

START_TEST (too_many_tokens_are_declined)
{
    char line[4096] = "{\"a\":[";
    for (int i = 0; i < JSON_SCAN_MAX_TOKENS; i++)
        strcat (line, i ? ",1" : "1");
    strcat (line, "]}");
    ck_assert_int_eq (check (line), 0);
}
END_TEST

/* Mutations of the good lines, with bytes that matter to JSON: whatever
 * scan accepts, jansson must accept and read alike. */
START_TEST (mutations_never_disagree)
{
    static const char alphabet[] = "{}[]:,\" \\0123456789.-+eEtrufalsn\n\t\x01\xc3";
    uint64_t state = 12345;
    int accepted = 0, total = 0;
    for (size_t g = 0; g < sizeof (good) / sizeof (good[0]); g++)
        for (int round = 0; round < 3000; round++) {
            char line[512];
            size_t n = strlen (good[g]);
            memcpy (line, good[g], n);
            n = mutate_line (line, n, sizeof (line), 1 + round % 3, alphabet, &state);
            accepted += check_line (line, n);
            total++;
        }
    /* the test means something only if both outcomes occur */
    ck_assert_int_gt (accepted, total / 50);
    ck_assert_int_lt (accepted, total - total / 50);
}
END_TEST

/* The helpers the fast lanes share: members by name, null as left out,
 * bounded integers and strings. */
START_TEST (member_helpers)
{
    static const char *const names[] = { "a", "ab", "b" };
    const char *line = "{\"ab\":7,\"b\":null,\"c\":[\"xy\"]}";
    struct json_scan s;
    int at[3];
    long long v = 0;
    ck_assert_int_eq (json_scan_parse (&s, line, strlen (line)), 0);
    ck_assert_int_eq (json_scan_members (&s, 0, names, 3, at), 1);   /* "c" */
    ck_assert_int_eq (json_scan_members (&s, 6, names, 3, at), 1);   /* an array */
    line = "{\"ab\":7,\"b\":null,\"a\":\"xy\"}";
    ck_assert_int_eq (json_scan_parse (&s, line, strlen (line)), 0);
    ck_assert_int_eq (json_scan_members (&s, 0, names, 3, at), 0);
    ck_assert_int_eq (at[0], 6);
    ck_assert_int_eq (at[1], 2);
    ck_assert_int_eq (at[2], 4);
    ck_assert (json_scan_given (&s, at[1]));
    ck_assert (!json_scan_given (&s, at[2]));
    ck_assert (!json_scan_given (&s, -1));
    ck_assert_int_eq (json_scan_integer_in (&s, at[1], 7, 7, &v), 0);
    ck_assert_int_eq (v, 7);
    ck_assert_int_eq (json_scan_integer_in (&s, at[1], 8, 9, &v), -1);
    ck_assert_int_eq (json_scan_integer_in (&s, at[0], 0, 9, &v), -1);
    ck_assert_int_eq (v, 7);
    ck_assert (json_scan_string_in (&s, at[0], 2, 2));
    ck_assert (!json_scan_string_in (&s, at[0], 3, 9));
    ck_assert (!json_scan_string_in (&s, at[0], 0, 1));
    ck_assert (!json_scan_string_in (&s, at[1], 0, 9));
}
END_TEST

START_TEST (values_read_back)
{
    struct json_scan s;
    const char *line = "{\"s\":\"abc\",\"i\":-42,\"r\":0.5,\"n\":null,\"t\":true}";
    ck_assert_int_eq (json_scan_parse (&s, line, strlen (line)), 0);
    ck_assert_int_eq (s.ntokens, 11);
    ck_assert (json_scan_is (&s, 1, "s"));
    ck_assert (!json_scan_is (&s, 1, "st"));
    ck_assert (!json_scan_is (&s, 4, "-42"));     /* an integer is no string */
    char *v = NULL;
    ck_assert_int_eq (json_scan_strdup (&s, 2, false, &v), 0);
    ck_assert_str_eq (v, "abc");
    free (v);
    long long i;
    double r;
    ck_assert_int_eq (json_scan_integer (&s, 4, &i), 0);
    ck_assert_int_eq (i, -42);
    ck_assert_int_eq (json_scan_integer (&s, 6, &i), -1);
    ck_assert_int_eq (json_scan_real (&s, 6, &r), 0);
    ck_assert (r == 0.5);
    v = (char *) "unchanged";
    ck_assert_int_eq (json_scan_strdup (&s, 8, true, &v), 0);
    ck_assert_ptr_null (v);
    ck_assert_int_eq (json_scan_strdup (&s, 8, false, &v), -1);
    ck_assert_int_eq (json_scan_strdup (&s, 10, true, &v), -1);
    ck_assert_int_eq (json_scan_skip (&s, 0), 11);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("json_scan");
    TCase *tc = tcase_create ("scan");
    tcase_add_test (tc, accepts_and_agrees);
    tcase_add_test (tc, declines_outside_the_subset);
    tcase_add_test (tc, nul_bytes_are_declined);
    tcase_add_test (tc, too_many_tokens_are_declined);
    tcase_add_test (tc, mutations_never_disagree);
    tcase_add_test (tc, values_read_back);
    tcase_add_test (tc, member_helpers);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
