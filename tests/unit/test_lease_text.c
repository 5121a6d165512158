/* SPDX-License-Identifier: MIT */
/* The lease object written as text by berthd is the codec's object: the
 * same JSON as proto_lease_json for leases of every kind, strings escaped
 * alike, reals written alike; bad input refused. */
#include <string.h>

#include "grant_json.h"
#include "journal_file.h"
#include "lease_text.h"
#include "journal_record.h"
#include "testutil.h"

static int cores0[] = { 0, 1, 2, 3 }, cores1[] = { 8, 9, 10, 11 };
static int gids[] = { 0, 1 };

static struct proto_lease base (void)
{
    static struct placement_node nodes[2];
    nodes[0] = (struct placement_node) { .name = "nid001", .cores = cores0, .ncores = 4 };
    nodes[1] = (struct placement_node) { .name = "nid002", .cores = cores1, .ncores = 4 };
    struct proto_lease l;
    proto_lease_init (&l);
    l.id = "L17";
    l.placement = (struct placement) { .nodes = nodes, .nnodes = 1 };
    l.memory_cap = -1;
    l.budget_mb = -1;
    l.granted = -1;
    return l;
}

/* The text (with env spliced in when there is one) equals the codec's. */
static void same_as_codec (const struct proto_lease *l)
{
    struct lease_text t;
    ck_assert_int_eq (lease_text_build (l, &t), 0);
    size_t len;
    char *line = lease_text_line (&t, "{", true, "}", &len);
    ck_assert_ptr_nonnull (line);
    ck_assert_uint_eq (strlen (line), len);
    ck_assert_int_eq (line[len - 1], '\n');
    json_error_t je;
    json_t *mine = json_loads (line, JSON_REJECT_DUPLICATES, &je);
    ck_assert_msg (mine != NULL, "not JSON: %s: %s", je.text, line);
    json_t *theirs = proto_lease_json (l);
    ck_assert_ptr_nonnull (theirs);
    char *want = json_dumps (theirs, JSON_COMPACT | JSON_SORT_KEYS);
    char *got = json_dumps (mine, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_msg (json_equal (mine, theirs), "text %s\ncodec %s", got, want);
    /* reals are written as jansson writes them, to the digit */
    if (l->granted >= 0) {
        const char *x = strstr (line, "\"granted\":"), *y = strstr (want,
                                                               "\"granted\":");
        ck_assert (x && y);
        size_t nx = strcspn (x, ",}"), ny = strcspn (y, ",}");
        ck_assert_msg (nx == ny && !memcmp (x, y, nx), "%.*s vs %.*s",
                       (int) nx, x, (int) ny, y);
    }
    free (want);
    free (got);
    json_decref (mine);
    json_decref (theirs);
    free (line);
    lease_text_free (&t);
}

START_TEST (plain_lease)
{
    struct proto_lease l = base ();
    same_as_codec (&l);
}
END_TEST

START_TEST (full_lease)
{
    struct proto_lease l = base ();
    char *argv[] = { "srun", "--nodes=2", "./a.out", "x\"y\\z\n\t\x01", NULL };
    char *unset[] = { "SLURM_CPU_BIND" };
    struct env_set_item set[] = { { "OMP_NUM_THREADS", "4" },
                                  { "CUDA_VISIBLE_DEVICES", "0,1" },
                                  { "OMP_NUM_THREADS", "8" } };
    struct env_set_item env[] = { { "BERTH_LEASE", "L17" },
                                  { "BERTH_CORES", "0-3" } };
    l.label = "ocean \"qu240\" caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8c\x8a/";
    l.placement.nnodes = 2;
    l.placement.gpus = 2;
    l.placement.gpu_ids = gids;
    l.placement.ngpu_ids = 2;
    l.memory_cap = 8000;
    l.budget_mb = 16000;
    l.launch = (struct launch) { argv, 4, unset, 1, set, 3 };
    l.env = env;
    l.nenv = 2;
    l.owner_pid = 31337;
    l.granted = 1754300000.25;
    same_as_codec (&l);
    /* GPUs whose indices are not known are null */
    l.placement.gpu_ids = NULL;
    l.placement.ngpu_ids = 0;
    l.granted = 1754300000.0;
    same_as_codec (&l);
}
END_TEST

START_TEST (splicing)
{
    struct proto_lease l = base ();
    struct env_set_item env[] = { { "BERTH_LEASE", "L17" } };
    l.env = env;
    l.nenv = 1;
    struct lease_text t;
    ck_assert_int_eq (lease_text_build (&l, &t), 0);
    size_t len;
    char *a = lease_text_line (&t, "{\"id\":7,\"ok\":true,", false, "}", &len);
    ck_assert_ptr_null (strstr (a, "\"env\""));
    ck_assert_ptr_nonnull (strstr (a, "{\"id\":7,\"ok\":true,\"lease\":\"L17\""));
    json_t *j = json_loads (a, 0, NULL);
    ck_assert_ptr_nonnull (j);
    json_decref (j);
    free (a);
    char *b = lease_text_line (&t, "{\"lease\":{", true, "}}", &len);
    ck_assert_ptr_nonnull (strstr (b, ",\"env\":{\"BERTH_LEASE\":\"L17\"}}}\n"));
    free (b);
    lease_text_free (&t);
}
END_TEST

START_TEST (reals)
{
    const double v[] = { 0, 5, 1754300000.25, 1796006811.1807859, 1e300,
                         1.5e-7, 123456789012345678.0 };
    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        char buf[40];
        json_real_text (v[i], buf, sizeof (buf));
        json_t *r = json_real (v[i]);
        char *want = json_dumps (r, JSON_ENCODE_ANY);
        ck_assert_str_eq (buf, want);
        free (want);
        json_decref (r);
    }
}
END_TEST

