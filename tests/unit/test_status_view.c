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

/* the text cut short: check cannot carry a long message */
#define HAS(text, want) ck_assert_msg (strstr (text, want), "missing [%s] in:\n%.3000s", want, text)

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

/* ---- brief replies: berthd's person's view of a big job ----------------- */

#define JOB_CORES 16
#define JOB_GPUS 4
#define JOB_MB 256000

static void bump (json_t *o, const char *k, long long by)
{
    long long v = (long long) json_integer_value (json_object_get (o, k));
    json_object_set_new (o, k, json_integer (v + by));
}

/* A job of nnodes alike nodes, nothing held yet; add_lease and add_waiting
 * fill it and finish adds what berthd derives from that. */
static json_t *job_new (int nnodes)
{
    json_t *nodes = json_array ();
    for (int i = 0; i < nnodes; i++) {
        char name[32];
        snprintf (name, sizeof (name), "nid%04d", i);
        json_array_append_new (nodes, json_pack ("{s:s s:s s:i s:i s:i s:i s:i s:i s:i}",
                                                 "name", name, "cores", "0-15", "ncores",
                                                 JOB_CORES, "gpus", JOB_GPUS, "memory_mb",
                                                 JOB_MB, "cores_used", 0, "gpus_used", 0,
                                                 "memory_budgeted_mb", 0, "leases", 0));
    }
    return json_pack ("{s:s s:{s:s s:s s:s s:o s:{}} s:[] s:[] s:{s:f}}", "server",
                      "berthd 0.1.0", "allocation", "machine", "pm", "system", "slurm",
                      "job_id", "77", "nodes", nodes, "totals", "leases", "queue", "daemon",
                      "uptime_s", 600.0);
}

/* Lease L<id> on n nodes (indices on), cores[k] on the k-th; its GPUs split
 * over them as the view's tally splits them. */
static void add_lease (json_t *st, int id, int n, const int *on, const int *cores, int gpus)
{
    json_t *nodes = json_object_get (json_object_get (st, "allocation"), "nodes");
    json_t *names = json_array (), *ids = json_array ();
    int total = 0;
    for (int k = 0; k < n; k++) {
        json_t *nd = json_array_get (nodes, (size_t) on[k]);
        json_int_t first = json_integer_value (json_object_get (nd, "cores_used"));
        json_t *c = json_array ();
        for (int j = 0; j < cores[k]; j++)
            json_array_append_new (c, json_integer (first + j));
        json_array_append_new (ids, c);
        json_array_append (names, json_object_get (nd, "name"));
        bump (nd, "cores_used", cores[k]);
        bump (nd, "gpus_used", gpus / n + (k < gpus % n));
        bump (nd, "memory_budgeted_mb", 1000 * cores[k]);
        bump (nd, "leases", 1);
        total += cores[k];
    }
    char name[16], label[32];
    snprintf (name, sizeof (name), "L%d", id);
    snprintf (label, sizeof (label), "step_%d", id);
    json_array_append_new (json_object_get (st, "leases"), json_pack (
        "{s:s s:s s:{s:o s:o s:i s:[]} s:n s:i s:f s:s s:i}", "lease", name, "label", label,
        "placement", "nodes", names, "cores", ids, "gpus", gpus, "gpu_ids", "memory_cap",
        "budget_mb", 1000 * total, "age_s", 5000.0 - id, "holder", "connection",
        "peer_pid", 1000 + id));
}

static void add_waiting (json_t *st, int n)
{
    for (int i = 0; i < n; i++) {
        char label[16];
        snprintf (label, sizeof (label), "w%d", i + 1);
        json_array_append_new (json_object_get (st, "queue"), json_pack (
            "{s:i s:s s:s s:f s:s s:i}", "position", i + 1, "label", label, "needs",
            "16 cores", "waited_s", 30.0 + i, "why", "no node with 16 free cores",
            "overtaken", 0));
    }
}

/* What berthd states besides the lists: each node's free figures, the
 * job's totals, the daemon's counts. */
