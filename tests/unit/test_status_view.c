/* berth status for people, from recorded status replies. */
#include <jansson.h>
#include <string.h>

#include "status_view.h"
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
    HAS (t, "1        ocean_ec30to60       256 cores on 2 nodes, 8000 MB  3m10s    "
            "no 2 nodes with 128 free cores (best: 64, 0)\n");
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
    suite_add_tcase (s, tc);
    return run_suite (s);
}
