/* SPDX-License-Identifier: MIT */
/* berthd's objects that stand alone, each on an event loop of the test's:
 * the events log (lines to the sink at once and to the file a few
 * milliseconds later, this run's range for a replay, a rotated log started
 * anew, the last lines written on destroy); the job's end (known at once
 * without a job or from SLURM_JOB_END_TIME, else asked of a fake squeue on
 * a thread, with the known callback once it answers); and systemd's
 * notifications (nothing without NOTIFY_SOCKET, the status text on a
 * socket of the test's with it). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "events.h"
#include "jobend.h"
#include "notify.h"
#include "testutil.h"

static char dir[64];
static struct event_base *base;
static berth_error_t err;

static void setup (void)
{
    snprintf (dir, sizeof (dir), "/tmp/berth-objs-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    base = event_base_new ();
    ck_assert_ptr_nonnull (base);
}

static void teardown (void)
{
    char cmd[128];
    event_base_free (base);
    snprintf (cmd, sizeof (cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq (system (cmd), 0);
}

/* Run the loop for ms milliseconds. */
static void run_for (int ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    event_base_loopexit (base, &tv);
    event_base_dispatch (base);
}

static char *slurp (const char *name);

/* Run the loop until the file holds want, for at most 10 s: a bound no
 * loaded machine reaches, not a measure of how soon the flush comes. */
static void run_until_file (const char *name, const char *want)
{
    for (int i = 0; i < 1000 && strcmp (slurp (name), want) != 0; i++)
        run_for (10);
    ck_assert_str_eq (slurp (name), want);
}

/* name in the test's directory (two at a time) */
static const char *path_in (const char *name)
{
    static char path[2][128];
    static int k;
    k = !k;
    snprintf (path[k], sizeof (path[k]), "%s/%s", dir, name);
    return path[k];
}

static char *slurp (const char *name)
{
    static char buf[4096];
    FILE *f = fopen (path_in (name), "r");
    ck_assert_ptr_nonnull (f);
    size_t n = fread (buf, 1, sizeof (buf) - 1, f);
    fclose (f);
    buf[n] = '\0';
    return buf;
}

static void put (const char *name, const char *text)
{
    FILE *f = fopen (path_in (name), "w");
    ck_assert_ptr_nonnull (f);
    fputs (text, f);
    fclose (f);
}

/* ---- events ---- */

struct sink {
    char text[4096];
    int lines;
};

static void sink_cb (void *arg, const char *line, size_t len)
{
    struct sink *s = arg;
    size_t have = strlen (s->text);
    ck_assert_uint_lt (have + len, sizeof (s->text));
    memcpy (s->text + have, line, len);
    s->text[have + len] = '\0';
    s->lines++;
}

static char *history (struct events *ev, off_t *off, size_t *len)
{
    static char buf[4096];
    int fd;
    ck_assert_int_eq (events_history (ev, &fd, off, len), 0);
    if (*len == 0) {
        ck_assert_int_eq (fd, -1);
        return NULL;
    }
    ck_assert_int_ge (fd, 0);
    ck_assert_uint_lt (*len, sizeof (buf));
    ck_assert_int_eq (pread (fd, buf, *len, *off), (ssize_t) *len);
    close (fd);
    buf[*len] = '\0';
    return buf;
}

START_TEST (events_sink_then_file)
{
    struct sink s = { "", 0 };
    off_t off;
    size_t len;
    put ("events.jsonl", "{\"event\":\"before\"}\n");
    struct events *ev = events_create (base, dir, 0, &err);
    ck_assert_ptr_nonnull (ev);
    events_set_sink (ev, sink_cb, &s);
    ck_assert_ptr_null (history (ev, &off, &len));   /* nothing this run */
    events_emit (ev, json_pack ("{s:s s:i}", "event", "one", "n", 1));
    char *line = strdup ("{\"event\":\"two\"}\n");
    events_emit_line (ev, line, strlen (line));
    /* the sink at once, the file once the 5 ms have passed */
    ck_assert_str_eq (s.text, "{\"event\":\"one\",\"n\":1}\n"
                              "{\"event\":\"two\"}\n");
    ck_assert_int_eq (s.lines, 2);
    ck_assert_str_eq (slurp ("events.jsonl"), "{\"event\":\"before\"}\n");
    run_until_file ("events.jsonl", "{\"event\":\"before\"}\n"
                    "{\"event\":\"one\",\"n\":1}\n{\"event\":\"two\"}\n");
    /* the replay is this run's part only */
    ck_assert_str_eq (history (ev, &off, &len),
                      "{\"event\":\"one\",\"n\":1}\n{\"event\":\"two\"}\n");
    ck_assert_int_eq (off, (off_t) strlen ("{\"event\":\"before\"}\n"));
    events_destroy (ev);
}
END_TEST

