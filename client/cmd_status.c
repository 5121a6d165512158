/* SPDX-License-Identifier: MIT */
/* berth status: berthd's ledger for people (a table of nodes, the leases,
 * the queue with reasons), as JSON, or redrawn live as events come. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "clock.h"
#include "cli_daemon.h"
#include "commands.h"
#include "status_view.h"
#include "watch_tally.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth status [--json | --watch [--interval S]] [--nodes all] [--time-left]\n"
"                    [--socket PATH]\n"
"Show berthd's allocation: per node the cores, GPUs and memory in use, the\n"
"leases with their labels and ages, and the requests waiting, with why.\n\n"
"  --json           everything berthd reports, as JSON (for a stream of\n"
"                   events, one a line: berth events)\n"
"  --watch          a live view: on a terminal redrawn in place whenever\n"
"                   something is granted, waits or ends (q or Ctrl-C quits);\n"
"                   elsewhere one status block per interval; on a terminal\n"
"                   the view fits the window, sections cut with \"... N more\"\n"
"  --interval S     seconds between redraws with --watch (default: 1 on a\n"
"                   terminal, 2 otherwise)\n"
"  --nodes all      a row for every node; past 32 nodes the view otherwise\n"
"                   shows them by state and the busiest\n"
"  --time-left      find when the allocation ends even if berthd must ask\n"
"                   the scheduler (once); otherwise it is shown when known\n");
    cli_socket_help (f, 19);
    fprintf (f, "  -h, --help       this text\n");
}

enum { OPT_JSON = 256, OPT_WATCH, OPT_SOCKET, OPT_TIME_LEFT, OPT_INTERVAL, OPT_NODES };

static const struct option options[] = {
    { "json", no_argument, NULL, OPT_JSON },
    { "watch", no_argument, NULL, OPT_WATCH },
    { "socket", required_argument, NULL, OPT_SOCKET },
    { "time-left", no_argument, NULL, OPT_TIME_LEFT },
    { "interval", required_argument, NULL, OPT_INTERVAL },
    { "nodes", required_argument, NULL, OPT_NODES },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int status_flags;
static bool all_nodes;

/* A brief reply holds everything the view draws (PROTOCOL.md "status"):
 * the table of a small job, the busiest, a window's worth of leases and
 * waiting requests; the sums come whole. */
_Static_assert (BERTH_STATUS_BRIEF_ROWS >= STATUS_VIEW_ROWS
                && BERTH_STATUS_BRIEF_ROWS >= STATUS_VIEW_NODE_TABLE
                && BERTH_STATUS_BRIEF_ROWS >= STATUS_VIEW_BUSIEST,
                "a brief status must hold what the view shows");

/* The view's options for a window of cols x rows (0: no limit). */
static struct status_view_opts view_opts (bool tty, int cols, int rows)
{
    struct status_view_opts o = { cols, rows, tty, all_nodes };
    return o;
}

/* The terminal's size on stdout; 0 x 0 when it is not a terminal. */
static void window (bool tty, int *cols, int *rows)
{
    struct winsize ws;
    *cols = *rows = 0;
    if (tty && ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
        *cols = ws.ws_col;
        *rows = ws.ws_row;
    }
    if (tty && *cols <= 0)
        *cols = 80;
    if (tty && *rows <= 0)
        *rows = 24;
}

#define GONE (-1)      /* fetch: berthd closed the connection (said nothing) */

static int fetch (berth_client_t *c, json_t **status)
{
    berth_client_error_t err;
    json_error_t je;
    char *text = berth_status_ex (c, status_flags, &err);
    if (!text && (status_flags & BERTH_STATUS_BRIEF)
        && !strcmp (err.code, BERTH_ERR_INVALID_REQUEST)) {
        /* a berthd older than brief: the whole status, from now on (the
         * live view must not ask twice a frame) */
        status_flags &= ~BERTH_STATUS_BRIEF;
        text = berth_status_ex (c, status_flags, &err);
    }
    if (!text && !strcmp (err.code, BERTH_ERR_CLOSED))
        return GONE;
    if (!text)
        return cli_daemon_fail ("status", &err);
    *status = json_loads (text, 0, &je);
    free (text);
    if (!*status)
        return cli_fail (1, "status", "cannot read berthd's status: %s", je.text);
    return 0;
}

