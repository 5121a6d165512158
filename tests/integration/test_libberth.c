/* SPDX-License-Identifier: MIT */
/* libberth, through its public header and shared library only, against a
 * real berthd ($BERTHD) started for this suite on a socket of its own. */
#include <berth/berth.h>
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/berth-libberth-XXXXXX";
static char sock[256];
static pid_t daemon_pid;
static int ncores;

#define HAS(text, want) ck_assert_msg (strstr (text, want), "missing [%s] in [%s]", want, text)

static void pause_ms (int ms)
{
    struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
    nanosleep (&ts, NULL);
}

static pid_t start_daemon (const char *path, const char *state)
{
    const char *berthd = getenv ("BERTHD");
    pid_t pid = fork ();
    if (pid == 0) {
        freopen ("/dev/null", "w", stdout);
        char errlog[300];
        snprintf (errlog, sizeof (errlog), "%s/d.err", dir);
        freopen (errlog, "a", stderr);
        execl (berthd, berthd, "--socket", path, "--foreground", "--state-dir", state,
               (char *) NULL);
        _exit (127);
    }
    for (int i = 0; i < 500; i++) {      /* until it accepts: at most 10 s */
        berth_client_t *c = berth_connect (path, NULL);
        if (c) {
            berth_close (c);
            return pid;
        }
        pause_ms (20);
    }
    return -1;
}

static void stop_daemon (pid_t pid)
{
    if (pid > 0) {
        kill (pid, SIGTERM);
        waitpid (pid, NULL, 0);
    }
}

static berth_client_t *client (void)
{
    berth_client_error_t err;
    berth_client_t *c = berth_connect (sock, &err);
    ck_assert_msg (c != NULL, "%s: %s", err.code, err.message);
    return c;
}

static berth_request_t *cores_request (int n)
{
    berth_request_t *r = berth_request_new ();
    ck_assert_int_eq (berth_request_set_int (r, "cores", n, NULL), 0);
    return r;
}

static int leases_held (berth_client_t *c)
{
    char *s = berth_status (c, NULL);
    ck_assert_ptr_nonnull (s);
    json_t *o = json_loads (s, 0, NULL);
    int n = (int) json_array_size (json_object_get (o, "leases"));
    json_decref (o);
    free (s);
    return n;
}

static void setup (void)
{
    const char *berthd = getenv ("BERTHD");
    ck_assert_msg (berthd && *berthd, "BERTHD must name berthd");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (sock, sizeof (sock), "%s/b.sock", dir);
    daemon_pid = start_daemon (sock, dir);
    ck_assert_msg (daemon_pid > 0, "berthd did not start (see %s/d.err)", dir);
    berth_client_t *c = client ();
    char *s = berth_resources (c, NULL, NULL);
    json_t *o = s ? json_loads (s, 0, NULL) : NULL;
    ncores = (int) json_integer_value (json_object_get (json_object_get (o, "totals"), "cores"));
    json_decref (o);
    free (s);
    berth_close (c);
    ck_assert_int_gt (ncores, 0);
}

static void teardown (void)
{
    stop_daemon (daemon_pid);
    char cmd[300];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", dir);
}

START_TEST (test_hello)
{
    berth_client_t *c = client ();
    int v = 0;
    char *server = NULL;
    berth_client_error_t err;
    ck_assert_int_eq (berth_hello (c, &v, &server, &err), 0);
    ck_assert_int_eq (v, BERTH_PROTOCOL_VERSION);
    HAS (server, "berthd");
    free (server);
    ck_assert_str_eq (berth_socket_path (c), sock);
    ck_assert_int_ge (berth_fd (c), 0);
    berth_close (c);
}
END_TEST