START_TEST (events_history_flushes_and_destroy_writes)
{
    off_t off;
    size_t len;
    struct events *ev = events_create (base, dir, 0, &err);
    ck_assert_ptr_nonnull (ev);
    events_emit (ev, json_pack ("{s:s}", "event", "a"));
    /* no loop ran: the history asks for a flush first */
    ck_assert_str_eq (history (ev, &off, &len), "{\"event\":\"a\"}\n");
    ck_assert_int_eq (off, 0);
    events_emit (ev, json_pack ("{s:s}", "event", "b"));
    events_destroy (ev);
    ck_assert_str_eq (slurp ("events.jsonl"),
                      "{\"event\":\"a\"}\n{\"event\":\"b\"}\n");
}
END_TEST

START_TEST (events_reopen_after_rotation)
{
    char from[128], to[128];
    off_t off;
    size_t len;
    struct events *ev = events_create (base, dir, 0, &err);
    ck_assert_ptr_nonnull (ev);
    events_emit (ev, json_pack ("{s:s}", "event", "old"));
    events_flush (ev);
    /* reopening the same file keeps this run's history */
    events_reopen (ev);
    ck_assert_str_eq (history (ev, &off, &len), "{\"event\":\"old\"}\n");
    snprintf (from, sizeof (from), "%s/events.jsonl", dir);
    snprintf (to, sizeof (to), "%s/events.jsonl.1", dir);
    ck_assert_int_eq (rename (from, to), 0);
    events_reopen (ev);
    ck_assert_ptr_null (history (ev, &off, &len));
    events_emit (ev, json_pack ("{s:s}", "event", "new"));
    ck_assert_str_eq (history (ev, &off, &len), "{\"event\":\"new\"}\n");
    ck_assert_int_eq (off, 0);
    ck_assert_str_eq (slurp ("events.jsonl.1"), "{\"event\":\"old\"}\n");
    events_destroy (ev);
}
END_TEST

/* Past its bound the log is kept as events.jsonl.1 and a new one begins
 * with the allocation line; a log renamed away by hand (SIGHUP) too. */
START_TEST (events_bounded)
{
    int ids[2] = { 0, 1 };
    struct allocation_node nd = { .name = "n1", .core_ids = ids, .ncores = 2 };
    struct allocation a = { .job_id = "7", .nodes = &nd, .nnodes = 1 };
    off_t off;
    size_t len;
    struct events *ev = events_create (base, dir, 300, &err);
    ck_assert_ptr_nonnull (ev);
    events_allocation (ev, &a, "m");
    events_flush (ev);
    char first[256];
    snprintf (first, sizeof (first), "%s", slurp ("events.jsonl"));
    ck_assert_ptr_nonnull (strstr (first, "\"event\":\"allocation\""));
    size_t head = strlen (first);
    ck_assert_uint_lt (head, 150);
    int n = 0;
    while (access (path_in ("events.jsonl.1"), F_OK) != 0) {
        ck_assert_int_lt (n, 100);
        events_emit (ev, json_pack ("{s:s s:i}", "event", "e", "n", n++));
        events_flush (ev);
    }
    /* the kept file: the allocation line, then every event so far */
    const char *kept = slurp ("events.jsonl.1");
    ck_assert_uint_ge (strlen (kept), 300);
    ck_assert (!strncmp (kept, first, head));
    char last[64];
    snprintf (last, sizeof (last), "{\"event\":\"e\",\"n\":%d}\n", n - 1);
    ck_assert_str_eq (kept + strlen (kept) - strlen (last), last);
    /* the new one: the allocation line alone, and the history is it */
    ck_assert_str_eq (slurp ("events.jsonl"), first);
    ck_assert_str_eq (history (ev, &off, &len), first);
    ck_assert_int_eq (off, 0);
    events_emit (ev, json_pack ("{s:s}", "event", "after"));
    events_flush (ev);
    ck_assert_str_eq (slurp ("events.jsonl") + head, "{\"event\":\"after\"}\n");
    /* renamed away by hand, reopened: the new file starts the same way */
    ck_assert_int_eq (rename (path_in ("events.jsonl"), path_in ("events.jsonl.2")), 0);
    events_reopen (ev);
    ck_assert_str_eq (slurp ("events.jsonl"), first);
    events_destroy (ev);
}
END_TEST

