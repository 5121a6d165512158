/* SPDX-License-Identifier: MIT */
/* berth release: end leases by id (detached leases from berth acquire). */
#include <getopt.h>
#include <stdio.h>

#include "cli_daemon.h"
#include "commands.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth release [--socket PATH] LEASE...\n"
"End the leases named (ids as berth acquire prints them, e.g. L17). An\n"
"unknown or already released lease is an error and changes nothing.\n\n");
    cli_socket_help (f, 19);
    fprintf (f, "  -h, --help       this text\n");
}

static const struct option options[] = {
    { "socket", required_argument, NULL, 's' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_release (int argc, char **argv)
{
    const char *socket = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "+h", options)) != -1) {
        switch (c) {
        case 's':
            socket = optarg;
            break;
        default:
            return cli_help_or_bad_option (c, "release", argv, usage);
        }
    }
    if (optind >= argc)
        return cli_fail (2, "release", "no lease given: berth release LEASE... "
                         "(berth status lists the leases)");
    berth_client_t *cl = cli_connect ("release", socket);
    if (!cl)
        return 1;
    int rc = 0;
    for (int i = optind; i < argc; i++) {
        berth_client_error_t err;
        if (berth_release (cl, argv[i], &err) < 0)
            rc = cli_daemon_fail ("release", &err);
    }
    berth_close (cl);
    return rc;
}
