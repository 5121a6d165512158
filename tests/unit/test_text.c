/* SPDX-License-Identifier: MIT */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "text.h"

START_TEST (trim_span_and_dup)
{
    const char *s = "  a b \t\n";
    size_t n = strlen (s);
    text_trim_span (&s, &n);
    ck_assert_uint_eq (n, 3);
    ck_assert (!strncmp (s, "a b", 3));
    s = "   ";
    n = 3;
    text_trim_span (&s, &n);
    ck_assert_uint_eq (n, 0);
    char *d = text_trim_dup ("\t x ");
    ck_assert_str_eq (d, "x");
    free (d);
    ck_assert_ptr_null (text_trim_dup ("  "));
    ck_assert_ptr_null (text_trim_dup (""));
    ck_assert_ptr_null (text_trim_dup (NULL));
}
END_TEST

START_TEST (seconds_or)
{
    ck_assert_double_eq (text_seconds_or (NULL, 0, 10, 3), 3);
    ck_assert_double_eq (text_seconds_or ("", 0, 10, 3), 3);
    ck_assert_double_eq (text_seconds_or ("2.5", 0, 10, 3), 2.5);
    ck_assert_double_eq (text_seconds_or ("0", 0, 10, 3), 0);
    /* out of range, trailing text, not a number: the default */
    ck_assert_double_eq (text_seconds_or ("0.05", 0.1, 10, 3), 3);
    ck_assert_double_eq (text_seconds_or ("11", 0, 10, 3), 3);
    ck_assert_double_eq (text_seconds_or ("5s", 0, 10, 3), 3);
    ck_assert_double_eq (text_seconds_or ("soon", 0, 10, 3), 3);
    ck_assert_double_eq (text_seconds_or ("nan", 0, 10, 3), 3);
}
END_TEST

START_TEST (first_line)
{
    char buf[16];
    text_first_line ("\n  RUNNING \r\nnext\n", buf, sizeof (buf));
    ck_assert_str_eq (buf, "RUNNING");
    text_first_line ("", buf, sizeof (buf));
    ck_assert_str_eq (buf, "");
    text_first_line ("a line longer than the buffer", buf, sizeof (buf));
    ck_assert_str_eq (buf, "a line longer t");
}
END_TEST

/* One quoter for render, the CLI and berthd's ready line: bare where no
 * shell reads anything into the word, else single quotes. */
START_TEST (shell_words)
{
    const struct { const char *in; bool always; const char *want; } cases[] = {
        { "a,b/c.d-e_f+g:h=i@j%k", false, "a,b/c.d-e_f+g:h=i@j%k" },
        { "two words", false, "'two words'" },
        { "it's", false, "'it'\\''s'" },
        { "''", false, "''\\'''\\'''" },
        { "", false, "''" },
        { "$HOME", false, "'$HOME'" },
        { "/tmp/b.sock", true, "'/tmp/b.sock'" },
        { "", true, "''" },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        struct text_buf b = { 0 };
        text_buf_shell_word (&b, cases[i].in, cases[i].always);
        ck_assert (!b.bad);
        ck_assert_msg (strcmp (b.s, cases[i].want) == 0, "%s: want %s, got %s",
                       cases[i].in, cases[i].want, b.s);
        free (b.s);
    }
}
END_TEST

START_TEST (text_buf_writes)
{
    struct text_buf b = { 0 };
    text_buf_puts (&b, "{\"n\":");
    text_buf_int (&b, LLONG_MIN);
    text_buf_put (&b, ",0,", 3);
    text_buf_int (&b, 0);
    text_buf_put (&b, ",", 1);
    text_buf_int (&b, LLONG_MAX);
    ck_assert (!b.bad);
    char want[96];
    snprintf (want, sizeof (want), "{\"n\":%lld,0,0,%lld", LLONG_MIN, LLONG_MAX);
    ck_assert_str_eq (b.s, want);               /* always NUL-terminated */
    ck_assert_uint_eq (b.len, strlen (want));
    /* past 1024 bytes it grows */
    for (int i = 0; i < 500; i++)
        text_buf_puts (&b, "abc");
    ck_assert_uint_eq (b.len, strlen (want) + 1500);
    ck_assert_uint_eq (strlen (b.s), b.len);
    /* once bad, nothing more is added */
    b.bad = true;
    text_buf_puts (&b, "more");
    ck_assert_uint_eq (b.len, strlen (want) + 1500);
    free (b.s);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("text");
    TCase *tc = tcase_create ("text");
    tcase_add_test (tc, trim_span_and_dup);
    tcase_add_test (tc, first_line);
    tcase_add_test (tc, seconds_or);
    tcase_add_test (tc, text_buf_writes);
    tcase_add_test (tc, shell_words);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