START_TEST (events_without_a_log)
{
    int fd;
    off_t off;
    size_t len;
    char missing[128];
    snprintf (missing, sizeof (missing), "%s/nowhere", dir);
    ck_assert_ptr_null (events_create (base, missing, 0, &err));
    ck_assert_ptr_nonnull (strstr (err.text, "cannot open the events log"));
    /* NULL drops what it is given */
    events_emit (NULL, json_pack ("{s:s}", "event", "x"));
    events_emit_line (NULL, strdup ("{}\n"), 3);
    events_flush (NULL);
    events_reopen (NULL);
    ck_assert_int_eq (events_history (NULL, &fd, &off, &len), -1);
    events_destroy (NULL);
}
END_TEST

/* ---- jobend ---- */

static int known_calls;

static void known_cb (void *arg)
{
    known_calls++;
    event_base_loopbreak (arg);
}

static struct proto_acquire acquire_for (double duration)
{
    struct proto_acquire a;
    memset (&a, 0, sizeof (a));
    a.duration = duration;
    a.step.label = "sim";
    return a;
}

START_TEST (jobend_without_a_job)
{
    struct allocation a = { .system = BERTH_SYSTEM_SINGLE_NODE };
    char warn[256];
    unsetenv ("SLURM_JOB_END_TIME");
    known_calls = 0;
    struct jobend *je = jobend_create (base, &a, DEADLINE_REFUSE, known_cb,
                                       base, &err);
    ck_assert_ptr_nonnull (je);
    ck_assert (jobend_ready (je));      /* known at once to be unknown */
    ck_assert (jobend_get (je) < 0);
    struct proto_acquire acq = acquire_for (1e6);
    ck_assert_int_eq (jobend_admit (je, &acq, warn, sizeof (warn), &err), 0);
    ck_assert_str_eq (warn, "");
    json_t *st = json_object ();
    ck_assert_int_eq (jobend_status (je, st), 0);
    ck_assert (json_is_null (json_object_get (st, "job_end")));
    ck_assert (json_is_null (json_object_get (st, "time_left_s")));
    ck_assert (json_is_null (json_object_get (st, "job_end_source")));
    ck_assert_str_eq (json_string_value (json_object_get (st,
                      "deadline_policy")), "refuse");
    json_decref (st);
    ck_assert_int_eq (known_calls, 0);
    jobend_destroy (je);
    jobend_destroy (NULL);
}
END_TEST

START_TEST (jobend_from_the_environment)
{
    struct allocation a = { .system = BERTH_SYSTEM_SLURM,
                            .job_id = (char *) "42" };
    char warn[256], end[32];
    double when = (double) (long) now_wall () + 600;
    snprintf (end, sizeof (end), "%.0f", when);
    setenv ("SLURM_JOB_END_TIME", end, 1);
    struct jobend *je = jobend_create (base, &a, DEADLINE_REFUSE, NULL, NULL,
                                       &err);
    ck_assert_ptr_nonnull (je);
    /* a status shows it without anyone asking */
    json_t *st = json_object ();
    ck_assert_int_eq (jobend_status (je, st), 0);
    ck_assert (json_real_value (json_object_get (st, "job_end")) == when);
    ck_assert_str_eq (json_string_value (json_object_get (st,
                      "job_end_source")), "SLURM_JOB_END_TIME");
    json_decref (st);
    ck_assert (jobend_ready (je));
    ck_assert (jobend_get (je) == when);
    struct proto_acquire fits = acquire_for (60), late = acquire_for (3600);
    ck_assert_int_eq (jobend_admit (je, &fits, warn, sizeof (warn), &err), 0);
    ck_assert_int_eq (jobend_admit (je, &late, warn, sizeof (warn), &err), -1);
    ck_assert_str_eq (err.code, "unsatisfiable");
    jobend_destroy (je);
    /* warn: admitted, with the warning (the end learnt first, as a
     * request that states a duration does) */
    je = jobend_create (base, &a, DEADLINE_WARN, NULL, NULL, &err);
    ck_assert (jobend_ready (je));
    ck_assert_int_eq (jobend_admit (je, &late, warn, sizeof (warn), &err), 0);
    ck_assert_str_ne (warn, "");
    jobend_destroy (je);
    unsetenv ("SLURM_JOB_END_TIME");
}
END_TEST