START_TEST (test_acquire_release)
{
    berth_client_t *c = client ();
    berth_client_error_t err;
    berth_request_t *r = cores_request (1);
    const char *argv[] = { "./model", "x", NULL };
    ck_assert_int_eq (berth_request_set_string (r, "label", "lib", &err), 0);
    ck_assert_int_eq (berth_request_set_argv (r, argv, &err), 0);
    ck_assert_int_eq (berth_request_set_bool (r, "env", 1, &err), 0);
    berth_lease_t *l = berth_acquire (c, r, &err);
    ck_assert_msg (l != NULL, "%s: %s", err.code, err.message);
    ck_assert_str_eq (berth_lease_label (l), "lib");
    ck_assert_int_eq (berth_lease_nnodes (l), 1);
    int n;
    berth_lease_cores (l, 0, &n);
    ck_assert_int_eq (n, 1);
    ck_assert_int_eq (berth_lease_gpus (l), 0);
    /* the launch is rendered for the program */
    const char *const *launch = berth_launch_argv (berth_lease_launch (l));
    ck_assert_ptr_nonnull (launch);
    bool has_program = false;
    for (int i = 0; launch[i]; i++)
        has_program |= !strcmp (launch[i], "./model");
    ck_assert (has_program);
    ck_assert_int_ge (berth_lease_nenv (l), 5);
    ck_assert_str_eq (berth_lease_env_name (l, 0), "BERTH_LEASE");
    ck_assert_int_eq (leases_held (c), 1);

    char id[64];
    snprintf (id, sizeof (id), "%s", berth_lease_id (l));
    ck_assert_int_eq (berth_release (c, id, &err), 0);
    ck_assert_int_eq (leases_held (c), 0);
    ck_assert_int_eq (berth_release (c, id, &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_NOT_FOUND);
    HAS (err.message, id);
    /* the connection is still usable after an error */
    ck_assert_int_eq (leases_held (c), 0);
    berth_lease_free (l);
    berth_request_free (r);
    berth_close (c);
}
END_TEST

/* A lease bound to its connection ends with it; a detached one does not. */
START_TEST (test_connection_bound)
{
    berth_client_error_t err;
    berth_client_t *a = client (), *b = client ();
    berth_request_t *r = cores_request (1);
    berth_lease_t *l = berth_acquire (a, r, &err);
    ck_assert_msg (l != NULL, "%s", err.message);
    /* another connection may not release it */
    ck_assert_int_eq (berth_release (b, berth_lease_id (l), &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_FORBIDDEN);
    berth_close (a);
    for (int i = 0; i < 500 && leases_held (b) > 0; i++)
        pause_ms (20);
    ck_assert_int_eq (leases_held (b), 0);
    berth_lease_free (l);

    a = client ();
    berth_request_set_bool (r, "detach", 1, NULL);
    l = berth_acquire (a, r, &err);
    ck_assert_msg (l != NULL, "%s", err.message);
    berth_close (a);
    ck_assert_int_eq (leases_held (b), 1);
    ck_assert_int_eq (berth_release (b, berth_lease_id (l), &err), 0);
    berth_lease_free (l);
    berth_request_free (r);
    berth_close (b);
}
END_TEST

START_TEST (test_refusals)
{
    berth_client_error_t err;
    berth_client_t *c = client ();
    berth_request_t *all = cores_request (ncores), *one = cores_request (1);
    berth_lease_t *l = berth_acquire (c, all, &err);
    ck_assert_msg (l != NULL, "%s", err.message);

    berth_request_set_bool (one, "wait", 0, NULL);
    ck_assert_ptr_null (berth_acquire (c, one, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_BUSY);
    berth_request_set_bool (one, "wait", 1, NULL);
    berth_request_set_seconds (one, "timeout", 0.2, NULL);
    ck_assert_ptr_null (berth_acquire (c, one, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_TIMEOUT);

    berth_request_t *huge = cores_request (ncores * 1000);
    ck_assert_ptr_null (berth_acquire (c, huge, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_UNSATISFIABLE);
    ck_assert_int_gt ((int) strlen (err.message), 10);

    ck_assert_int_eq (berth_release (c, berth_lease_id (l), &err), 0);
    berth_lease_free (l);
    berth_request_free (all);
    berth_request_free (one);
    berth_request_free (huge);
    berth_close (c);
}
END_TEST

/* A waiting request is served when another releases; a watcher sees it. */
START_TEST (test_wait_and_watch)
{
    berth_client_error_t err;
    berth_client_t *w = client (), *a = client ();
    ck_assert_int_eq (berth_watch (w, 0, &err), 0);
    berth_request_t *all = cores_request (ncores);
    berth_request_set_string (all, "label", "holder", NULL);
    berth_lease_t *held = berth_acquire (a, all, &err);
    ck_assert_msg (held != NULL, "%s", err.message);

    pid_t child = fork ();
    if (child == 0) {          /* waits in berthd until the parent releases */
        berth_client_t *b = berth_connect (sock, NULL);
        berth_request_t *one = cores_request (1);
        berth_request_set_string (one, "label", "waiter", NULL);
        berth_lease_t *l = b ? berth_acquire (b, one, NULL) : NULL;
        _exit (l ? 0 : 1);
    }
    bool granted = false, waited = false, released = false, waiter = false;
    berth_event_t *ev;
    while (!waiter && berth_next_event (w, 20, &ev, &err) == 1) {
        const char *label = berth_event_label (ev);
        switch (berth_event_kind (ev)) {
        case BERTH_EVENT_GRANTED:
            if (label && !strcmp (label, "holder")) {
                granted = true;
                ck_assert_str_eq (berth_event_name (ev), "granted");
                ck_assert_str_eq (berth_lease_id (berth_event_lease (ev)), berth_lease_id (held));
            } else if (label && !strcmp (label, "waiter"))
                waiter = true;
            break;
        case BERTH_EVENT_WAITED:
            if (label && !strcmp (label, "waiter")) {
                waited = true;
                ck_assert_int_eq (berth_event_position (ev), 1);
                ck_assert_ptr_nonnull (berth_event_why (ev));
                /* now let it in */
                ck_assert_int_eq (berth_release (a, berth_lease_id (held), &err), 0);
            }
            break;
        case BERTH_EVENT_RELEASED:
            if (!strcmp (berth_event_lease_id (ev), berth_lease_id (held))) {
                released = true;
                ck_assert_str_eq (berth_event_why (ev), "released");
            }
            break;
        case BERTH_EVENT_REFUSED:
            ck_abort_msg ("refused: %s", berth_event_error_message (ev));
            break;
        case BERTH_EVENT_ALLOCATION:
            break;             /* berthd's start; only in a watch with history */
        }
        char *j = berth_event_json (ev);
        HAS (j, "\"event\"");
        free (j);
        berth_event_free (ev);
    }
    ck_assert (granted && waited && released && waiter);
    int status;
    ck_assert_int_eq (waitpid (child, &status, 0), child);
    ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    /* nothing more within a short while: 0, not an error */
    while (berth_next_event (w, 0.2, &ev, &err) == 1)
        berth_event_free (ev);      /* the waiter's release on exit */
    ck_assert_int_eq (berth_next_event (w, 0.05, &ev, &err), 0);
    berth_lease_free (held);
    berth_request_free (all);
    berth_close (a);
    berth_close (w);
}
END_TEST

START_TEST (test_render_resources)
{
    berth_client_error_t err;
    berth_client_t *c = client ();
    const char *argv[] = { "./a.out", NULL };
    berth_launch_t *la = berth_render (c, "{\"nodes\": [\"n1\"], \"cores\": [[0]], \"gpus\": 0}",
                                       1, 1, -1, argv, &err);
    if (!la)   /* a node this allocation does not have may be refused; say why */
        ck_assert_str_eq (err.code, BERTH_ERR_INVALID_REQUEST);
    else {
        bool found = false;
        for (const char *const *a = berth_launch_argv (la); *a; a++)
            found |= !strcmp (*a, "./a.out");
        ck_assert (found);
        berth_launch_free (la);
    }
    ck_assert_ptr_null (berth_render (c, "{not json", 1, 0, -1, argv, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_USAGE);
    HAS (err.message, "the placement is not JSON");
    ck_assert_ptr_null (berth_render (c, "{\"nodes\": []}", 1, 0, -1, argv, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_USAGE);
    /* no node names: the launcher's own node, no -w, no --hosts */
    la = berth_render (c, "{\"cores\": [[0]]}", 1, 0, -1, argv, &err);
    if (!la)   /* a launcher that cannot place at all says so */
        HAS (err.message, "cannot place");
    else {
        const char *const *a = berth_launch_argv (la);
        int n = 0;
        for (; a[n]; n++) {
            ck_assert_str_ne (a[n], "-w");
            ck_assert_str_ne (a[n], "--hosts");
        }
        ck_assert_str_eq (a[n - 1], "./a.out");
        berth_launch_free (la);
    }
    /* GPU ids per node: one list for each node */
    ck_assert_ptr_null (berth_render (c, "{\"nodes\": [\"a\", \"b\"], \"cores\": [[0], [0]], "
                                      "\"gpu_ids\": [[0]]}", 1, 0, -1, argv, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_USAGE);
    HAS (err.message, "placement.gpu_ids' must be an array of 2 GPU id lists");

    berth_request_t *r = cores_request (1);
    berth_lease_t *l = berth_acquire (c, r, &err);
    ck_assert_msg (l != NULL, "%s", err.message);
    char *view = berth_resources (c, berth_lease_id (l), &err);
    ck_assert_msg (view != NULL, "%s", err.message);
    HAS (view, berth_lease_id (l));
    free (view);
    ck_assert_ptr_null (berth_resources (c, "L424242", &err));
    ck_assert_str_eq (err.code, BERTH_ERR_NOT_FOUND);
    berth_release (c, berth_lease_id (l), NULL);
    berth_lease_free (l);
    berth_request_free (r);
    berth_close (c);
}
END_TEST

/* A daemon of its own: shutdown waits until it is gone. */
START_TEST (test_shutdown)
{
    char path[300], state[300];
    berth_client_error_t err;
    snprintf (path, sizeof (path), "%s/s2.sock", dir);
    snprintf (state, sizeof (state), "%s/s2", dir);
    ck_assert_int_eq (mkdir (state, 0700), 0);
    pid_t pid = start_daemon (path, state);
    ck_assert_int_gt (pid, 0);
    berth_client_t *c = berth_connect (path, &err), *holder = berth_connect (path, &err);
    ck_assert_ptr_nonnull (c);
    berth_request_t *r = cores_request (1);
    berth_lease_t *l = berth_acquire (holder, r, &err);
    ck_assert_ptr_nonnull (l);
    ck_assert_int_eq (berth_shutdown (c, BERTH_SHUTDOWN_DRAIN, 0.3, &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_TIMEOUT);
    HAS (err.message, "has not finished after 0.3 s");
    berth_close (c);
    c = berth_connect (path, &err);
    ck_assert_ptr_nonnull (c);
    ck_assert_int_eq (berth_shutdown (c, BERTH_SHUTDOWN_FORCE, 20, &err), 0);
    struct stat st;
    ck_assert_int_eq (lstat (path, &st), -1);
    ck_assert_int_eq (errno, ENOENT);
    /* the holder's connection is closed under it */
    ck_assert_int_eq (berth_release (holder, berth_lease_id (l), &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_CLOSED);
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    berth_lease_free (l);
    berth_request_free (r);
    berth_close (holder);
    berth_close (c);
}
END_TEST

/* berthd killed -9 and started again on the same socket and state: the
 * handle reconnects and reclaims its lease (berth_check, or any call),
 * twice, and releases it; with reconnecting off it fails at once. */
START_TEST (test_reconnect)
{
    char path[300], state[300];
    berth_client_error_t err;
    int status;
    snprintf (path, sizeof (path), "%s/s3.sock", dir);
    snprintf (state, sizeof (state), "%s/s3", dir);
    ck_assert_int_eq (mkdir (state, 0700), 0);
    pid_t pid = start_daemon (path, state);
    ck_assert_int_gt (pid, 0);
    berth_client_t *c = berth_connect (path, &err);
    ck_assert_ptr_nonnull (c);
    ck_assert_int_eq (berth_set_reconnect (c, -1, &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_USAGE);
    ck_assert_int_eq (berth_set_reconnect (c, 1e9, &err), -1);
    ck_assert_int_eq (berth_set_reconnect (NULL, 5, &err), -1);
    ck_assert_int_eq (berth_check (NULL, &err), -1);
    ck_assert_int_eq (berth_set_reconnect (c, 30, &err), 0);
    berth_request_t *r = cores_request (2);
    berth_lease_t *l = berth_acquire (c, r, &err);
    ck_assert_msg (l != NULL, "%s", err.message);
    ck_assert_int_eq (berth_check (c, &err), 0);      /* connected: nothing to do */

    kill (pid, SIGKILL);
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    pid = start_daemon (path, state);
    ck_assert_int_gt (pid, 0);
    ck_assert_msg (berth_check (c, &err) == 0, "%s", err.message);
    char *s = berth_status (c, &err);
    ck_assert_msg (s != NULL, "%s", err.message);
    HAS (s, "\"holder\":\"connection\"");       /* reclaimed by this handle */
    free (s);

    kill (pid, SIGKILL);
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    pid = start_daemon (path, state);
    ck_assert_int_gt (pid, 0);
    /* no check first: the release itself reconnects, reclaims, releases */
    ck_assert_msg (berth_release (c, berth_lease_id (l), &err) == 0, "%s", err.message);
    ck_assert_int_eq (leases_held (c), 0);
    berth_lease_free (l);

    l = berth_acquire (c, r, &err);
    ck_assert_ptr_nonnull (l);
    ck_assert_int_eq (berth_set_reconnect (c, 0, &err), 0);
    kill (pid, SIGKILL);
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_int_eq (berth_release (c, berth_lease_id (l), &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_CLOSED);
    berth_lease_free (l);
    berth_request_free (r);
    berth_close (c);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("libberth");
    TCase *tc = tcase_create ("berthd");
    tcase_add_unchecked_fixture (tc, setup, teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_hello);
    tcase_add_test (tc, test_acquire_release);
    tcase_add_test (tc, test_connection_bound);
    tcase_add_test (tc, test_refusals);
    tcase_add_test (tc, test_wait_and_watch);
    tcase_add_test (tc, test_render_resources);
    tcase_add_test (tc, test_shutdown);
    tcase_add_test (tc, test_reconnect);
    suite_add_tcase (s, tc);
    SRunner *sr = srunner_create (s);
    srunner_run_all (sr, CK_NORMAL);
    int failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
