/* SPDX-License-Identifier: MIT */
/* berth status for people, from recorded status replies. */
#include <jansson.h>
#include <string.h>

#include "status_view.h"
#include "text.h"
#include "testutil.h"

static char *render (const json_t *status, bool unicode)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    ck_assert_ptr_nonnull (f);
    status_view_print (f, status, 1754304325.5, unicode);
    fclose (f);
    return buf;
}

static json_t *load (const char *name)
{
    json_error_t je;
    json_t *o = json_load_file (testdata (name), 0, &je);
    ck_assert_msg (o != NULL, "%s: %s", name, je.text);
    return o;
}

#define HAS(text, want) ck_assert_msg (strstr (text, want), "missing [%s] in:\n%s", want, text)

START_TEST (test_full)
{
    json_t *st = load ("status/two_nodes.json");
    char *t = render (st, false);
    HAS (t, "berthd 0.1.0 \u00b7 job 4242 on pm-cpu (slurm, placement by scheduler) \u00b7 up 1h12m\n");
    HAS (t, "nodes 2 \u00b7 cores 256 (192 held, 64 free) \u00b7 gpus 0 \u00b7 memory 1030200 MB "
            "(769550 budgeted)\n");
    HAS (t, "NODE           CORES              GPUS      MEM MB              LEASES\n");
    HAS (t, "nid001234      128/128   ######## 0/0       512000/515100       ocean_qu240 (64), L18 (64)\n");
    HAS (t, "nid001235      64/128    ####.... 0/0       257550/515100       ocean_qu240 (64)\n");
    HAS (t, "L17      ocean_qu240          2      128    0     8000 cap  3m10s    pid 3101, connection\n");
    HAS (t, "L18      -                    1      64     0     257550    1h06m    pid 999, detached\n");
    HAS (t, "2 waiting \u00b7 next: 'ocean_ec30to60', no 2 nodes with 128 free cores (best: 64, 0)\n");
    HAS (t, "1        ocean_ec30to60       256 cores on 2 nodes, 8000 MB  3m10s    "
            "no 2 nodes with 128 free cores\n");
    HAS (t, "2        -                    4 cores, local                 2s       -\n");
    free (t);
    t = render (st, true);
    HAS (t, "128/128   \u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588 0/0");
    HAS (t, "64/128    \u2588\u2588\u2588\u2588\u2591\u2591\u2591\u2591 0/0");
    free (t);
    json_decref (st);
}
END_TEST

/* A login node: no launcher places anything (placement_support NONE) while
 * the ledger's layout is cpu_binding; the header says what the JSON says. */
START_TEST (test_login_node_header)
{
    json_t *st = load ("status/two_nodes.json");
    json_t *alloc = json_object_get (st, "allocation");
    json_object_set_new (alloc, "system", json_string ("login"));
    json_object_set_new (alloc, "layout", json_string ("cpu_binding"));
    json_object_set_new (alloc, "placement_support", json_string ("NONE"));
    char *t = render (st, false);
    HAS (t, " on pm-cpu (login, no launcher placement: local steps only, bound by CPU "
            "affinity) \u00b7 up");
    ck_assert_msg (!strstr (t, "launcher binding"), "NONE is not launcher binding:\n%s", t);
    free (t);
    json_object_set_new (alloc, "system", json_string ("slurm"));
    json_object_set_new (alloc, "placement_support", json_string ("CPU_BINDING"));
    t = render (st, false);
    HAS (t, " (slurm, placement by launcher binding) ");
    free (t);
    json_decref (st);
}
END_TEST

/* The job's end, when berthd knows it: time left in the header. */
START_TEST (test_time_left)
{
    json_t *st = load ("status/two_nodes.json");
    json_t *alloc = json_object_get (st, "allocation");
    char *t = render (st, false);
    ck_assert_msg (!strstr (t, "time left"), "no end, no time left:\n%s", t);
    free (t);
    json_object_set_new (alloc, "time_left_s", json_real (4 * 3600 + 48 * 60 + 30));
    t = render (st, false);
    HAS (t, "\u00b7 up 1h12m \u00b7 time left 4h48m\n");
    free (t);
    json_object_set_new (alloc, "time_left_s", json_null ());
    t = render (st, false);
    ck_assert_msg (!strstr (t, "time left"), "null: no time left:\n%s", t);
    free (t);
    json_decref (st);
}
END_TEST

