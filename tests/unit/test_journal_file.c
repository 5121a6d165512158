/* SPDX-License-Identifier: MIT */
/* The journal file: reading back the live grants and the next id; a torn or
 * unreadable LAST line dropped with a warning; damage before the last line
 * refused with the file, the line number and what was wrong; appends that
 * fail leave whole lines only (RLIMIT_FSIZE makes writes fail); the atomic
 * rewrite; grant records <-> ledger leases. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "grant_json.h"
#include "journal_file.h"
#include "testutil.h"

static berth_error_t err;
static char dir[64], path[128];

static void setup (void)
{
    snprintf (dir, sizeof (dir), "/tmp/berth-jf-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (path, sizeof (path), "%s/journal.jsonl", dir);
}

static void teardown (void)
{
    char cmd[128];
    snprintf (cmd, sizeof (cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq (system (cmd), 0);
}

static void put (const char *text)
{
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    fputs (text, f);
    fclose (f);
}

static off_t file_size (const char *p)
{
    struct stat st;
    ck_assert_int_eq (stat (p, &st), 0);
    return st.st_size;
}

#define START "{\"op\":\"start\",\"job\":\"42\",\"local_node\":0," \
              "\"nodes\":[{\"name\":\"a\"}]}\n"
#define GRANT(id, cores) "{\"op\":\"grant\",\"id\":" #id ",\"shape\":" \
    "{\"mpi\":false,\"ntasks\":1,\"cpus_per_task\":2,\"cores\":2,\"gpus\":0," \
    "\"memory\":-1,\"budget\":-1,\"may_span\":false,\"local\":false}," \
    "\"layout\":\"cpu_binding\",\"lease\":{\"placement\":{\"cores\":[" cores \
    "]}},\"held\":[{\"node\":0,\"gpus\":[],\"memory\":0}]}\n"
#define RELEASE(id) "{\"op\":\"release\",\"id\":" #id "}\n"

static void reads (const char *text, struct journal_contents *jc)
{
    put (text);
    ck_assert_msg (journal_read (path, jc, &err) == 0, "%s", err.text);
}

static void damaged (const char *text, const char *line, const char *what)
{
    struct journal_contents jc;
    put (text);
    ck_assert_int_eq (journal_read (path, &jc, &err), -1);
    ck_assert_msg (strstr (err.text, path), "no path in '%s'", err.text);
    ck_assert_msg (strstr (err.text, line), "'%s' lacks '%s'", err.text, line);
    ck_assert_msg (strstr (err.text, what), "'%s' lacks '%s'", err.text, what);
    ck_assert_ptr_null (jc.start);
    ck_assert_ptr_null (jc.live);
}

static json_int_t live_id (const struct journal_contents *jc, size_t i)
{
    return json_integer_value (json_object_get (json_array_get (jc->live, i),
                                                "id"));
}

/* journal_rewrite_text with the records as the journal writes them: one
 * compact JSON line each. No ck_assert here: test_full_disk calls it under
 * an RLIMIT_FSIZE that check's own message file must not run into. */
static int rewrite_records (const char *path, json_t *const *recs, size_t n,
                            int *fd, off_t *size, berth_error_t *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&text, &len);
    bool ok = f != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        char *line = proto_line (recs[i]);
        ok = line && fputs (line, f) >= 0;
        free (line);
    }
    if (f && fclose (f) != 0)
        ok = false;
    int rc = ok ? journal_rewrite_text (path, text, len, fd, size, err)
                : errprintf (err, "out of memory");
    free (text);
    return rc;
}

