/* SPDX-License-Identifier: MIT */
/* Subcommands of the berth CLI. Each takes argv starting at its own name and
 * returns the process exit status: 0 success, 1 failure, 2 usage error. */
#ifndef BERTH_COMMANDS_H
#define BERTH_COMMANDS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

int cmd_render (int argc, char **argv);
int cmd_machine (int argc, char **argv);
int cmd_resolve (int argc, char **argv);
int cmd_acquire (int argc, char **argv);
int cmd_release (int argc, char **argv);
int cmd_run (int argc, char **argv);
int cmd_status (int argc, char **argv);
int cmd_shutdown (int argc, char **argv);
int cmd_verify (int argc, char **argv);
int cmd_size (int argc, char **argv);
int cmd_report (int argc, char **argv);
int cmd_placed (int argc, char **argv);
int cmd_events (int argc, char **argv);
int cmd_supervise (int argc, char **argv);

/* Print "berth <cmd>: <message>" to stderr and return status. */
int cli_fail (int status, const char *cmd, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* getopt_long that takes a long option only when named in full (getopt_long
 * alone takes any unique prefix, so "--gpus" would be read as
 * "--gpus-per-task"): a prefix is refused as '?', and cli_bad_option then
 * names the option it was short for. */
int cli_getopt (int argc, char **argv, const char *shortopts,
                const struct option *longopts);

/* The option of opts nearest to name (its first n characters), NULL when none
 * is near. */
const char *cli_nearest_option (const char *name, size_t n, const struct option *opts);

/* The usage error for the option getopt_long just refused (argv as given to
 * the subcommand): exit status 2. */
int cli_bad_option (const char *cmd, char **argv);

/* The rest of a subcommand's getopt_long switch, the same in each: -h/--help
 * (c == 'h') prints usage on stdout and gives 0; anything else is the usage
 * error of cli_bad_option. */
int cli_help_or_bad_option (int c, const char *cmd, char **argv,
                            void (*usage) (FILE *f));

/* After the options of a subcommand that takes no operands: 0 when none is
 * left, else the usage error naming the first (hint follows the message, ""
 * for none) and 2. */
int cli_no_operands (const char *cmd, const char *hint, int argc, char **argv);

#endif
