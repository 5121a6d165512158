/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "config.h"
#include "config_file.h"
#include "testutil.h"

static struct config *load (const char *text, berth_error_t *err)
{
    struct config *cfg = config_create ();
    ck_assert_ptr_nonnull (cfg);
    if (config_load_string (cfg, "t.cfg", text, err) < 0) {
        config_destroy (cfg);
        return NULL;
    }
    return cfg;
}

static const char *get (struct config *cfg, const char *s, const char *k)
{
    const char *v;
    berth_error_t err;
    ck_assert_msg (config_get (cfg, s, k, &v, &err) == 0, "%s", err.text);
    return v;
}

static void get_fails (struct config *cfg, const char *s, const char *k,
                       const char *want)
{
    const char *v = "unchanged";
    berth_error_t err;
    ck_assert_int_eq (config_get (cfg, s, k, &v, &err), -1);
    ck_assert_msg (strstr (err.text, want), "'%s' lacks '%s'", err.text, want);
}

START_TEST (file_values_and_continuation)
{
    berth_error_t err;
    struct config *cfg = config_create ();
    ck_assert_int_eq (config_load_file (cfg, testdata ("config/base.cfg"), &err), 0);
    ck_assert_str_eq (get (cfg, "parallel", "system"), "slurm");
    ck_assert_str_eq (get (cfg, "parallel", "CORES_PER_NODE"), "64");
    ck_assert_str_eq (get (cfg, "parallel", "max_mpi_tasks_per_node"), "4");
    ck_assert_str_eq (get (cfg, "parallel", "modules"), "a\nb\nc");
    ck_assert_str_eq (get (cfg, "parallel", "path"), "/opt/bin");
    ck_assert_str_eq (get (cfg, "parallel", "price"), "$5");
    ck_assert_str_eq (get (cfg, "paths", "scratch"), "slurm/scratch");
    ck_assert_ptr_null (get (cfg, "parallel", "nope"));
    ck_assert_ptr_null (get (cfg, "nosection", "root"));
    ck_assert_str_eq (config_get_raw (cfg, "parallel", "path"), "${root}/bin");
    const char *file;
    int line;
    ck_assert_int_eq (config_origin (cfg, "parallel", "gpus_per_node", &file, &line), 0);
    ck_assert (strstr (file, "base.cfg"));
    ck_assert_int_eq (line, 8);
    ck_assert_uint_eq (config_section_count (cfg), 2);
    ck_assert_str_eq (config_section_name (cfg, 0), "parallel");
    ck_assert_str_eq (config_key_name (cfg, "parallel", 1), "cores_per_node");
    config_destroy (cfg);
}
END_TEST

START_TEST (layering_later_wins_key_by_key)
{
    berth_error_t err;
    struct config *cfg = config_create ();
    ck_assert_int_eq (config_load_file (cfg, testdata ("config/base.cfg"), &err), 0);
    ck_assert_str_eq (get (cfg, "parallel", "cores_per_node"), "64");
    ck_assert_int_eq (config_load_file (cfg, testdata ("config/user.cfg"), &err), 0);
    ck_assert_str_eq (get (cfg, "parallel", "cores_per_node"), "128");
    ck_assert_str_eq (get (cfg, "parallel", "gpus_per_node"), "4");
    /* an interpolated value follows a later layer */
    ck_assert_int_eq (config_load_string (cfg, "u2", "[parallel]\ngpus_per_node = 8\n",
                                          &err), 0);
    ck_assert_str_eq (get (cfg, "parallel", "max_mpi_tasks_per_node"), "8");
    ck_assert_int_eq (config_set (cfg, "parallel", "gpus_per_node", "2", "detected",
                                  &err), 0);
    ck_assert_str_eq (get (cfg, "parallel", "max_mpi_tasks_per_node"), "2");
    config_destroy (cfg);
}
END_TEST

START_TEST (default_section_interpolates_in_reader_context)
{
    berth_error_t err;
    struct config *cfg = load ("[DEFAULT]\nwho = ${name}\n[a]\nname = A\n[b]\nname = B\n",
                               &err);
    ck_assert_ptr_nonnull (cfg);
    ck_assert_str_eq (get (cfg, "a", "who"), "A");
    ck_assert_str_eq (get (cfg, "b", "who"), "B");
    ck_assert_str_eq (get (cfg, "a", "who"), "A");
    /* defaults are not listed as the section's own keys */
    ck_assert_uint_eq (config_key_count (cfg, "a"), 1);
    get_fails (cfg, "DEFAULT", "who", "undefined reference ${name}");
    config_destroy (cfg);
}
END_TEST

