/* berth status: berthd's ledger for people (a table of nodes, the leases,
 * the queue with reasons), as JSON, or redrawn live as events come. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_daemon.h"
#include "commands.h"
#include "status_view.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth status [--json | --watch] [--time-left] [--socket PATH]\n"
"Show berthd's allocation: per node the cores, GPUs and memory in use, the\n"
"leases with their labels and ages, and the requests waiting, with why.\n\n"
"  --json           everything berthd reports, as JSON\n"
"  --watch          redraw whenever something is granted, waits or ends\n"
"  --time-left      find when the allocation ends even if berthd must ask\n"
"                   the scheduler (once); otherwise it is shown when known\n"
"  --socket PATH    berthd's socket (default: $BERTH_SOCKET)\n"
"  -h, --help       this text\n");
}

enum { OPT_JSON = 256, OPT_WATCH, OPT_SOCKET, OPT_TIME_LEFT };

static const struct option options[] = {
    { "json", no_argument, NULL, OPT_JSON },
    { "watch", no_argument, NULL, OPT_WATCH },
    { "socket", required_argument, NULL, OPT_SOCKET },
    { "time-left", no_argument, NULL, OPT_TIME_LEFT },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int status_flags;

static int fetch (berth_client_t *c, json_t **status)
{
    berth_client_error_t err;
    json_error_t je;
    char *text = berth_status_ex (c, status_flags, &err);
    if (!text)
        return cli_daemon_fail ("status", &err);
    *status = json_loads (text, 0, &je);
    free (text);
    if (!*status)
        return cli_fail (1, "status", "cannot read berthd's status: %s", je.text);
    return 0;
}

static int show (berth_client_t *c, bool json, bool clear)
{
    json_t *status;
    int rc = fetch (c, &status);
    if (rc)
        return rc;
    if (json)
        cli_print_json (status);
    else {
        if (clear)
            fputs ("\033[H\033[J", stdout);
        status_view_print (stdout, status, (double) time (NULL), isatty (STDOUT_FILENO));
    }
    json_decref (status);
    return fflush (stdout) == 0 ? 0 : 1;
}

/* Redraw after each burst of events, and every second for the ages. */
static int watch (berth_client_t *c)
{
    berth_client_error_t err;
    if (berth_watch (c, 0, &err) < 0)
        return cli_daemon_fail ("status", &err);
    for (;;) {
        int rc = show (c, false, true);
        if (rc)
            return rc;
        berth_event_t *ev;
        double wait = 1.0;
        int n = 0;
        while (n < 200 && (rc = berth_next_event (c, wait, &ev, &err)) > 0) {
            berth_event_free (ev);
            wait = 0.05;       /* gather the rest of the burst, within reason */
            n++;
        }
        if (rc < 0) {
            if (!strcmp (err.code, BERTH_ERR_CLOSED)) {
                printf ("berthd has stopped.\n");
                return 0;
            }
            return cli_daemon_fail ("status", &err);
        }
    }
}

int cmd_status (int argc, char **argv)
{
    const char *socket = NULL;
    bool json = false, live = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long (argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case OPT_JSON:
            json = true;
            break;
        case OPT_WATCH:
            live = true;
            break;
        case OPT_SOCKET:
            socket = optarg;
            break;
        case OPT_TIME_LEFT:
            status_flags |= BERTH_STATUS_TIME_LEFT;
            break;
        case 'h':
            usage (stdout);
            return 0;
        default:
            return cli_fail (2, "status", "unknown or incomplete option '%s' (see --help)",
                             argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_fail (2, "status", "unexpected argument '%s'", argv[optind]);
    if (json && live)
        return cli_fail (2, "status", "--json and --watch do not go together; for a "
                         "stream of events use the watch op (PROTOCOL.md)");
    berth_client_t *cl = cli_connect ("status", socket);
    if (!cl)
        return 1;
    int rc = live ? watch (cl) : show (cl, json, false);
    berth_close (cl);
    return rc;
}
