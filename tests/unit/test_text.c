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

int main (void)
{
    Suite *s = suite_create ("text");
    TCase *tc = tcase_create ("text");
    tcase_add_test (tc, trim_span_and_dup);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
