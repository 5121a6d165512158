/* SPDX-License-Identifier: MIT */
/* berth: the command line. Each subcommand lives in its own cmd_*.c file. */
#include <getopt.h>
#include <stdarg.h>
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

int cli_bad_option (const char *cmd, char **argv)
{
    return cli_fail (2, cmd, "unknown or incomplete option '%s' (see --help)",
                     argv[optind - 1]);
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