/* Wall-clock times take a path of their own: the same digits as printf's
 * %.17g (and jansson's) for times of every kind, ties and carries too. */
START_TEST (time_reals)
{
    double v[4096];
    size_t n = 0;
    v[n++] = 1e9;
    v[n++] = 9999999999.9999981;
    v[n++] = 9999999999.99999995;       /* rounds up to 11 digits */
    v[n++] = 1754300000.0;
    v[n++] = 1754300000.99999995;
    v[n++] = 1796014631.6934187;
    /* exact ties at the seventh decimal: odd multiples of 1/256 */
    for (int j = 1; j < 512 && n < 1024; j += 2)
        v[n++] = 1796014631.0 + j / 512.0;
    for (int j = 1; j < 256 && n < 1200; j += 2)
        v[n++] = 8589934591.0 + j / 256.0;    /* just under 2^33 */
    unsigned x = 12345;
    while (n < sizeof (v) / sizeof (v[0])) {
        x = x * 1103515245u + 12345u;
        double frac = (x >> 8) / 16777216.0;
        v[n] = 1e9 + (double) (x % 9000u) * 1e6 + frac * 1e6;
        n++;
    }
    for (size_t i = 0; i < n; i++) {
        char buf[40], want[40];
        json_real_text (v[i], buf, sizeof (buf));
        json_t *r = json_real (v[i]);
        char *j = json_dumps (r, JSON_ENCODE_ANY);
        snprintf (want, sizeof (want), "%s", j);
        free (j);
        json_decref (r);
        ck_assert_msg (!strcmp (buf, want), "%.20g: %s, jansson %s", v[i], buf,
                       want);
    }
}
END_TEST

/* The release path's lines are the codec's too. */
START_TEST (release_lines)
{
    const char *labels[] = { NULL, "plain", "with \"quotes\" and \xc3\xa9" };
    json_t *ids[] = { json_integer (12), json_string ("req-\"7\""), NULL };
    for (int i = 0; i < 3; i++) {
        size_t len;
        char *line = released_event_line (1754300100.5, "L17", labels[i],
                                          i ? "disconnected" : NULL, &len);
        ck_assert_ptr_nonnull (line);
        ck_assert_uint_eq (strlen (line), len);
        json_t *mine = json_loads (line, JSON_REJECT_DUPLICATES, NULL);
        json_t *theirs = proto_event_released (1754300100.5, "L17", labels[i],
                                               i ? "disconnected" : NULL);
        ck_assert_msg (json_equal (mine, theirs), "%s", line);
        json_decref (mine);
        json_decref (theirs);
        free (line);
        line = release_reply_line (ids[i], "L17", &len);
        mine = json_loads (line, JSON_REJECT_DUPLICATES, NULL);
        theirs = proto_release_reply (ids[i], "L17");
        ck_assert_msg (json_equal (mine, theirs), "%s", line);
        json_decref (mine);
        json_decref (theirs);
        free (line);
        json_decref (ids[i]);
    }
    size_t len;
    ck_assert_ptr_null (released_event_line (0, NULL, NULL, NULL, &len));
    ck_assert_ptr_null (released_event_line (0, "L1", "bad \xff", NULL, &len));
    ck_assert_ptr_null (release_reply_line (NULL, NULL, &len));
}
END_TEST