static int show (berth_client_t *c, bool json)
{
    json_t *status;
    int rc = fetch (c, &status);
    if (rc == GONE)
        return cli_fail (1, "status", "berthd closed the connection before it answered");
    if (rc)
        return rc;
    if (json)
        cli_print_json (status);
    else {
        /* on a terminal: as wide as the window, every line in it */
        bool tty = isatty (STDOUT_FILENO);
        int cols, rows;
        window (tty, &cols, &rows);
        struct status_view_opts o = view_opts (tty, cols, 0);
        status_view_render (stdout, status, (double) time (NULL), &o);
    }
    json_decref (status);
    return fflush (stdout) == 0 ? 0 : 1;
}

/* ---- the live view ---------------------------------------------------- */

/* Set by signal handlers; the loop restores the terminal and leaves. */
static volatile sig_atomic_t stop_signal, resized;
static struct termios saved_tio;
static bool tio_saved, screen_taken;

static void on_signal (int sig)
{
    if (sig == SIGWINCH)
        resized = 1;
    else
        stop_signal = sig;
}

static void restore_terminal (void)
{
    if (screen_taken) {
        fputs ("\033[?25h\033[?1049l", stdout);    /* cursor back, main screen */
        fflush (stdout);
        screen_taken = false;
    }
    if (tio_saved) {
        tcsetattr (STDIN_FILENO, TCSAFLUSH, &saved_tio);
        tio_saved = false;
    }
}

/* Keys without Enter and without echo; Ctrl-C still sends SIGINT. */
static void take_terminal (void)
{
    struct termios t;
    if (isatty (STDIN_FILENO) && tcgetattr (STDIN_FILENO, &saved_tio) == 0) {
        t = saved_tio;
        t.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
        t.c_cc[VMIN] = 0;
        t.c_cc[VTIME] = 0;
        if (tcsetattr (STDIN_FILENO, TCSAFLUSH, &t) == 0)
            tio_saved = true;
    }
    fputs ("\033[?1049h\033[?25l", stdout);         /* own screen, no cursor */
    screen_taken = true;
}

static void catch_signals (void)
{
    struct sigaction sa;
    memset (&sa, 0, sizeof (sa));
    sa.sa_handler = on_signal;        /* no SA_RESTART: poll returns EINTR */
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGHUP, &sa, NULL);
    sigaction (SIGWINCH, &sa, NULL);
}

/* One screen: the status, the watch's figures; on a terminal cut to its
 * height and drawn over the last one line by line (no flicker). */
static int draw (berth_client_t *c, const struct watch_tally *t, bool tty)
{
    json_t *status;
    int rc = fetch (c, &status);
    if (rc)
        return rc;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream (&buf, &len);
    if (!m) {
        json_decref (status);
        return cli_fail (1, "status", "out of memory drawing the status");
    }
    double wall = now_wall ();
    int cols, rows;
    window (tty, &cols, &rows);
    if (!tty) {
        char when[32] = "";
        time_t s = (time_t) wall;
        struct tm tm;
        if (localtime_r (&s, &tm))
            strftime (when, sizeof (when), "%Y-%m-%d %H:%M:%S", &tm);
        fprintf (m, "== %s\n", when);
    }
    /* the figures of the watch and "q quits" take the last two lines */
    struct status_view_opts o = view_opts (tty, cols, !tty ? 0 : rows > 2 ? rows - 2 : 1);
    status_view_render (m, status, wall, &o);
    json_decref (status);
    watch_tally_print (m, t, wall);
    if (tty)
        fputs ("q quits", m);
    fclose (m);
    if (!buf)
        return cli_fail (1, "status", "out of memory drawing the status");
    if (!tty) {
        fputs (buf, stdout);
        fputc ('\n', stdout);
    } else {
        fputs ("\033[H", stdout);
        int row = 0;
        for (char *line = buf, *nl; line && *line && row < rows; line = nl ? nl + 1 : NULL, row++) {
            nl = strchr (line, '\n');
            if (row == rows - 1 && nl)     /* the last row shows that more is cut */
                fputs ("...", stdout);
            else
                status_view_clip_line (stdout, line, nl ? (size_t) (nl - line) : strlen (line),
                                       cols);
            fputs ("\033[K", stdout);
            if (nl && row < rows - 1)
                fputc ('\n', stdout);
        }
        fputs ("\033[J", stdout);
    }
    free (buf);
    return fflush (stdout) == 0 ? 0 : 1;
}

