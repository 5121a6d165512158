/* SPDX-License-Identifier: MIT */
/* Pieces shared by the subcommands that talk to berthd: connecting, and
 * reporting a libberth error the same way everywhere. */
#ifndef BERTH_CLI_DAEMON_H
#define BERTH_CLI_DAEMON_H

#include <stddef.h>
#include <stdio.h>

#include "berth/berth.h"

/* The exit statuses of berth run and berth acquire for their own failures,
 * kept apart from a step's status the way timeout(1) and env(1) do: berth
 * could not get or use the lease (a usage error of berth run, no berthd,
 * a refusal, a timeout, berthd shutting down or gone), the step's program
 * cannot be run, it is not found. */
enum { CLI_EXIT_BERTH = 125, CLI_EXIT_CANNOT_RUN = 126, CLI_EXIT_NOT_FOUND = 127 };

/* Connect to socket (NULL: $BERTH_SOCKET); on failure print why for cmd
 * and return NULL. */
berth_client_t *cli_connect (const char *cmd, const char *socket);

/* Print "berth CMD: CODE: MESSAGE" to stderr, the protocol's field names in
 * the message given as the CLI's options (cli_option_words); returns 1. */
int cli_daemon_fail (const char *cmd, const berth_client_error_t *err);

/* Print the grant's warning, when berthd gave one (a duration that runs
 * past the job's end under --deadline-policy warn), as "berth CMD: warning:
 * ..." on stderr. */
void cli_lease_warning (const char *cmd, const berth_lease_t *l);

/* A message of berthd's with the protocol's field names (may_span_nodes,
 * min_cores, ...) and phrases ("wait" is false) as the CLI's options. */
void cli_option_words (const char *in, char *out, size_t size);

/* The help line of --socket, its text starting at column: the default
 * that is used ($BERTH_SOCKET, else berthd's default path) and what that
 * is here. */
void cli_socket_help (FILE *f, int column);

/* Print text for a POSIX shell, single-quoted where needed. */
void cli_shell_word (FILE *f, const char *text);

#endif