/* The journal's records written as text are the records journal.c once
 * built as JSON (the shape, the lease without its env, what it holds), and
 * a restart reads the same ledger lease back from them. */
static void same_grant_record (const struct proto_lease *l,
                               const struct grant_record_facts *g)
{
    struct lease_text t;
    ck_assert_int_eq (lease_text_build (l, &t), 0);
    size_t len;
    char *line = grant_record_line (&t, g, &len);
    ck_assert_ptr_nonnull (line);
    ck_assert_uint_eq (strlen (line), len);
    ck_assert_int_eq (line[len - 1], '\n');
    ck_assert_ptr_null (memchr (line, '\n', len - 1));
    json_error_t je;
    json_t *mine = json_loads (line, JSON_REJECT_DUPLICATES, &je);
    ck_assert_msg (mine != NULL, "not JSON: %s: %s", je.text, line);
    /* the journal never keeps the env (lease_env builds it again) */
    ck_assert_ptr_null (strstr (line, "\"env\":"));
    struct proto_lease without_env = *l;
    without_env.env = NULL;
    without_env.nenv = 0;
    json_t *theirs = json_pack (
        "{s:s s:I s:f s:o s:s s:b s:o s:i s:i s:I s:i s:o s:o}", "op", "grant",
        "id", (json_int_t) g->id, "time", l->granted,
        "shape", journal_shape_json (g->shape), "layout", g->layout,
        "detached", g->detached, "expires", g->expires >= 0
                                            ? json_real (g->expires)
                                            : json_null (),
        "owner", g->owner, "peer_pid", g->peer_pid,
        "peer_start", (json_int_t) g->peer_start, "uid", g->uid,
        "lease", proto_lease_json (&without_env), "held", journal_held_json (g->held));
    ck_assert_ptr_nonnull (theirs);
    /* written only where there is one: journals before it have none */
    if (g->owner_start)
        json_object_set_new (theirs, "owner_start",
                             json_integer ((json_int_t) g->owner_start));
    if (g->expires >= 0 && g->expires_boot >= 0 && g->boot_id) {
        json_object_set_new (theirs, "expires_boot", json_real (g->expires_boot));
        json_object_set_new (theirs, "boot_id", json_string (g->boot_id));
    }
    char *want = json_dumps (theirs, JSON_COMPACT | JSON_SORT_KEYS);
    char *got = json_dumps (mine, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_msg (json_equal (mine, theirs), "text %s\njson %s", got, want);
    /* what a restart makes of it */
    berth_error_t err;
    struct ledger_lease *back = journal_grant_lease (mine, &err);
    ck_assert_msg (back != NULL, "%s", err.text);
    ck_assert_int_eq (back->nnodes, g->held->nnodes);
    for (int i = 0; i < back->nnodes; i++) {
        ck_assert_int_eq (back->nodes[i].node, g->held->nodes[i].node);
        ck_assert_int_eq (back->nodes[i].ngpus, g->held->nodes[i].ngpus);
        ck_assert_int_eq (back->nodes[i].memory, g->held->nodes[i].memory);
        ck_assert_int_eq (back->nodes[i].ncores, l->placement.nodes[i].ncores);
    }
    ck_assert_int_eq (back->shape.cores, g->shape->cores);
    ck_assert_int_eq (back->shape.budget, g->shape->budget);
    free (back);
    free (want);
    free (got);
    json_decref (mine);
    json_decref (theirs);
    free (line);
    lease_text_free (&t);
}

START_TEST (journal_records)
{
    struct proto_lease l = base ();
    int g0[] = { 0, 1 }, none[1] = { 0 };
    struct ledger_lease_node held[2] = { { 3, cores0, 4, g0, 2, 8000 },
                                         { 4, cores1, 4, none, 0, 0 } };
    struct ledger_lease ll = { .id = 17, .nodes = held, .nnodes = 1 };
    struct step_shape shape = { false, 1, 4, 4, 0, -1, 184, false, false };
    struct grant_record_facts g = {
        .id = 17, .shape = &shape, .layout = "cpu_binding", .detached = false,
        .expires = -1, .expires_boot = -1, .owner = 0, .peer_pid = 4242,
        .uid = 1000,
        .peer_start = 123456789, .held = &ll,
    };
    l.granted = 1754300000.25;
    l.budget_mb = 184;
    struct env_set_item env[] = { { "BERTH_LEASE", "L17" },
                                  { "BERTH_CORES", "0-3" } };
    l.env = env;
    l.nenv = 2;
    same_grant_record (&l, &g);
    /* detached with a ttl and an owner, spanning two nodes, an MPI step with
     * a launch line, no env */
    char *argv[] = { "srun", "-n", "8", "./a.out", NULL };
    struct env_set_item set[] = { { "OMP_NUM_THREADS", "1" } };
    l.launch = (struct launch) { argv, 4, NULL, 0, set, 1 };
    l.env = NULL;
    l.nenv = 0;
    l.placement.nnodes = 2;
    l.placement.gpus = 2;
    l.placement.gpu_ids = gids;
    l.placement.ngpu_ids = 2;
    l.memory_cap = 8000;
    l.owner_pid = 999;
    l.label = "a \"label\"";
    ll.nnodes = 2;
    shape = (struct step_shape) { true, 8, 1, 8, 2, 8000, 8000, true, false };
    g.layout = "scheduler";
    g.detached = true;
    g.expires = 1754303600.5;
    g.owner = 999;
    g.owner_start = 987654321;
    g.expires_boot = 3600.25;
    g.boot_id = "5c1b0c8e-7a3f-4a51-9d0e-2f6b8c9d1e2a";
    same_grant_record (&l, &g);
    /* refused: no text, no ledger lease */
    struct lease_text t = { 0 };
    size_t len;
    ck_assert_ptr_null (grant_record_line (&t, &g, &len));
    ck_assert_int_eq (lease_text_build (&l, &t), 0);
    g.held = NULL;
    ck_assert_ptr_null (grant_record_line (&t, &g, &len));
    lease_text_free (&t);

    const char *reasons[] = { "released", "owner_exited", "odd \"why\"\n" };
    for (int i = 0; i < 3; i++) {
        char when[40];
        json_real_text (1754300100.125 + i, when, sizeof (when));
        char *line = release_record_line (17, when, reasons[i], &len);
        ck_assert_ptr_nonnull (line);
        ck_assert_uint_eq (strlen (line), len);
        json_t *mine = json_loads (line, JSON_REJECT_DUPLICATES, NULL);
        json_t *theirs = json_pack ("{s:s s:I s:f s:s}", "op", "release",
                                    "id", (json_int_t) 17, "time",
                                    1754300100.125 + i, "reason", reasons[i]);
        ck_assert_msg (json_equal (mine, theirs), "%s", line);
        json_decref (mine);
        json_decref (theirs);
        free (line);
    }
    ck_assert_ptr_null (release_record_line (1, NULL, "released", &len));
    ck_assert_ptr_null (release_record_line (1, "1.0", NULL, &len));
    ck_assert_ptr_null (release_record_line (1, "1.0", "bad \xff", &len));
    /* the event shares the release's time text */
    char *ev = released_event_line_at ("1754300100.125", "L17", NULL,
                                       "released", &len);
    ck_assert_ptr_nonnull (strstr (ev, "\"time\":1754300100.125,"));
    free (ev);
    ck_assert_ptr_null (released_event_line_at (NULL, "L17", NULL, NULL, &len));
}
END_TEST

/* A wait record carries the request as its client sent it, spliced in:
 * what json_pack would write, the request member an object equal to the
 * request; without one, no request member. */
START_TEST (wait_lines)
{
    const char *req = "{\"op\":\"acquire\",\"id\":7,\"cores\":2,"
                      "\"label\":\"a \\\"q\\\"\"}";
    size_t len = 0;
    for (int i = 0; i < 2; i++) {
        char *line = wait_record_line (9, 1754300100.5, 4242, 123456789, 1000,
                                       i ? NULL : req, &len);
        ck_assert_ptr_nonnull (line);
        ck_assert_uint_eq (strlen (line), len);
        ck_assert_int_eq (line[len - 1], '\n');
        json_t *mine = json_loads (line, JSON_REJECT_DUPLICATES, NULL);
        json_t *theirs = json_pack ("{s:s s:I s:f s:i s:I s:i}", "op", "wait",
                                    "id", (json_int_t) 9, "time", 1754300100.5,
                                    "peer_pid", 4242, "peer_start",
                                    (json_int_t) 123456789, "uid", 1000);
        if (!i)
            json_object_set_new (theirs, "request", json_loads (req, 0, NULL));
        ck_assert_msg (json_equal (mine, theirs), "%s", line);
        json_decref (mine);
        json_decref (theirs);
        free (line);
    }
}
END_TEST

/* The acquire reply is the codec's (proto_acquire_reply) with the warning
 * as a member, whatever its length; the granted event carries the lease at
 * the grant's time. */
START_TEST (grant_reply_and_event)
{
    struct proto_lease l = base ();
    l.label = "a \"quoted\" step";
    l.granted = 1700000000.25;
    struct lease_text t;
    ck_assert_int_eq (lease_text_build (&l, &t), 0);
    char warning[3000];
    memset (warning, 'w', sizeof (warning) - 1);
    warning[sizeof (warning) - 1] = '\0';
    memcpy (warning, "ends \"late\"\n", 12);
    const char *warnings[] = { NULL, "runs past the job's end", warning };
    const char *ids[] = { NULL, "42", "\"req-1\"" };
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        char *line = grant_reply_line (&t, ids[i], warnings[i], false, &len);
        ck_assert_ptr_nonnull (line);
        ck_assert_uint_eq (strlen (line), len);
        json_error_t je;
        json_t *got = json_loads (line, JSON_REJECT_DUPLICATES, &je);
        ck_assert_msg (got != NULL, "not JSON: %s: %.200s", je.text, line);
        json_t *id = ids[i] ? json_loads (ids[i], JSON_DECODE_ANY, NULL)
                            : json_null ();
        json_t *want = proto_acquire_reply (id, &l);
        ck_assert_ptr_nonnull (want);
        if (warnings[i])
            json_object_set_new (want, "warning", json_string (warnings[i]));
        ck_assert_msg (json_equal (got, want), "%.300s", line);
        json_decref (id);
        json_decref (want);
        json_decref (got);
        free (line);
    }
    size_t len;
    char *ev = granted_event_line (&t, &len);
    ck_assert_ptr_nonnull (ev);
    json_t *e = json_loads (ev, 0, NULL);
    ck_assert_ptr_nonnull (e);
    ck_assert_str_eq (json_string_value (json_object_get (e, "event")),
                      "granted");
    ck_assert (json_real_value (json_object_get (e, "time")) == l.granted);
    ck_assert_str_eq (json_string_value (json_object_get (e, "lease")), "L17");
    ck_assert_ptr_null (json_object_get (e, "env"));
    json_decref (e);
    free (ev);
    lease_text_free (&t);
}
END_TEST