START_TEST (test_read_live_and_next_id)
{
    struct journal_contents jc;
    ck_assert_int_eq (journal_read (path, &jc, &err), 0);   /* missing */
    ck_assert_ptr_null (jc.start);
    ck_assert_uint_eq (jc.next_id, 1);
    ck_assert_int_eq (jc.records, 0);
    journal_contents_free (&jc);

    const char *text = START GRANT (1, "[0,1]") GRANT (2, "[2,3]") RELEASE (1)
                       GRANT (5, "[0,1]");
    reads (text, &jc);
    ck_assert_ptr_nonnull (jc.start);
    ck_assert_int_eq (json_array_size (jc.live), 2);
    ck_assert_int_eq (live_id (&jc, 0), 2);
    ck_assert_int_eq (live_id (&jc, 1), 5);
    ck_assert_int_eq (jc.live_lines[0], 3);
    ck_assert_int_eq (jc.live_lines[1], 5);
    ck_assert_uint_eq (jc.next_id, 6);
    ck_assert_int_eq (jc.records, 5);
    ck_assert_int_eq (jc.good, (off_t) strlen (text));
    ck_assert_str_eq (jc.warning, "");
    journal_contents_free (&jc);

    /* a compacted journal: its start record carries the next id */
    reads ("{\"op\":\"start\",\"job\":null,\"local_node\":0,\"next_id\":100,"
           "\"nodes\":[{}]}\n" GRANT (7, "[0,1]"), &jc);
    ck_assert_uint_eq (jc.next_id, 100);
    ck_assert_int_eq (json_array_size (jc.live), 1);
    journal_contents_free (&jc);
}
END_TEST

START_TEST (test_torn_last_line)
{
    struct journal_contents jc;
    const char *whole = START GRANT (1, "[0,1]") GRANT (2, "[2,3]");
    char text[4096];
    /* cut short by a crash: no newline */
    snprintf (text, sizeof (text), "%s{\"op\":\"grant\",\"id\":3,\"sha", whole);
    reads (text, &jc);
    ck_assert_int_eq (json_array_size (jc.live), 2);
    ck_assert_int_eq (jc.good, (off_t) strlen (whole));
    ck_assert_int_eq (jc.records, 3);
    ck_assert_msg (strstr (jc.warning, "line 4") && strstr (jc.warning, path)
                   && strstr (jc.warning, "without a newline"), "%s",
                   jc.warning);
    journal_contents_free (&jc);
    /* a whole last line that does not parse */
    snprintf (text, sizeof (text), "%s{\"op\":\"rel\x01" "ease\n", whole);
    reads (text, &jc);
    ck_assert_int_eq (json_array_size (jc.live), 2);
    ck_assert_msg (strstr (jc.warning, "line 4")
                   && strstr (jc.warning, "not valid JSON"), "%s", jc.warning);
    journal_contents_free (&jc);
    /* a last line that is JSON but no object */
    snprintf (text, sizeof (text), "%s[1]\n", whole);
    reads (text, &jc);
    ck_assert_msg (strstr (jc.warning, "not a JSON object"), "%s", jc.warning);
    journal_contents_free (&jc);
    /* the start record itself torn: an empty journal */
    reads ("{\"op\":\"sta", &jc);
    ck_assert_ptr_null (jc.start);
    ck_assert_int_eq (jc.good, 0);
    ck_assert_msg (strstr (jc.warning, "line 1"), "%s", jc.warning);
    journal_contents_free (&jc);
}
END_TEST

START_TEST (test_damaged_middle)
{
    damaged (START GRANT (1, "[0,1]") "{\"op\":\"grant\",\"id\":2,\"sha\n"
             RELEASE (1), "line 3", "not valid JSON");
    damaged (START "\n" GRANT (1, "[0,1]"), "line 2", "not valid JSON");
    damaged (START "[1,2]\n" GRANT (1, "[0,1]"), "line 2", "not a JSON object");
    damaged (START GRANT (1, "[0,1]") "{\"op\":\"grant\",\"id\":2,\"id\":3}\n"
             RELEASE (1), "line 3", "duplicate");
    damaged (GRANT (1, "[0,1]") RELEASE (1), "line 1", "must be the start record");
    damaged ("{\"op\":\"start\",\"job\":42}\n" GRANT (1, "[0,1]"), "line 1",
             "the start record needs");
    damaged (START START GRANT (1, "[0,1]"), "line 2", "unknown record op \"start\"");
    damaged (START "{\"op\":\"frobnicate\"}\n" GRANT (1, "[0,1]"), "line 2",
             "unknown record op \"frobnicate\"");
    damaged (START GRANT (4, "[0,1]") GRANT (3, "[2,3]") RELEASE (4), "line 3",
             "grants L3 after L4");
    damaged (START GRANT (1, "[0,1]") RELEASE (2) RELEASE (1), "line 3",
             "releases L2, which is not held");
    damaged (START GRANT (1, "[0,1]") RELEASE (1) RELEASE (1), "line 4",
             "releases L1, which is not held");
    damaged (START "{\"op\":\"release\"}\n" RELEASE (1), "line 2",
             "needs an integer id");
    damaged (START "{\"op\":\"grant\",\"id\":1}\n" RELEASE (1), "line 2",
             "a grant record needs");
    damaged (START GRANT (1, "[0,1],[2,3]") RELEASE (1), "line 2",
             "do not match one to one");
    damaged (START GRANT (1, "[0,-1]") RELEASE (1), "line 2",
             "not a non-negative integer");
    damaged (START GRANT (1, "[]") RELEASE (1), "line 2", "no core list");
    damaged (START GRANT (0, "[0,1]") RELEASE (1), "line 2", "not positive");
    /* the advice says what to do */
    damaged (START "\n" GRANT (1, "[0,1]"), "line 2",
             "move the state directory aside");
}
END_TEST