START_TEST (interpolation_errors)
{
    berth_error_t err;
    struct config *cfg = load ("[s]\n"
                               "a = ${b}\n"
                               "b = ${a}\n"
                               "self = x${self}\n"
                               "undef = ${missing}\n"
                               "undef2 = ${other:key}\n"
                               "undef3 = ${s:nokey}\n"
                               "open = ${a\n"
                               "dollar = 5$\n"
                               "bad = ${a:b:c}\n"
                               "ok = fine\n", &err);
    ck_assert_ptr_nonnull (cfg);
    get_fails (cfg, "s", "a", "interpolation loop");
    get_fails (cfg, "s", "a", "t.cfg:3: [s] b");
    get_fails (cfg, "s", "self", "t.cfg:4: [s] self: interpolation loop through ${self}");
    get_fails (cfg, "s", "undef", "t.cfg:5: [s] undef: undefined reference ${missing}");
    get_fails (cfg, "s", "undef2", "undefined reference ${other:key}");
    get_fails (cfg, "s", "undef3", "no option 'nokey'");
    get_fails (cfg, "s", "open", "unterminated reference");
    get_fails (cfg, "s", "dollar", "'$' must be followed by '$' or '{'");
    get_fails (cfg, "s", "bad", "malformed reference");
    /* an error elsewhere does not spoil good values */
    ck_assert_str_eq (get (cfg, "s", "ok"), "fine");
    config_destroy (cfg);
}
END_TEST

START_TEST (deep_chain_is_fine_but_bounded)
{
    char text[8192];
    size_t n = (size_t) snprintf (text, sizeof (text), "[s]\nv0 = end\n");
    for (int i = 1; i <= 20; i++)
        n += (size_t) snprintf (text + n, sizeof (text) - n, "v%d = ${v%d}\n", i, i - 1);
    berth_error_t err;
    struct config *cfg = load (text, &err);
    ck_assert_str_eq (get (cfg, "s", "v20"), "end");
    config_destroy (cfg);
    n = (size_t) snprintf (text, sizeof (text), "[s]\nv0 = end\n");
    for (int i = 1; i <= 40; i++)
        n += (size_t) snprintf (text + n, sizeof (text) - n, "v%d = ${v%d}\n", i, i - 1);
    cfg = load (text, &err);
    get_fails (cfg, "s", "v40", "deeper than 32");
    config_destroy (cfg);
}
END_TEST

static void load_fails (const char *text, const char *want)
{
    berth_error_t err;
    struct config *cfg = config_create ();
    ck_assert_int_eq (config_load_string (cfg, "good", "[keep]\nx = 1\n", &err), 0);
    ck_assert_int_eq (config_load_string (cfg, "bad.cfg", text, &err), -1);
    ck_assert_msg (strstr (err.text, want), "'%s' lacks '%s'", err.text, want);
    /* nothing of the bad file was applied */
    ck_assert_uint_eq (config_section_count (cfg), 1);
    ck_assert_str_eq (get (cfg, "keep", "x"), "1");
    config_destroy (cfg);
}

START_TEST (bad_files)
{
    load_fails ("x = 1\n", "bad.cfg:1: 'x = 1' comes before any [section]");
    load_fails ("[a]\nx = 1\n[b\n", "bad.cfg:3: malformed section header");
    load_fails ("[a]\n[]\n", "bad.cfg:2: empty section name");
    load_fails ("[a]\nnovalue\n", "bad.cfg:2: [a] 'novalue' has no value");
    load_fails ("[a]\nx = 1\nX = 2\n", "bad.cfg:3: [a] X is set twice in this file (first on line 2)");
    load_fails ("[a]\n[b]\n[a]\n", "bad.cfg:3: section [a] appears twice");
    load_fails ("[a]\n= 3\n", "bad.cfg:2: [a] a value with no key");
    load_fails ("[keep]\nx = 2\ny = 1\n[a]\nz\n", "bad.cfg:5");
}
END_TEST

START_TEST (comments_blank_lines_crlf)
{
    berth_error_t err;
    struct config *cfg = load ("; top comment\r\n[a]\r\n# c\r\nx = 1 \r\n  more\r\n\r\n"
                               "  indented after blank = 2\r\ny: a: b\r\nz =\r\n", &err);
    ck_assert_msg (cfg != NULL, "%s", err.text);
    ck_assert_str_eq (get (cfg, "a", "x"), "1\nmore");
    /* after a blank line an indented line starts a new key */
    ck_assert_str_eq (get (cfg, "a", "indented after blank"), "2");
    ck_assert_str_eq (get (cfg, "a", "y"), "a: b");
    ck_assert_str_eq (get (cfg, "a", "z"), "");
    config_destroy (cfg);
}
END_TEST

START_TEST (missing_file)
{
    berth_error_t err;
    struct config *cfg = config_create ();
    ck_assert_int_eq (config_load_file (cfg, "/nonexistent/x.cfg", &err), -1);
    ck_assert (strstr (err.text, "/nonexistent/x.cfg: cannot open"));
    config_destroy (cfg);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("config");
    TCase *tc = tcase_create ("config");
    tcase_add_test (tc, file_values_and_continuation);
    tcase_add_test (tc, layering_later_wins_key_by_key);
    tcase_add_test (tc, default_section_interpolates_in_reader_context);
    tcase_add_test (tc, interpolation_errors);
    tcase_add_test (tc, deep_chain_is_fine_but_bounded);
    tcase_add_test (tc, bad_files);
    tcase_add_test (tc, comments_blank_lines_crlf);
    tcase_add_test (tc, missing_file);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