START_TEST (refusals)
{
    struct lease_text t;
    struct proto_lease l = base ();
    l.label = "bad \xc3\x28 utf-8";
    ck_assert_int_eq (lease_text_build (&l, &t), -1);
    ck_assert_ptr_null (t.body);
    l = base ();
    l.label = "surrogate \xed\xa0\x80";
    ck_assert_int_eq (lease_text_build (&l, &t), -1);
    l = base ();
    l.id = NULL;
    ck_assert_int_eq (lease_text_build (&l, &t), -1);
    l = base ();
    l.placement.nnodes = 0;
    ck_assert_int_eq (lease_text_build (&l, &t), -1);
    l = base ();
    struct placement_node nameless = { .cores = cores0, .ncores = 4 };
    l.placement.nodes = &nameless;
    ck_assert_int_eq (lease_text_build (&l, &t), -1);
    l = base ();
    struct env_set_item half[] = { { "X", NULL } };
    l.env = half;
    l.nenv = 1;
    ck_assert_int_eq (lease_text_build (&l, &t), -1);
    lease_text_free (&t);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("lease_text");
    TCase *tc = tcase_create ("lease_text");
    tcase_add_test (tc, plain_lease);
    tcase_add_test (tc, full_lease);
    tcase_add_test (tc, splicing);
    tcase_add_test (tc, reals);
    tcase_add_test (tc, time_reals);
    tcase_add_test (tc, release_lines);
    tcase_add_test (tc, wait_lines);
    tcase_add_test (tc, journal_records);
    tcase_add_test (tc, grant_reply_and_event);
    tcase_add_test (tc, refusals);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
