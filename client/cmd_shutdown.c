/* SPDX-License-Identifier: MIT */
/* berth shutdown: stop berthd and return once it has finished and removed
 * its socket (or after a timeout, saying so). */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_daemon.h"
#include "commands.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth shutdown [--drain | --force] [--timeout SECONDS] [--socket PATH]\n"
"Stop berthd and wait until it has finished and removed its socket.\n\n"
"  --drain            refuse new leases, let the held ones end, then stop\n"
"                     (the default)\n"
"  --force            end every lease now and stop\n"
"  --timeout SECONDS  give up waiting after this long (default 60; 0: do\n"
"                     not wait); exit 1 when berthd has not finished by then\n");
    cli_socket_help (f, 21);
    fprintf (f, "  -h, --help         this text\n");
}

enum { OPT_DRAIN = 256, OPT_FORCE, OPT_TIMEOUT, OPT_SOCKET };

static const struct option options[] = {
    { "drain", no_argument, NULL, OPT_DRAIN },
    { "force", no_argument, NULL, OPT_FORCE },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "socket", required_argument, NULL, OPT_SOCKET },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_shutdown (int argc, char **argv)
{
    enum berth_shutdown_mode mode = BERTH_SHUTDOWN_DRAIN;
    const char *socket = NULL;
    double timeout = 60;
    bool drain = false, force = false;
    char *end;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "h", options)) != -1) {
        switch (c) {
        case OPT_DRAIN:
            drain = true;
            break;
        case OPT_FORCE:
            force = true;
            mode = BERTH_SHUTDOWN_FORCE;
            break;
        case OPT_TIMEOUT:
            timeout = strtod (optarg, &end);
            if (end == optarg || *end || !isfinite (timeout) || timeout < 0)
                return cli_fail (2, "shutdown", "--timeout wants a number of seconds "
                                 ">= 0, got '%s'", optarg);
            break;
        case OPT_SOCKET:
            socket = optarg;
            break;
        default:
            return cli_help_or_bad_option (c, "shutdown", argv, usage);
        }
    }
    if (cli_no_operands ("shutdown", "", argc, argv))
        return 2;
    if (drain && force)
        return cli_fail (2, "shutdown", "--drain and --force contradict each other; "
                         "choose one");
    berth_client_t *cl = cli_connect ("shutdown", socket);
    if (!cl)
        return 1;
    berth_client_error_t err;
    int rc = 0;
    if (berth_shutdown (cl, mode, timeout > 0 ? timeout : -1, &err) < 0)
        rc = cli_daemon_fail ("shutdown", &err);
    else if (timeout > 0)
        printf ("berthd at %s has stopped\n", berth_socket_path (cl));
    else
        printf ("berthd at %s is stopping\n", berth_socket_path (cl));
    berth_close (cl);
    return rc;
}