/* A squeue of the test's first on PATH: script is its body. */
static void fake_squeue (const char *script)
{
    char path[128], env[4200];
    snprintf (path, sizeof (path), "%s/squeue", dir);
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    fprintf (f, "#!/bin/sh\n%s\n", script);
    fclose (f);
    ck_assert_int_eq (chmod (path, 0755), 0);
    snprintf (env, sizeof (env), "%s:%s", dir, getenv ("PATH"));
    setenv ("PATH", env, 1);
    unsetenv ("SLURM_JOB_END_TIME");
}

START_TEST (jobend_asks_once_on_a_thread)
{
    struct allocation a = { .system = BERTH_SYSTEM_SLURM,
                            .job_id = (char *) "42" };
    char log[160], cmd[320];
    snprintf (log, sizeof (log), "%s/asked", dir);
    snprintf (cmd, sizeof (cmd), "echo \"$*\" >> %s; sleep 0.2; "
              "echo 2030-01-01T00:00:00", log);
    fake_squeue (cmd);
    known_calls = 0;
    struct jobend *je = jobend_create (base, &a, DEADLINE_REFUSE, known_cb,
                                       base, &err);
    ck_assert_ptr_nonnull (je);
    /* a status never asks */
    json_t *st = json_object ();
    ck_assert_int_eq (jobend_status (je, st), 0);
    ck_assert (json_is_null (json_object_get (st, "job_end")));
    json_decref (st);
    ck_assert (!jobend_ready (je));
    ck_assert (!jobend_ready (je));     /* still asking: not asked again */
    ck_assert (jobend_get (je) < 0);
    struct timeval limit = { 10, 0 };
    event_base_loopexit (base, &limit);
    event_base_dispatch (base);
    ck_assert_int_eq (known_calls, 1);
    ck_assert (jobend_ready (je));
    ck_assert (jobend_get (je) > now_wall ());
    st = json_object ();
    ck_assert_int_eq (jobend_status (je, st), 0);
    ck_assert_str_eq (json_string_value (json_object_get (st,
                      "job_end_source")), "squeue");
    json_decref (st);
    ck_assert_str_eq (slurp ("asked"), "-h -j 42 -o %e\n");
    jobend_destroy (je);
}
END_TEST

START_TEST (jobend_failed_query_is_known_unknown)
{
    struct allocation a = { .system = BERTH_SYSTEM_SLURM,
                            .job_id = (char *) "42" };
    fake_squeue ("echo 'slurm_load_jobs error' >&2; exit 1");
    known_calls = 0;
    struct jobend *je = jobend_create (base, &a, DEADLINE_REFUSE, known_cb,
                                       base, &err);
    ck_assert (!jobend_ready (je));
    struct timeval limit = { 10, 0 };
    event_base_loopexit (base, &limit);
    event_base_dispatch (base);
    ck_assert_int_eq (known_calls, 1);
    ck_assert (jobend_ready (je));
    ck_assert (jobend_get (je) < 0);
    jobend_destroy (je);
}
END_TEST

START_TEST (jobend_destroyed_while_asking)
{
    struct allocation a = { .system = BERTH_SYSTEM_SLURM,
                            .job_id = (char *) "42" };
    fake_squeue ("sleep 0.3; echo 2030-01-01T00:00:00");
    known_calls = 0;
    struct jobend *je = jobend_create (base, &a, DEADLINE_REFUSE, known_cb,
                                       base, &err);
    ck_assert (!jobend_ready (je));
    jobend_destroy (je);
    run_for (500);           /* the thread answers no one */
    ck_assert_int_eq (known_calls, 0);
}
END_TEST

