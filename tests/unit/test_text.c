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

int main (void)
{
    Suite *s = suite_create ("text");
    TCase *tc = tcase_create ("text");
    tcase_add_test (tc, trim_span_and_dup);
    tcase_add_test (tc, first_line);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