/* A node that does not state what is held on it: the leases say. */
START_TEST (test_tally_from_leases)
{
    json_t *st = load ("status/two_nodes.json");
    json_t *n = json_array_get (json_object_get (json_object_get (st, "allocation"), "nodes"), 1);
    json_object_del (n, "cores_free");
    json_object_del (n, "memory_unbudgeted_mb");
    json_object_set_new (json_object_get (st, "daemon"), "draining", json_true ());
    char *t = render (st, false);
    HAS (t, "nid001235      64/128    ####.... 0/0       -                   ocean_qu240 (64)\n");
    HAS (t, "\u00b7 draining: no new leases\n");
    /* with one node's memory unknown, the total is not stated */
    ck_assert_ptr_null (strstr (t, "budgeted)"));
    free (t);
    json_decref (st);
}
END_TEST

START_TEST (test_empty)
{
    json_t *st = json_object ();
    char *t = render (st, false);
    HAS (t, "berthd\n");
    HAS (t, "nodes 0 \u00b7 cores 0 (0 held, 0 free) \u00b7 gpus 0\n");
    HAS (t, "no leases\n");
    HAS (t, "nothing waiting\n");
    free (t);
    json_decref (st);
}
END_TEST

START_TEST (test_one_held_core_shows)
{
    json_t *st = json_pack ("{s:{s:[{s:s s:i s:i s:i s:i}]}}", "allocation", "nodes", "name", "n1",
                            "ncores", 128, "cores_free", 127, "gpus", 4, "gpus_free", 1);
    char *t = render (st, false);
    HAS (t, "n1             1/128     #....... 3/4 ");
    HAS (t, "gpus 4 (3 held, 1 free)");
    free (t);
    json_decref (st);
}
END_TEST

static char *render_in (const json_t *status, int width, int height, bool all)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    struct status_view_opts o = { width, height, false, all };
    status_view_render (f, status, 1754304325.5, &o);
    fclose (f);
    return buf;
}

static int lines_of (const char *t)
{
    int n = 0;
    for (; *t; t++)
        n += *t == '\n';
    return n;
}

/* 10 waiting with long labels and the daemon's long reasons, 2 nodes, 2
 * leases: a window of 80x22 keeps every section, cuts the queue. */
static json_t *busy (int waiting)
{
    json_t *st = load ("status/two_nodes.json");
    json_t *q = json_array ();
    for (int i = 0; i < waiting; i++) {
        char label[64], why[256];
        snprintf (label, sizeof (label), "a_step_label_far_longer_than_any_column_%d", i);
        snprintf (why, sizeof (why), "no node with 4 free cores (best: 2, 1, 0, 0, 0, ...); "
                  "behind #1 (overtaken 10 of 16 times)");
        json_array_append_new (q, json_pack ("{s:i s:s s:s s:f s:s s:i}", "position", i + 1,
                                             "label", label, "needs", "4 cores, 8000 MB",
                                             "waited_s", 12.0, "why", i ? why : "no node with "
                                             "4 free cores (best: 2, 1, 0)", "overtaken", 10));
    }
    json_object_set_new (st, "queue", q);
    json_object_set_new (json_object_get (st, "daemon"), "starvation",
                         json_pack ("{s:i s:f}", "overtakes", 16, "seconds", 600.0));
    return st;
}

START_TEST (test_fits_window)
{
    json_t *st = busy (10);
    char *t = render_in (st, 80, 14, false);
    ck_assert_int_le (lines_of (t), 14);
    ck_assert (!strncmp (t, "berthd 0.1.0", 12));            /* the header stays */
    HAS (t, "\nnid001234 ");                                   /* the nodes stay */
    HAS (t, "\nL17 ");                                         /* the leases stay */
    HAS (t, " more waiting\n");
    /* the head's story once, the rows in a few words */
    HAS (t, "10 waiting \u00b7 next: 'a_step_label_far_longer_than_any_column_0', no node "
            "with 4 \u2026\n");
    ck_assert_ptr_null (strstr (t, "behind #1"));
    HAS (t, "\n2    a_step_label_f\u2026 4 cores, 8000 MB         12s    no node with 4 free cores\n");
    for (char *line = t; *line;) {               /* no line past 80 characters */
        char *nl = strchr (line, '\n');
        *nl = '\0';
        ck_assert_msg (text_utf8_chars (line) <= 80, "too wide: %s", line);
        line = nl + 1;
    }
    free (t);
    /* room for all: nothing cut */
    t = render_in (st, 200, 60, false);
    ck_assert_ptr_null (strstr (t, "more waiting"));
    HAS (t, "10 waiting \u00b7 next: 'a_step_label_far_longer_than_any_column_0', no node "
            "with 4 free cores (best: 2, 1, 0) \u00b7 overtaken 10 of 16 times\n");
    HAS (t, "\n10       a_step_label_far_lo\u2026 4 cores, 8000 MB");
    free (t);
    /* a tiny window still says how much it cut */
    t = render_in (st, 40, 9, false);
    ck_assert_int_le (lines_of (t), 10);
    HAS (t, "... 10 more waiting");
    free (t);
    json_decref (st);
}
END_TEST