static json_t *finish (json_t *st)
{
    json_t *alloc = json_object_get (st, "allocation");
    json_t *nodes = json_object_get (alloc, "nodes"), *nd;
    long long used = 0, gused = 0, budgeted = 0, leases = 0, full = 0, idle = 0;
    size_t i, nn = json_array_size (nodes);
    json_array_foreach (nodes, i, nd) {
        long long u = (long long) json_integer_value (json_object_get (nd, "cores_used"));
        long long g = (long long) json_integer_value (json_object_get (nd, "gpus_used"));
        long long b = (long long) json_integer_value (json_object_get (nd, "memory_budgeted_mb"));
        long long l = (long long) json_integer_value (json_object_get (nd, "leases"));
        json_object_set_new (nd, "cores_free", json_integer (JOB_CORES - u));
        json_object_set_new (nd, "gpus_free", json_integer (JOB_GPUS - g));
        json_object_set_new (nd, "memory_unbudgeted_mb", json_integer (JOB_MB - b));
        used += u;
        gused += g;
        budgeted += b;
        leases += l;
        full += u == JOB_CORES;
        idle += l == 0;
    }
    long long cores = (long long) nn * JOB_CORES, gpus = (long long) nn * JOB_GPUS;
    long long mem = (long long) nn * JOB_MB;
    json_object_set_new (alloc, "totals", json_pack (
        "{s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I}", "nodes",
        (json_int_t) nn, "cores", (json_int_t) cores, "gpus", (json_int_t) gpus, "leases",
        (json_int_t) leases, "cores_used", (json_int_t) used, "cores_free",
        (json_int_t) (cores - used), "gpus_used", (json_int_t) gused, "gpus_free",
        (json_int_t) (gpus - gused), "nodes_held", (json_int_t) (nn - idle), "nodes_full",
        (json_int_t) full, "nodes_idle", (json_int_t) idle, "nodes_partly",
        (json_int_t) (nn - full - idle), "memory_mb", (json_int_t) mem,
        "memory_budgeted_mb", (json_int_t) budgeted, "memory_unbudgeted_mb",
        (json_int_t) (mem - budgeted)));
    json_t *daemon = json_object_get (st, "daemon");
    json_object_set_new (daemon, "leases", json_integer ((json_int_t) json_array_size (
        json_object_get (st, "leases"))));
    json_object_set_new (daemon, "waiting", json_integer ((json_int_t) json_array_size (
        json_object_get (st, "queue"))));
    return st;
}

static void keep_first (json_t *arr, size_t n)
{
    while (json_array_size (arr) > n)
        json_array_remove (arr, n);
}

/* The brief reply berthd gives for the same job: every node when the job
 * has no more than n, else the n busiest (holding a lease, fewest free cores
 * first, ties in allocation order); the n oldest leases; the first n waiting. */
static json_t *brief_of (const json_t *full, int n)
{
    json_t *b = json_deep_copy (full);
    json_t *alloc = json_object_get (b, "allocation");
    json_t *nodes = json_object_get (alloc, "nodes"), *nd;
    if (json_array_size (nodes) > (size_t) n) {
        json_t *busy = json_array ();
        size_t i;
        for (int free_cores = 0; free_cores <= JOB_CORES; free_cores++)
            json_array_foreach (nodes, i, nd)
                if (json_array_size (busy) < (size_t) n
                    && json_integer_value (json_object_get (nd, "leases")) > 0
                    && json_integer_value (json_object_get (nd, "cores_free")) == free_cores)
                    json_array_append (busy, nd);
        json_object_set_new (alloc, "nodes", busy);
    }
    keep_first (json_object_get (b, "leases"), (size_t) n);
    keep_first (json_object_get (b, "queue"), (size_t) n);
    json_object_set_new (b, "brief", json_integer (n));
    return b;
}

/* The first n lines of t, in a static buffer. */
static const char *head_lines (const char *t, int n)
{
    static char buf[4096];
    const char *e = t;
    for (int i = 0; i < n && e && *e; i++) {
        e = strchr (e, '\n');
        e = e ? e + 1 : NULL;
    }
    size_t len = e ? (size_t) (e - t) : strlen (t);
    ck_assert_uint_lt (len, sizeof (buf));
    memcpy (buf, t, len);
    buf[len] = '\0';
    return buf;
}

/* Where a node row's LEASES column starts (an ASCII view). */
#define LEASES_COLUMN 64

/* full and brief line by line: the same lines but for the LEASES column of
 * node rows, where the brief one names fewer and says how many more;
 * returns how many rows differ so. */
static int same_but_unlisted (const char *full, const char *brief)
{
    int differ = 0;
    ck_assert_int_eq (lines_of (full), lines_of (brief));
    for (const char *a = full, *b = brief; *a && *b;) {
        const char *ea = strchr (a, '\n'), *eb = strchr (b, '\n');
        size_t la = (size_t) (ea - a), lb = (size_t) (eb - b);
        if (la != lb || memcmp (a, b, la)) {
            ck_assert_msg (!strncmp (a, "nid", 3) && la > LEASES_COLUMN && lb > LEASES_COLUMN
                           && !memcmp (a, b, LEASES_COLUMN),
                           "lines differ:\n%.*s\n%.*s", (int) la, a, (int) lb, b);
            bool says = (lb > 6 && !memcmp (eb - 6, " lease", 6))
                        || (lb > 7 && !memcmp (eb - 7, " leases", 7));
            ck_assert_msg (says, "a cut row does not say what is unlisted: %.*s", (int) lb, b);
            differ++;
        }
        a = ea + 1;
        b = eb + 1;
    }
    return differ;
}