START_TEST (test_append_and_rewrite)
{
    off_t size = 0;
    bool torn = false;
    int fd = open (path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (journal_append (fd, path, &size, json_loads (
                          START, 0, NULL), &torn, &err), 0);
    for (int i = 1; i <= 3; i++) {
        char line[1024];
        snprintf (line, sizeof (line), GRANT (%d, "[0,1]"), i);
        ck_assert_int_eq (journal_append (fd, path, &size, json_loads (
                              line, 0, NULL), &torn, &err), 0);
        if (i < 3)
            ck_assert_int_eq (journal_append (fd, path, &size, json_pack (
                                  "{s:s s:i}", "op", "release", "id", i),
                                  &torn, &err), 0);
    }
    ck_assert_int_eq (file_size (path), size);
    close (fd);
    struct journal_contents jc;
    ck_assert_int_eq (journal_read (path, &jc, &err), 0);
    ck_assert_int_eq (jc.records, 6);
    ck_assert_int_eq (json_array_size (jc.live), 1);

    /* rewritten as the start record and the live grant */
    json_t *recs[2] = { json_copy (jc.start), json_incref (json_array_get (
                                                  jc.live, 0)) };
    json_object_set_new (recs[0], "next_id", json_integer ((json_int_t) jc.next_id));
    journal_contents_free (&jc);
    ck_assert_int_eq (rewrite_records (path, recs, 2, &fd, &size, &err), 0);
    ck_assert_int_eq (file_size (path), size);
    ck_assert_int_eq (journal_append (fd, path, &size, json_pack (
                          "{s:s s:i}", "op", "release", "id", 3), &torn,
                          &err), 0);
    close (fd);
    ck_assert_int_eq (journal_read (path, &jc, &err), 0);
    ck_assert_int_eq (jc.records, 3);
    ck_assert_int_eq (json_array_size (jc.live), 0);
    ck_assert_uint_eq (jc.next_id, 4);
    journal_contents_free (&jc);
    char tmp[160];
    snprintf (tmp, sizeof (tmp), "%s.tmp", path);
    ck_assert_int_eq (access (tmp, F_OK), -1);

    /* a rewrite that cannot even start leaves the journal alone */
    char nowhere[160];
    snprintf (nowhere, sizeof (nowhere), "%s/no/such/dir/journal.jsonl", dir);
    ck_assert_int_eq (rewrite_records (nowhere, recs, 2, &fd, &size, &err), -1);
    ck_assert_msg (strstr (err.text, "cannot create") && strstr (err.text,
                   "No such file"), "%s", err.text);
    json_decref (recs[0]);
    json_decref (recs[1]);
    ck_assert_int_eq (journal_read (path, &jc, &err), 0);
    ck_assert_int_eq (jc.records, 3);
    journal_contents_free (&jc);
}
END_TEST

/* A full disk, as a file size limit: the failed append is cut back off, so
 * the journal still reads whole; the message names the file and the reason.
 * A rewrite that does not fit leaves the old journal and no temporary. */
START_TEST (test_full_disk)
{
    signal (SIGXFSZ, SIG_IGN);
    off_t size = 0;
    bool torn = false;
    int fd = open (path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (journal_append (fd, path, &size, json_loads (
                          START, 0, NULL), &torn, &err), 0);
    /* Only the soft limit, raised again before asserting: check's own
     * files must not hit it. */
    struct rlimit old, rl;
    ck_assert_int_eq (getrlimit (RLIMIT_FSIZE, &old), 0);
    rl = old;
    rl.rlim_cur = 2000;
    ck_assert_int_eq (setrlimit (RLIMIT_FSIZE, &rl), 0);
    int granted = 0, rc = 0;
    for (int i = 1; i < 100 && rc == 0; i++) {
        char line[1024];
        snprintf (line, sizeof (line), GRANT (%d, "[0,1]"), i);
        rc = journal_append (fd, path, &size, json_loads (line, 0, NULL),
                             &torn, &err);
        granted += rc == 0;
    }
    berth_error_t append_err = err;
    off_t after_append = file_size (path);
    /* a rewrite as big as the journal fits; a bigger one does not */
    struct journal_contents jc;
    int read_rc = journal_read (path, &jc, &err);
    size_t nlive = jc.live ? json_array_size (jc.live) : 0;
    json_t **recs = calloc (nlive + 40, sizeof (*recs));
    recs[0] = json_incref (jc.start);
    for (size_t i = 0; i < nlive; i++)
        recs[i + 1] = json_incref (json_array_get (jc.live, i));
    char warning[sizeof (jc.warning)];
    snprintf (warning, sizeof (warning), "%s", jc.warning);
    journal_contents_free (&jc);
    int nfd = -1, nfd2 = -1;
    off_t nsize = 0, nsize2 = 0;
    int rw1 = rewrite_records (path, recs, nlive + 1, &nfd, &nsize, &err);
    json_t *big = json_pack ("{s:s s:i s:s}", "op", "grant", "id", 999, "pad",
                             "................................................"
                             "................................................");
    for (int i = 0; i < 38; i++)
        recs[nlive + 1 + i] = big;
    int rw2 = rewrite_records (path, recs, nlive + 39, &nfd2, &nsize2, &err);
    ck_assert_int_eq (setrlimit (RLIMIT_FSIZE, &old), 0);

    ck_assert_int_eq (rc, -1);
    ck_assert_int_gt (granted, 0);
    ck_assert_msg (!torn, "the partial line was cut off");
    ck_assert_msg (strstr (append_err.text, path) && strstr (append_err.text,
                   strerror (EFBIG)), "%s", append_err.text);
    ck_assert_int_eq (after_append, size);
    ck_assert_int_le (size, 2000);
    ck_assert_int_eq (read_rc, 0);
    ck_assert_int_eq (nlive, granted);
    ck_assert_str_eq (warning, "");
    ck_assert_int_eq (rw1, 0);
    ck_assert_int_eq (rw2, -1);
    ck_assert_msg (strstr (err.text, strerror (EFBIG)), "%s", err.text);
    ck_assert_int_eq (file_size (path), nsize);
    char tmp[160];
    snprintf (tmp, sizeof (tmp), "%s.tmp", path);
    ck_assert_int_eq (access (tmp, F_OK), -1);
    for (size_t i = 0; i <= nlive; i++)
        json_decref (recs[i]);
    json_decref (big);
    free (recs);
    close (nfd);
    close (fd);
}
END_TEST

/* A ledger lease -> "held" and placement cores -> the same ledger lease. */
START_TEST (test_grant_lease_round_trip)
{
    static int ids[16];
    static const char *names[] = { "a", "b" };
    struct ledger_node_spec spec[2];
    for (int i = 0; i < 16; i++)
        ids[i] = i;
    for (int i = 0; i < 2; i++)
        spec[i] = (struct ledger_node_spec) { names[i], ids, 16, 2, 8000 };
    struct ledger *l = ledger_create (spec, 2, 0, &err);
    ck_assert_ptr_nonnull (l);
    struct step_shape sh = { .mpi = true, .ntasks = 24, .cpus_per_task = 1,
                             .cores = 24, .gpus = 3, .memory = -1,
                             .budget = 6000, .may_span = true };
    uint64_t id;
    ck_assert_int_eq (ledger_acquire (l, &sh, LEDGER_SCHEDULER, &id, NULL, 0,
                                      &err), 0);
    const struct ledger_lease *ll = ledger_lease_find (l, id);
    ck_assert_int_eq (ll->nnodes, 2);
    json_t *cores = json_array ();
    for (int i = 0; i < ll->nnodes; i++) {
        json_t *c = json_array ();
        for (int j = 0; j < ll->nodes[i].ncores; j++)
            json_array_append_new (c, json_integer (ll->nodes[i].cores[j]));
        json_array_append_new (cores, c);
    }
    json_t *rec = json_pack ("{s:s s:I s:o s:s s:{s:{s:o}} s:o}", "op", "grant",
                             "id", (json_int_t) id, "shape",
                             journal_shape_json (&ll->shape), "layout",
                             journal_layout_name (ll->layout), "lease",
                             "placement", "cores", cores, "held",
                             journal_held_json (ll));
    ck_assert_ptr_nonnull (rec);
    struct ledger_lease *back = journal_grant_lease (rec, &err);
    ck_assert_msg (back != NULL, "%s", err.text);
    ck_assert_uint_eq (back->id, id);
    ck_assert_int_eq (back->layout, LEDGER_SCHEDULER);
    ck_assert_mem_eq (&back->shape, &ll->shape, sizeof (sh));
    ck_assert_int_eq (back->nnodes, ll->nnodes);
    for (int i = 0; i < ll->nnodes; i++) {
        ck_assert_int_eq (back->nodes[i].node, ll->nodes[i].node);
        ck_assert_int_eq (back->nodes[i].memory, ll->nodes[i].memory);
        ck_assert_int_eq (back->nodes[i].ncores, ll->nodes[i].ncores);
        ck_assert_int_eq (back->nodes[i].ngpus, ll->nodes[i].ngpus);
        ck_assert_mem_eq (back->nodes[i].cores, ll->nodes[i].cores,
                          ll->nodes[i].ncores * sizeof (int));
        ck_assert_mem_eq (back->nodes[i].gpus, ll->nodes[i].gpus,
                          ll->nodes[i].ngpus * sizeof (int));
    }
    /* restored into a fresh ledger, it holds the same */
    struct ledger *r = ledger_create (spec, 2, 0, &err);
    ck_assert_int_eq (ledger_restore (r, back, &err), 0);
    ck_assert_int_eq (ledger_check_invariants (r, &err), 0);
    free (back);
    /* a bad layout and a bad shape are named */
    json_object_set_new (rec, "layout", json_string ("diagonal"));
    ck_assert_ptr_null (journal_grant_lease (rec, &err));
    ck_assert_msg (strstr (err.text, "layout 'diagonal'"), "%s", err.text);
    json_object_set_new (rec, "layout", json_string ("scheduler"));
    json_object_del (json_object_get (rec, "shape"), "cores");
    ck_assert_ptr_null (journal_grant_lease (rec, &err));
    ck_assert_msg (strstr (err.text, "shape"), "%s", err.text);
    json_decref (rec);
    ledger_destroy (l);
    ledger_destroy (r);
}
END_TEST

/* The records around a restart: reclaim (a new holder for a live grant),
 * wait and unwait (requests in the queue), and a grant that ends a wait. */
#define WAIT(id, t) "{\"op\":\"wait\",\"id\":" #id ",\"time\":" #t \
    ",\"peer_pid\":42,\"peer_start\":777,\"uid\":1000}\n"
START_TEST (test_restart_records)
{
    struct journal_contents jc;
    const char *text = START GRANT (1, "[0,1]")
        "{\"op\":\"reclaim\",\"id\":1,\"time\":5.5,\"peer_pid\":99,"
        "\"peer_start\":1234}\n"
        WAIT (1, 10.0) WAIT (2, 11.0) WAIT (3, 12.0)
        "{\"op\":\"unwait\",\"id\":2,\"time\":13.0}\n";
    reads (text, &jc);
    ck_assert_int_eq (json_array_size (jc.live), 1);
    json_t *g = json_array_get (jc.live, 0);
    ck_assert_int_eq (json_integer_value (json_object_get (g, "peer_pid")), 99);
    ck_assert_int_eq (json_integer_value (json_object_get (g, "peer_start")), 1234);
    ck_assert_int_eq (json_array_size (jc.waits), 2);
    ck_assert_int_eq (json_integer_value (json_object_get (
                          json_array_get (jc.waits, 0), "id")), 1);
    ck_assert_int_eq (json_integer_value (json_object_get (
                          json_array_get (jc.waits, 1), "id")), 3);
    ck_assert_uint_eq (jc.next_wait, 4);
    journal_contents_free (&jc);

    /* a grant that ends wait 1 */
    char buf[2048];
    snprintf (buf, sizeof (buf), "%s%s%s", START WAIT (1, 10.0),
              GRANT (1, "[0,1]"), "");
    char *at = strstr (buf, "\"held\"");
    ck_assert_ptr_nonnull (at);
    memmove (at + 9, at, strlen (at) + 1);
    memcpy (at, "\"wait\":1,", 9);
    reads (buf, &jc);
    ck_assert_int_eq (json_array_size (jc.live), 1);
    ck_assert_int_eq (json_array_size (jc.waits), 0);
    ck_assert_uint_eq (jc.next_wait, 2);
    journal_contents_free (&jc);

    /* each is read strictly, with the line named */
    damaged (START GRANT (1, "[0,1]") "{\"op\":\"reclaim\",\"id\":2,"
             "\"peer_pid\":9,\"peer_start\":0}\n" GRANT (2, "[2,3]"),
             "line 3", "reclaims L2, which is not held");
    damaged (START "{\"op\":\"reclaim\",\"id\":1}\n" GRANT (1, "[0,1]"),
             "line 2", "reclaim record needs");
    damaged (START WAIT (1, 1.0) WAIT (1, 2.0) GRANT (1, "[0,1]"), "line 3",
             "wait 1 is already waiting");
    damaged (START "{\"op\":\"unwait\",\"id\":7}\n" GRANT (1, "[0,1]"),
             "line 2", "ends wait 7, which is not waiting");
    damaged (START "{\"op\":\"wait\",\"id\":0,\"time\":1}\n"
             GRANT (1, "[0,1]"), "line 2", "a wait record needs");
    /* the request it carries is an object (the acquire as sent) */
    damaged (START "{\"op\":\"wait\",\"id\":1,\"time\":1.0,\"peer_pid\":9,"
             "\"peer_start\":0,\"uid\":0,\"request\":\"acquire\"}\n"
             GRANT (1, "[0,1]"), "line 2", "has a \"request\" that is not an "
             "object");
    reads (START "{\"op\":\"wait\",\"id\":1,\"time\":1.0,\"peer_pid\":9,"
           "\"peer_start\":0,\"uid\":0,\"request\":{\"op\":\"acquire\","
           "\"id\":3,\"cores\":1}}\n" GRANT (1, "[0,1]"), &jc);
    ck_assert_int_eq (json_array_size (jc.waits), 1);
    ck_assert_ptr_nonnull (json_object_get (json_array_get (jc.waits, 0),
                                            "request"));
    journal_contents_free (&jc);
}
END_TEST

/* The ids a local step reported (op placed) go with its grant record, read
 * back apart from the grant's own (which the ledger keeps). */
#define PLACED(id, cores, gpus) "{\"op\":\"placed\",\"id\":" #id \
    ",\"time\":3.5,\"placed\":{\"cores\":" cores ",\"gpu_ids\":" gpus "}}\n"
START_TEST (test_placed_records)
{
    struct journal_contents jc;
    reads (START GRANT (1, "[0,1]") PLACED (1, "[6,7]", "[]"), &jc);
    ck_assert_int_eq (json_array_size (jc.live), 1);
    json_t *g = json_array_get (jc.live, 0);
    json_t *cores = json_object_get (json_object_get (g, "placed"), "cores");
    ck_assert_int_eq (json_array_size (cores), 2);
    ck_assert_int_eq (json_integer_value (json_array_get (cores, 0)), 6);

    /* put into a lease's placement: its one node's cores, nothing else */
    int ids[2] = { 0, 1 };
    struct placement_node node = { .name = (char *) "a", .cores = ids, .ncores = 2 };
    struct placement p = { .nodes = &node, .nnodes = 1 };
    berth_error_t err;
    ck_assert_int_eq (journal_placed_ids (g, &p, &err), 1);
    ck_assert_int_eq (ids[0], 6);
    ck_assert_int_eq (ids[1], 7);
    /* a record without: 0, unchanged */
    json_t *bare = json_deep_copy (g);
    json_object_del (bare, "placed");
    ck_assert_int_eq (journal_placed_ids (bare, &p, &err), 0);
    ck_assert_int_eq (ids[0], 6);
    /* a count other than the lease's, or an unknown key: refused, unchanged */
    json_object_set_new (bare, "placed", json_pack ("{s:[i] s:[]}", "cores", 3,
                                                    "gpu_ids"));
    ck_assert_int_eq (journal_placed_ids (bare, &p, &err), -1);
    ck_assert_msg (strstr (err.text, "names 1 cores and 0 GPUs")
                   && strstr (err.text, "holds 2 and 0"), "%s", err.text);
    json_object_set_new (bare, "placed", json_pack ("{s:[i,i] s:[] s:i}",
                                                    "cores", 3, 4, "gpu_ids",
                                                    "extra", 1));
    ck_assert_int_eq (journal_placed_ids (bare, &p, &err), -1);
    ck_assert_msg (strstr (err.text, "exactly"), "%s", err.text);
    json_object_set_new (bare, "placed", json_pack ("{s:[i,i] s:[]}", "cores",
                                                    3, -4, "gpu_ids"));
    ck_assert_int_eq (journal_placed_ids (bare, &p, &err), -1);
    ck_assert_int_eq (ids[0], 6);
    ck_assert_int_eq (ids[1], 7);
    json_decref (bare);
    journal_contents_free (&jc);

    /* a compaction writes it with the grant; a later report replaces it */
    reads (START GRANT (1, "[0,1]") PLACED (1, "[6,7]", "[]")
           PLACED (1, "[4,5]", "[]"), &jc);
    cores = json_object_get (json_object_get (json_array_get (jc.live, 0),
                                              "placed"), "cores");
    ck_assert_int_eq (json_integer_value (json_array_get (cores, 0)), 4);
    journal_contents_free (&jc);

    damaged (START PLACED (1, "[6,7]", "[]") GRANT (1, "[0,1]"), "line 2",
             "places L1, which is not held");
    damaged (START GRANT (1, "[0,1]") "{\"op\":\"placed\",\"id\":1}\n",
             "line 3", "a placed record needs");
}
END_TEST

/* A journal that is no file is refused at once: a FIFO there held the
 * start until a writer came (issue 24, finding 11). */
START_TEST (test_not_a_file)
{
    struct journal_contents jc;
    berth_error_t err;
    ck_assert_int_eq (mkfifo (path, 0600), 0);
    ck_assert_int_eq (journal_read (path, &jc, &err), -1);
    ck_assert_msg (strstr (err.text, "is a FIFO, not a regular file")
                   && strstr (err.text, path), "%s", err.text);
    unlink (path);
    ck_assert_int_eq (mkdir (path, 0700), 0);
    ck_assert_int_eq (journal_read (path, &jc, &err), -1);
    ck_assert_msg (strstr (err.text, "is a directory"), "%s", err.text);
    rmdir (path);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("journal_file");
    TCase *tc = tcase_create ("journal_file");
    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_read_live_and_next_id);
    tcase_add_test (tc, test_torn_last_line);
    tcase_add_test (tc, test_damaged_middle);
    tcase_add_test (tc, test_append_and_rewrite);
    tcase_add_test (tc, test_full_disk);
    tcase_add_test (tc, test_grant_lease_round_trip);
    tcase_add_test (tc, test_restart_records);
    tcase_add_test (tc, test_placed_records);
    tcase_add_test (tc, test_not_a_file);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
