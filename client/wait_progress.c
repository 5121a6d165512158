/* SPDX-License-Identifier: MIT */
/* While berth run's request waits, a watcher process shows its place in
 * berthd's queue. The request's own connection carries nothing until the
 * grant (one request at a time per connection, PROTOCOL.md), so the watcher
 * asks on a second connection: status of berth run's pid, once a second
 * (berthd records each connection's peer, and answers with that pid's
 * entries alone, at a cost that does not grow with the queue's JSON). Only what changed
 * is shown: on a terminal one line rewritten in place, elsewhere a line per
 * change. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "berth/berth.h"
#include "clock.h"
#include "wait_progress.h"
#include "wallclock.h"

/* berth run's entry in a status reply: the last of its pid's (a status of
 * its pid alone holds no other); *nqueued: the whole queue's length. */
static const json_t *own_entry (const json_t *st, int pid, int *nqueued)
{
    size_t i;
    const json_t *e, *mine = NULL, *queue = json_object_get (st, "queue");
    json_array_foreach (queue, i, e) {
        if (json_integer_value (json_object_get (e, "pid")) == pid)
            mine = e;
    }
    const json_t *waiting = json_object_get (json_object_get (st, "daemon"),
                                             "waiting");
    *nqueued = json_is_integer (waiting) ? (int) json_integer_value (waiting)
                                         : (int) json_array_size (queue);
    return mine;
}

void wait_progress_cut (int cores, int gpus, int asked_cores, int asked_gpus,
                        char *buf, size_t size)
{
    if (cores < asked_cores)
        snprintf (buf, size, "cut by --min-* from %d core%s to %d", asked_cores,
                  asked_cores == 1 ? "" : "s", cores);
    else if (gpus < asked_gpus)
        snprintf (buf, size, "cut by --min-* from %d GPU%s to %d", asked_gpus,
                  asked_gpus == 1 ? "" : "s", gpus);
    else if (size)
        buf[0] = '\0';
}

void wait_progress_line (const json_t *entry, int nqueued, int asked_cores,
                         int asked_gpus, char *buf, size_t size)
{
    const char *needs = json_string_value (json_object_get (entry, "needs"));
    const char *why = json_string_value (json_object_get (entry, "why"));
    int pos = (int) json_integer_value (json_object_get (entry, "position"));
    const json_t *cores = json_object_get (entry, "cores");
    const json_t *gpus = json_object_get (entry, "gpus");
    const json_t *start = json_object_get (entry, "start_in_s");
    char cut[96] = ", ", eta[128] = "", waited[32];
    wallclock_format_brief (json_number_value (json_object_get (entry, "waited_s")),
                            waited, sizeof (waited));
    /* berthd cut the step once, against the empty allocation (--min-*);
     * an older berthd does not say what it waits for in figures */
    if (json_is_integer (cores) && json_is_integer (gpus))
        wait_progress_cut ((int) json_integer_value (cores), (int) json_integer_value (gpus),
                           asked_cores, asked_gpus, cut + 2, sizeof (cut) - 2);
    if (!cut[2])
        cut[0] = '\0';
    if (json_is_number (start)) {
        char t[32];
        wallclock_format_brief (json_number_value (start), t, sizeof (t));
        snprintf (eta, sizeof (eta), "; could start in %s by the running steps' "
                  "durations", t);
    }
    snprintf (buf, size, "waiting %s: #%d of %d in the queue for %s%s; %s%s",
              waited, pos, nqueued, needs ? needs : "?", cut,
              why && *why ? why : "not tried yet", eta);
}

/* What fits the terminal's line after "berth run: " (80 columns unless it
 * says). */
static int width (void)
{
    struct winsize ws;
    int cols = ioctl (STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20
               ? ws.ws_col : 80;
    return cols - 12;
}

/* The watcher's loop: never returns. */
static void watch (const char *socket, pid_t run, int asked_cores, int asked_gpus,
                   bool tty)
{
    berth_client_error_t err;
    berth_client_t *c = NULL;
    char last[600] = "", key[600], line[1024];
    double last_at = -1;
    struct timespec second = { 1, 0 };
    /* its own entries (pid); from a berthd older than that, the queue
     * (queue_only), and from one older still the whole status */
    int ask = 2;
    for (;;) {
        nanosleep (&second, NULL);
        if (!c && !(c = berth_connect (socket, &err)))
            continue;
        char *text = NULL;
        for (;;) {
            text = ask == 2 ? berth_status_of_pid (c, (int) run, &err)
                            : berth_status_ex (c, ask ? BERTH_STATUS_QUEUE_ONLY
                                                      : 0, &err);
            if (text || !ask || strcmp (err.code, BERTH_ERR_INVALID_REQUEST))
                break;
            ask--;
        }
        if (!text) {
            berth_close (c);
            c = NULL;
            continue;
        }
        json_t *st = json_loads (text, 0, NULL);
        free (text);
        int nqueued = 0;
        const json_t *e = st ? own_entry (st, (int) run, &nqueued) : NULL;
        if (e) {
            wait_progress_line (e, nqueued, asked_cores, asked_gpus, line, sizeof (line));
            /* A terminal's line is redrawn each second, the times counting;
             * elsewhere a line is written when the place, the reason or the
             * expected start (by 5 s or more) changed, not as seconds pass. */
            const json_t *start = json_object_get (e, "start_in_s");
            double at = json_is_number (start) ? now_wall () + json_number_value (start)
                                               : -1;
            snprintf (key, sizeof (key), "%lld/%d %d %s",
                      (long long) json_integer_value (json_object_get (e, "position")),
                      nqueued, at >= 0, json_string_value (json_object_get (e, "why")));
            bool changed = strcmp (key, last) || fabs (at - last_at) >= 5;
            if (tty)
                fprintf (stderr, "\r\033[Kberth run: %.*s", width (), line);
            else if (changed)
                fprintf (stderr, "berth run: %s\n", line);
            fflush (stderr);
            if (changed) {
                snprintf (last, sizeof (last), "%s", key);
                last_at = at;
            }
        }
        json_decref (st);
    }
}

pid_t wait_progress_start (const char *socket, int asked_cores, int asked_gpus)
{
    bool tty = isatty (STDERR_FILENO);
    pid_t run = getpid ();
    fflush (NULL);
    pid_t pid = fork ();
    if (pid != 0)
        return pid > 0 ? pid : 0;
    /* it ends with berth run, however that ends */
    if (prctl (PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid () != run)
        _exit (0);
    signal (SIGINT, SIG_IGN);
    watch (socket, run, asked_cores, asked_gpus, tty);
    _exit (0);
}

void wait_progress_stop (pid_t pid)
{
    if (pid <= 0)
        return;
    kill (pid, SIGKILL);
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (isatty (STDERR_FILENO)) {
        fputs ("\r\033[K", stderr);
        fflush (stderr);
    }
}