/* ---- notify ---- */

static int status_calls;

static void status_cb (void *arg, char *buf, size_t size)
{
    status_calls++;
    snprintf (buf, size, "%s, call %d", (const char *) arg, status_calls);
}

START_TEST (notify_without_systemd)
{
    unsetenv ("NOTIFY_SOCKET");
    status_calls = 0;
    struct notify *n = notify_create (base, status_cb, "x", &err);
    ck_assert_ptr_nonnull (n);
    notify_ready (n);
    notify_status_soon (n);
    notify_stopping (n);
    /* without systemd nothing is armed: no timer could ever call back */
    ck_assert_int_eq (event_base_get_num_events (base, EVENT_BASE_COUNT_ADDED),
                      0);
    ck_assert_int_eq (event_base_loop (base, EVLOOP_NONBLOCK), 1);
    ck_assert_int_eq (status_calls, 0);
    notify_destroy (n);
    notify_ready (NULL);
    notify_status_soon (NULL);
    notify_stopping (NULL);
    notify_destroy (NULL);
}
END_TEST

static void recv_text (int fd, char *buf, size_t size)
{
    ssize_t r = recv (fd, buf, size - 1, 0);
    ck_assert_int_gt (r, 0);
    buf[r] = '\0';
}

START_TEST (notify_sends_status)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    char buf[512], want[128];
    snprintf (sa.sun_path, sizeof (sa.sun_path), "%s/notify", dir);
    int fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (bind (fd, (struct sockaddr *) &sa, sizeof (sa)), 0);
    struct timeval tmo = { 5, 0 };
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof (tmo));
    setenv ("NOTIFY_SOCKET", sa.sun_path, 1);
    unsetenv ("WATCHDOG_USEC");
    status_calls = 0;
    struct notify *n = notify_create (base, status_cb, "leases", &err);
    ck_assert_ptr_nonnull (n);
    notify_ready (n);
    recv_text (fd, buf, sizeof (buf));
    snprintf (want, sizeof (want), "READY=1\nMAINPID=%d\nSTATUS=leases, "
              "call 1", (int) getpid ());
    ck_assert_str_eq (buf, want);
    /* twice soon is one status, not before half a second (a lower bound:
     * a slow machine only makes it later) */
    double t0 = now_mono ();
    notify_status_soon (n);
    notify_status_soon (n);
    ck_assert_int_eq (status_calls, 1);
    while (status_calls < 2 && now_mono () - t0 < 10)
        ck_assert_int_ge (event_base_loop (base, EVLOOP_ONCE), 0);
    ck_assert_int_eq (status_calls, 2);
    ck_assert_double_ge (now_mono () - t0, 0.45);
    recv_text (fd, buf, sizeof (buf));
    ck_assert_str_eq (buf, "STATUS=leases, call 2");
    /* and only one: nothing is armed any more */
    ck_assert_int_eq (event_base_loop (base, EVLOOP_NONBLOCK), 1);
    ck_assert_int_eq (status_calls, 2);
    notify_stopping (n);
    recv_text (fd, buf, sizeof (buf));
    ck_assert_str_eq (buf, "STOPPING=1\nSTATUS=leases, call 3");
    notify_destroy (n);
    unsetenv ("NOTIFY_SOCKET");
    close (fd);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("daemon_objects");
    TCase *tc = tcase_create ("events");
    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, events_sink_then_file);
    tcase_add_test (tc, events_history_flushes_and_destroy_writes);
    tcase_add_test (tc, events_reopen_after_rotation);
    tcase_add_test (tc, events_without_a_log);
    tcase_add_test (tc, events_bounded);
    suite_add_tcase (s, tc);
    tc = tcase_create ("jobend");
    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, jobend_without_a_job);
    tcase_add_test (tc, jobend_from_the_environment);
    tcase_add_test (tc, jobend_asks_once_on_a_thread);
    tcase_add_test (tc, jobend_failed_query_is_known_unknown);
    tcase_add_test (tc, jobend_destroyed_while_asking);
    suite_add_tcase (s, tc);
    tc = tcase_create ("notify");
    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, notify_without_systemd);
    tcase_add_test (tc, notify_sends_status);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