START_TEST (test_short_why)
{
    char b[128];
    status_view_short_why ("no 2 nodes with 64 free cores (best: 32, 32); behind #1 "
                           "(overtaken 3 of 16 times)", b, sizeof (b));
    ck_assert_str_eq (b, "no 2 nodes with 64 free cores");
    status_view_short_why ("held for #2 (overtaken 16 of 16 times)", b, sizeof (b));
    ck_assert_str_eq (b, "held for #2");
    status_view_short_why ("cannot be placed: the launcher cannot bind 3 GPUs", b, sizeof (b));
    ck_assert_str_eq (b, "never fits");
    status_view_short_why ("the daemon's node vm has 0 free cores, 0 free GPUs, 0 MB "
                           "unbudgeted; needs 1 cores", b, sizeof (b));
    ck_assert_str_eq (b, "the daemon's node vm has 0 free cores");
    status_view_short_why ("", b, sizeof (b));
    ck_assert_str_eq (b, "-");
    status_view_short_why (NULL, b, sizeof (b));
    ck_assert_str_eq (b, "-");
    status_view_short_why ("no node with 4 free cores", b, 8);
    ck_assert_str_eq (b, "no node");
}
END_TEST

/* 100 nodes: by state and the busiest, unless every node is asked for. */
START_TEST (test_many_nodes)
{
    json_t *nodes = json_array ();
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf (name, sizeof (name), "nid%06d", i);
        int used = i < 10 ? 128 : i < 30 ? i : 0;
        json_array_append_new (nodes, json_pack ("{s:s s:i s:i s:i s:i}", "name", name, "ncores",
                                                 128, "cores_free", 128 - used, "gpus", 0,
                                                 "gpus_free", 0));
    }
    json_t *st = json_pack ("{s:{s:o}}", "allocation", "nodes", nodes);
    char *t = render_in (st, 0, 0, false);
    HAS (t, "nodes 100 \u00b7 cores 12800 (");
    HAS (t, "by state: 10 full \u00b7 20 partly held \u00b7 70 idle");
    HAS (t, "BUSIEST ");
    HAS (t, "\nnid000000      128/128 ");
    HAS (t, "\nnid000004      128/128 ");
    ck_assert_ptr_null (strstr (t, "nid000005 "));
    HAS (t, "... 95 more nodes\n");
    free (t);
    t = render_in (st, 0, 0, true);
    ck_assert_ptr_null (strstr (t, "by state"));
    HAS (t, "\nnid000099      0/128 ");
    ck_assert_ptr_null (strstr (t, "more nodes"));
    free (t);
    json_decref (st);
    /* all idle: no busiest rows at all */
    nodes = json_array ();
    for (int i = 0; i < 40; i++)
        json_array_append_new (nodes, json_pack ("{s:s s:i s:i}", "name", "n", "ncores", 4,
                                                 "cores_free", 4));
    st = json_pack ("{s:{s:o}}", "allocation", "nodes", nodes);
    t = render_in (st, 0, 0, false);
    HAS (t, "by state: 0 full \u00b7 0 partly held \u00b7 40 idle");
    ck_assert_ptr_null (strstr (t, "BUSIEST"));
    free (t);
    json_decref (st);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("status_view");
    TCase *tc = tcase_create ("view");
    tcase_add_test (tc, test_full);
    tcase_add_test (tc, test_time_left);
    tcase_add_test (tc, test_login_node_header);
    tcase_add_test (tc, test_tally_from_leases);
    tcase_add_test (tc, test_empty);
    tcase_add_test (tc, test_one_held_core_shows);
    tcase_add_test (tc, test_fits_window);
    tcase_add_test (tc, test_short_why);
    tcase_add_test (tc, test_many_nodes);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
