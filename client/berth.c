/* SPDX-License-Identifier: MIT */
/* berth: the command line. Each subcommand lives in its own cmd_*.c file. */
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "berth_config.h"
#include "commands.h"

struct subcommand {
    const char *name;
    int (*fn) (int argc, char **argv);
    const char *summary;
};

static const struct subcommand subcommands[] = {
    { "render", cmd_render, "render the launch command for a step (no daemon)" },
    { "machine", cmd_machine, "describe a machine and, with --allocation, the allocation" },
    { "resolve", cmd_resolve, "choose partition/qos/queue and wall time for N nodes" },
    { "run", cmd_run, "run a step in a placement from berthd (waits until it fits)" },
    { "acquire", cmd_acquire, "take a detached lease from berthd and print it" },
    { "release", cmd_release, "end leases by id" },
    { "status", cmd_status, "berthd's nodes, leases and queue" },
    { "events", cmd_events, "berthd's events, one a line (--json, --follow)" },
    { "shutdown", cmd_shutdown, "stop berthd (drain or force) and wait until it has" },
    { "verify", cmd_verify, "report what this rank was given (run inside a step)" },
    { "size", cmd_size, "GPUs or cores for a step from its cell count" },
    { "report", cmd_report, "a run's figures and timeline picture from berthd's events log" },
    { "placed", cmd_placed, "inside a local step srun placed: report its CPUs, run the program" },
    { "supervise", cmd_supervise, "run a program as a step tree stopped as a whole (for clients)" },
};

int cli_fail (int status, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf (stderr, "berth %s: ", cmd);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    return status;
}

/* The options of the subcommand parsing now, and the token cli_getopt
 * refused for naming an option only by a prefix: getopt keeps its own state
 * in globals, and these go with it. */
static const struct option *cur_options;
static const char *refused_token;

int cli_getopt (int argc, char **argv, const char *shortopts,
                const struct option *longopts)
{
    int idx = -1;
    cur_options = longopts;
    refused_token = NULL;
    int c = getopt_long (argc, argv, shortopts, longopts, &idx);
    if (c == -1 || c == '?' || c == ':' || idx < 0)
        return c;
    /* getopt_long takes any unique prefix ("--gpus" for "--gpus-per-task"):
     * the token must name the option in full. A separate argument is the
     * token after the option's own. */
    const char *tok = argv[optind - 1];
    if (longopts[idx].has_arg != no_argument && optarg == argv[optind - 1] && optind >= 2)
        tok = argv[optind - 2];
    if (strncmp (tok, "--", 2) != 0)
        return c;
    size_t n = strcspn (tok + 2, "=");
    if (strlen (longopts[idx].name) != n || strncmp (tok + 2, longopts[idx].name, n)) {
        refused_token = tok;
        return '?';
    }
    return c;
}

static size_t edit_distance (const char *a, size_t na, const char *b)
{
    size_t nb = strlen (b), row[128];
    if (nb >= sizeof (row) / sizeof (row[0]))
        return (size_t) -1;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

const char *cli_nearest_option (const char *name, size_t n, const struct option *opts)
{
    const char *best = NULL;
    size_t best_d = (size_t) -1;
    for (int i = 0; opts && opts[i].name; i++) {
        /* a prefix is what getopt would have taken: the likeliest meaning */
        size_t d = !strncmp (opts[i].name, name, n) ? 0
                   : edit_distance (name, n, opts[i].name);
        /* of two prefixes, the shorter name is the nearer */
        if (d < best_d || (d == 0 && best_d == 0 && strlen (opts[i].name) < strlen (best))) {
            best_d = d;
            best = opts[i].name;
        }
    }
    size_t limit = n / 3 > 2 ? n / 3 : 2;
    return best_d <= limit ? best : NULL;
}

int cli_bad_option (const char *cmd, char **argv)
{
    const char *tok = refused_token ? refused_token : argv[optind - 1];
    refused_token = NULL;
    if (strncmp (tok, "--", 2) == 0 && tok[2]) {
        size_t n = strcspn (tok + 2, "=");
        bool exact = false;
        for (int i = 0; cur_options && cur_options[i].name; i++)
            if (strlen (cur_options[i].name) == n && !strncmp (cur_options[i].name, tok + 2, n))
                exact = true;
        const char *near = exact ? NULL : cli_nearest_option (tok + 2, n, cur_options);
        if (near)
            return cli_fail (2, cmd, "unknown or incomplete option '%.*s'; did you "
                             "mean '--%s'? (options are spelt in full; see --help)",
                             (int) n + 2, tok, near);
        return cli_fail (2, cmd, "unknown or incomplete option '%.*s' (see --help)",
                         (int) n + 2, tok);
    }
    return cli_fail (2, cmd, "unknown or incomplete option '%s' (see --help)", tok);
}

int cli_help_or_bad_option (int c, const char *cmd, char **argv,
                            void (*usage) (FILE *f))
{
    if (c != 'h')
        return cli_bad_option (cmd, argv);
    usage (stdout);
    return 0;
}

int cli_no_operands (const char *cmd, const char *hint, int argc, char **argv)
{
    if (optind >= argc)
        return 0;
    return cli_fail (2, cmd, "unexpected argument '%s'%s", argv[optind], hint);
}

static void usage (FILE *f)
{
    fprintf (f, "Usage: berth COMMAND [OPTIONS]\n\nCommands:\n");
    for (size_t i = 0; i < sizeof (subcommands) / sizeof (subcommands[0]); i++)
        fprintf (f, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf (f, "\nRun 'berth COMMAND --help' for a command's options.\n");
}

int main (int argc, char **argv)
{
    if (argc < 2) {
        usage (stderr);
        return 2;
    }
    if (!strcmp (argv[1], "--help") || !strcmp (argv[1], "-h")) {
        usage (stdout);
        return 0;
    }
    if (!strcmp (argv[1], "--version")) {
        printf ("berth %s\n", BERTH_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof (subcommands) / sizeof (subcommands[0]); i++) {
        if (!strcmp (argv[1], subcommands[i].name))
            return subcommands[i].fn (argc - 1, argv + 1);
    }
    fprintf (stderr, "berth: unknown command '%s'\n", argv[1]);
    usage (stderr);
    return 2;
}
