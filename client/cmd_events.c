/* SPDX-License-Identifier: MIT */
/* berth events: berthd's events, one a line, for scripts and log shippers
 * (the watch op of PROTOCOL.md): what it has logged since it started, and
 * with --follow what happens from now on. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_daemon.h"
#include "commands.h"
#include "event_line.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth events [--json] [--follow [--history]] [--socket PATH]\n"
"berthd's events, one a line: grants, waits, releases, refusals, and berthd's\n"
"start with the allocation it serves. Without --follow: the events berthd has\n"
"logged since it started, then exit.\n\n"
"  --json           each event as berthd sent it: one JSON object a line\n"
"                   (PROTOCOL.md, \"Events\"), for jq, scripts and log shippers\n"
"  --follow         print events as they happen, until berthd stops (exit 0)\n"
"                   or Ctrl-C\n"
"  --history        with --follow: first the events logged since berthd started\n"
"  --socket PATH    berthd's socket (default: $BERTH_SOCKET)\n"
"  -h, --help       this text\n");
}

enum { OPT_JSON = 256, OPT_FOLLOW, OPT_HISTORY, OPT_SOCKET };

static const struct option options[] = {
    { "json", no_argument, NULL, OPT_JSON },
    { "follow", no_argument, NULL, OPT_FOLLOW },
    { "history", no_argument, NULL, OPT_HISTORY },
    { "socket", required_argument, NULL, OPT_SOCKET },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static volatile sig_atomic_t stop;

static void on_signal (int sig)
{
    (void) sig;
    stop = 1;
}

/* One event to stdout, flushed: a log shipper reading a pipe sees each
 * line as it happens. */
static int print_event (berth_event_t *ev, bool json)
{
    char *text = berth_event_json (ev);
    json_t *o = text ? json_loads (text, 0, NULL) : NULL;
    int rc = 0;
    if (!text || !o)
        rc = cli_fail (1, "events", "out of memory printing an event");
    else if (json)
        printf ("%s\n", text);
    else
        event_line_print (stdout, o);
    json_decref (o);
    free (text);
    if (rc == 0 && fflush (stdout) != 0)
        rc = cli_fail (1, "events", "writing the events: %s", strerror (errno));
    return rc;
}

static int events (berth_client_t *c, bool json, bool follow, bool history)
{
    berth_client_error_t err;
    if (berth_watch (c, history || !follow, &err) < 0)
        return cli_daemon_fail ("events", &err);
    if (!follow) {
        /* berthd queues the history before it answers a later request: once
         * the answer is in, so is all of it */
        int version;
        if (berth_hello (c, &version, NULL, &err) < 0)
            return cli_daemon_fail ("events", &err);
    }
    struct sigaction sa;
    memset (&sa, 0, sizeof (sa));
    sa.sa_handler = on_signal;          /* no SA_RESTART: the wait ends */
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGPIPE, &sa, NULL);
    while (!stop) {
        berth_event_t *ev;
        int got = berth_next_event (c, follow ? 0.5 : 0, &ev, &err);
        if (got == 0 && !follow)
            return 0;
        if (got == 0)
            continue;
        if (got < 0) {
            if (!strcmp (err.code, BERTH_ERR_CLOSED))
                return 0;               /* berthd stopped: the stream ends */
            if (stop)
                break;
            return cli_daemon_fail ("events", &err);
        }
        int rc = print_event (ev, json);
        berth_event_free (ev);
        if (rc)
            return rc;
    }
    return 0;
}

int cmd_events (int argc, char **argv)
{
    const char *socket = NULL;
    bool json = false, follow = false, history = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "h", options)) != -1) {
        switch (c) {
        case OPT_JSON: json = true; break;
        case OPT_FOLLOW: follow = true; break;
        case OPT_HISTORY: history = true; break;
        case OPT_SOCKET: socket = optarg; break;
        default:
            return cli_help_or_bad_option (c, "events", argv, usage);
        }
    }
    if (cli_no_operands ("events", "", argc, argv))
        return 2;
    if (history && !follow)
        return cli_fail (2, "events", "--history goes with --follow (without it berth "
                         "events prints the history and exits)");
    berth_client_t *cl = cli_connect ("events", socket);
    if (!cl)
        return 1;
    int rc = events (cl, json, follow, history);
    berth_close (cl);
    return rc;
}