/* 60 leases and 70 waiting on jobs of 40 to 200 nodes, some idle: the brief
 * reply (50 rows of each) draws what the full one does, the figures of the
 * whole job, the cut sections' "... N more" and the node summary. */
START_TEST (test_brief_big)
{
    static const int shape[][2] = { { 40, 20 }, { 80, 40 }, { 130, 65 }, { 200, 20 } };
    for (size_t s = 0; s < sizeof (shape) / sizeof (shape[0]); s++) {
        int nnodes = shape[s][0], held = shape[s][1];
        json_t *full = job_new (nnodes);
        for (int i = 0; i < 60; i++) {
            int on = (i * 7) % held, cores = 1 + (i * 5) % 4;
            add_lease (full, i + 1, 1, &on, &cores, i % 2);
        }
        add_waiting (full, 70);
        finish (full);
        json_t *brief = brief_of (full, 50);
        char *tf = render (full, false), *tb = render (brief, false);
        char want[128];
        /* header, totals and nodes by state: the whole job's */
        ck_assert_str_eq (head_lines (tb, 3), head_lines (tf, 3));
        snprintf (want, sizeof (want), "\nnodes %d \u00b7 cores %d (", nnodes,
                  nnodes * JOB_CORES);
        HAS (tb, want);
        HAS (tb, " idle (--nodes all: a row each)\nBUSIEST ");
        snprintf (want, sizeof (want), "\n... %d more nodes\n", nnodes - STATUS_VIEW_BUSIEST);
        HAS (tb, want);
        HAS (tb, "\n... 10 more leases (berth status --json lists them all)\n");
        HAS (tb, "\n70 waiting \u00b7 next: 'w1', no node with 16 free cores\n");
        HAS (tb, "\n... 20 more waiting\n");
        int differ = same_but_unlisted (tf, tb);
        /* 40 nodes: the busiest hold leases past the 50 oldest */
        if (nnodes == 40)
            ck_assert_int_eq (differ, 3);
        free (tf);
        free (tb);
        json_decref (brief);
        json_decref (full);
    }
}
END_TEST

/* 4 nodes, 3 leases, 2 waiting: a brief reply holds everything, and draws
 * byte for byte what the full one does, in a window too; a briefer one
 * says what it leaves out. */
START_TEST (test_brief_small)
{
    json_t *full = job_new (4);
    add_lease (full, 1, 1, (const int[]) { 0 }, (const int[]) { 4 }, 0);
    add_lease (full, 2, 2, (const int[]) { 0, 1 }, (const int[]) { 2, 2 }, 2);
    add_lease (full, 3, 2, (const int[]) { 0, 2 }, (const int[]) { 1, 3 }, 0);
    add_waiting (full, 2);
    finish (full);
    json_t *brief = brief_of (full, 50);
    char *tf = render (full, false), *tb = render (brief, false);
    ck_assert_str_eq (tb, tf);
    HAS (tf, "\nnid0000        7/16      ####.... 1/4       7000/256000         "
             "step_1 (4), step_2 (2), step_3 (1)\n");
    free (tf);
    free (tb);
    tf = render_in (full, 80, 12, false);
    tb = render_in (brief, 80, 12, false);
    ck_assert_str_eq (tb, tf);
    free (tf);
    free (tb);
    json_decref (brief);
    /* one row each: nid0000 alone (the busiest), one lease of its three */
    tf = render (full, false);
    brief = brief_of (full, 1);
    tb = render (brief, false);
    ck_assert_str_eq (head_lines (tb, 2), head_lines (tf, 2));
    HAS (tb, "\nnid0000        7/16      ####.... 1/4       7000/256000         "
             "step_1 (4), +2 leases\n");
    HAS (tb, "\n... 3 more nodes\n");
    HAS (tb, "\n... 2 more leases (berth status --json lists them all)\n");
    HAS (tb, "\n2 waiting \u00b7 next: 'w1', no node with 16 free cores\n");
    HAS (tb, "\n... 1 more waiting\n");
    free (tb);
    json_decref (brief);
    /* two rows each: nid0002's only lease is not listed */
    brief = brief_of (full, 2);
    tb = render (brief, false);
    ck_assert_str_eq (head_lines (tb, 2), head_lines (tf, 2));
    HAS (tb, "\nnid0000        7/16      ####.... 1/4       7000/256000         "
             "step_1 (4), step_2 (2), +1 lease\n");
    HAS (tb, "\nnid0002        3/16      ##...... 0/4       3000/256000         1 lease\n");
    ck_assert_ptr_null (strstr (tb, "nid0001 "));
    HAS (tb, "\n... 2 more nodes\n");
    HAS (tb, "\n... 1 more leases (berth status --json lists them all)\n");
    free (tb);
    free (tf);
    json_decref (brief);
    json_decref (full);
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
    tcase_add_test (tc, test_brief_big);
    tcase_add_test (tc, test_brief_small);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