/* Reads the keys waiting on stdin: 1 when one of them quits. */
static int keys (bool *open)
{
    char k[64];
    ssize_t n = read (STDIN_FILENO, k, sizeof (k));
    if (n == 0)
        *open = false;        /* end of input: only signals quit now */
    for (ssize_t i = 0; i < n; i++)
        if (k[i] == 'q' || k[i] == 'Q' || k[i] == 4 /* Ctrl-D */)
            return 1;
    return 0;
}

/* On a terminal: redraw in place after each burst of events and every
 * interval (ages move). Elsewhere: one status block per interval. */
static int watch (berth_client_t *c, double interval)
{
    bool tty = isatty (STDOUT_FILENO);
    if (interval <= 0)
        interval = tty ? 1.0 : 2.0;
    berth_client_error_t err;
    if (berth_watch (c, 0, &err) < 0)
        return cli_daemon_fail ("status", &err);
    struct watch_tally *t = malloc (sizeof (*t));
    if (!t)
        return cli_fail (1, "status", "out of memory");
    watch_tally_init (t, now_wall ());
    catch_signals ();
    bool stdin_open = tty && isatty (STDIN_FILENO);
    if (tty)
        take_terminal ();
    int rc = 0;
    bool dirty = true, gone = false;
    double next = now_mono ();
    while (!stop_signal) {
        berth_event_t *ev;
        int got;
        while ((got = berth_next_event (c, 0, &ev, &err)) > 0) {
            watch_tally_add (t, berth_event_name (ev), berth_event_time (ev));
            berth_event_free (ev);
            dirty = true;
        }
        if (got < 0) {
            if (!strcmp (err.code, BERTH_ERR_CLOSED))
                gone = true;
            else
                rc = cli_daemon_fail ("status", &err);
            break;
        }
        double now = now_mono ();
        if ((tty && (dirty || resized)) || now >= next) {
            if ((rc = draw (c, t, tty)) != 0) {
                gone = rc == GONE;
                rc = gone ? 0 : rc;
                break;
            }
            dirty = false;
            resized = 0;
            next = now + interval;
        }
        struct pollfd p[2] = { { berth_fd (c), POLLIN, 0 }, { STDIN_FILENO, POLLIN, 0 } };
        int wait_ms = (int) ((next - now_mono ()) * 1000) + 1;
        if (poll (p, stdin_open ? 2 : 1, wait_ms < 1 ? 1 : wait_ms) < 0 && errno != EINTR) {
            rc = cli_fail (1, "status", "poll: %s", strerror (errno));
            break;
        }
        if (stdin_open && (p[1].revents & (POLLIN | POLLHUP)) && keys (&stdin_open))
            break;
        if (tty && (p[0].revents & POLLIN))
            usleep (50000);     /* let the rest of a burst arrive: one redraw */
    }
    restore_terminal ();
    free (t);
    if (gone)
        printf ("berthd has stopped.\n");
    /* q and Ctrl-C are the ordinary ways out; other signals say so */
    if (stop_signal && stop_signal != SIGINT)
        return 128 + stop_signal;
    return rc;
}

int cmd_status (int argc, char **argv)
{
    const char *socket = NULL;
    bool json = false, live = false;
    double interval = 0;
    char *end;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "h", options)) != -1) {
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
        case OPT_INTERVAL:
            interval = strtod (optarg, &end);
            if (end == optarg || *end || !(interval >= 0.1 && interval <= 3600))
                return cli_fail (2, "status", "--interval wants seconds from 0.1 to 3600, "
                                 "got '%s'", optarg);
            break;
        case OPT_NODES:
            if (strcmp (optarg, "all"))
                return cli_fail (2, "status", "--nodes wants 'all' (a row for every node), "
                                 "got '%s'", optarg);
            all_nodes = true;
            break;
        case OPT_TIME_LEFT:
            status_flags |= BERTH_STATUS_TIME_LEFT;
            break;
        default:
            return cli_help_or_bad_option (c, "status", argv, usage);
        }
    }
    if (cli_no_operands ("status", "", argc, argv))
        return 2;
    if (json && live)
        return cli_fail (2, "status", "--json and --watch do not go together; for a "
                         "stream of events, one JSON object a line, use berth events --json "
                         "--follow");
    if (interval > 0 && !live)
        return cli_fail (2, "status", "--interval goes with --watch");
    if (!json && !all_nodes)
        status_flags |= BERTH_STATUS_BRIEF;    /* --json and --nodes all want every row */
    berth_client_t *cl = cli_connect ("status", socket);
    if (!cl)
        return 1;
    int rc = live ? watch (cl, interval) : show (cl, json);
    berth_close (cl);
    return rc;
}
