/* SPDX-License-Identifier: MIT */
/* berth acquire: take a detached lease for a shell script that releases it
 * later (berth release ID). The command exits at once, so a lease bound to
 * its connection would end with it: berth acquire always asks berthd for a
 * detached lease. */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_daemon.h"
#include "commands.h"
#include "request_options.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth acquire [OPTIONS]\n"
"Take a lease from berthd (waiting until it fits) and print it. The lease is\n"
"detached: it outlives this command and ends with 'berth release ID', its\n"
"--ttl, or the exit of its --owner-pid. (For a step that runs while it holds\n"
"its lease, and frees it however it ends, use 'berth run'.)\n"
"Exit status: 0 with the lease printed, 2 for a usage error, 125 when no\n"
"lease was taken (no berthd, refused as unsatisfiable or busy, --timeout\n"
"passed, berthd shutting down or gone), as berth run exits.\n\n");
    request_options_help (f);
    fprintf (f,
"Lease:\n"
"  --detach                 accepted for clarity: every lease taken here is\n"
"                           detached\n"
"  --ttl SECONDS            end the lease after this long\n"
"  --owner-pid PID          end the lease when process PID exits (e.g. $$)\n"
"  --no-wait                refuse at once (busy) when it does not fit now\n"
"Output (default: the lease id alone, for id=$(berth acquire ...)):\n"
"  --json                   the lease as berthd describes it; \"lease\" is its id\n"
"  --env                    export BERTH_...=... lines, for eval\n"
"  -h, --help               this text\n");
}

enum { OPT_DETACH = 256, OPT_TTL, OPT_OWNER, OPT_NOWAIT, OPT_JSON, OPT_ENV };

static const struct option options[] = {
    REQUEST_OPTIONS,
    { "detach", no_argument, NULL, OPT_DETACH },
    { "ttl", required_argument, NULL, OPT_TTL },
    { "owner-pid", required_argument, NULL, OPT_OWNER },
    { "no-wait", no_argument, NULL, OPT_NOWAIT },
    { "json", no_argument, NULL, OPT_JSON },
    { "env", no_argument, NULL, OPT_ENV },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int print_lease (const berth_lease_t *l, bool json, bool env)
{
    if (json) {
        char *s = berth_lease_json (l);
        if (!s)
            return cli_fail (1, "acquire", "out of memory");
        printf ("%s\n", s);
        free (s);
    } else if (env) {
        for (int i = 0; i < berth_lease_nenv (l); i++) {
            printf ("export %s=", berth_lease_env_name (l, i));
            cli_shell_word (stdout, berth_lease_env_value (l, i));
            putchar ('\n');
        }
    } else {
        printf ("%s\n", berth_lease_id (l));
    }
    return fflush (stdout) == 0 ? 0 : cli_fail (CLI_EXIT_BERTH, "acquire",
                                                "cannot write the lease");
}

/* Options into r; 0 to go on, else the exit status. */
static int parse (int argc, char **argv, berth_request_t *r, const char **socket,
                  bool *json, bool *env, bool *help)
{
    berth_client_error_t err;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, REQUEST_SHORT "h", options)) != -1) {
        int taken = request_option (r, socket, c, optarg, "acquire");
        if (taken < 0)
            return 2;
        if (taken)
            continue;
        switch (c) {
        case OPT_DETACH:
            break;
        case OPT_TTL: {
            char *end;
            double s = strtod (optarg, &end);
            if (end == optarg || *end || !isfinite (s)
                || berth_request_set_seconds (r, "ttl", s, &err) < 0)
                return cli_fail (2, "acquire", "--ttl wants a number of seconds from 0 "
                                 "to 31622400, got '%s'", optarg);
            break;
        }
        case OPT_OWNER: {
            int pid;
            if (cli_int (optarg, 1, 1 << 22, &pid) < 0)
                return cli_fail (2, "acquire", "--owner-pid wants a process id, got '%s'",
                                 optarg);
            berth_request_set_int (r, "owner_pid", pid, NULL);
            break;
        }
        case OPT_NOWAIT:
            berth_request_set_bool (r, "wait", 0, NULL);
            break;
        case OPT_JSON:
            *json = true;
            break;
        case OPT_ENV:
            *env = true;
            berth_request_set_bool (r, "env", 1, NULL);
            break;
        case 'h':
            *help = true;
            return 0;
        default:
            return cli_bad_option ("acquire", argv);
        }
    }
    if (optind < argc)
        return cli_fail (2, "acquire", "unexpected argument '%s'; to run a program in a "
                         "lease use berth run", argv[optind]);
    if (*json && *env)
        return cli_fail (2, "acquire", "--json and --env are two outputs; choose one");
    return 0;
}

int cmd_acquire (int argc, char **argv)
{
    berth_client_error_t err;
    const char *socket = NULL;
    bool json = false, env = false, help = false;
    berth_request_t *r = berth_request_new ();
    if (!r)
        return cli_fail (CLI_EXIT_BERTH, "acquire", "out of memory");
    berth_request_set_bool (r, "detach", 1, NULL);
    int rc = parse (argc, argv, r, &socket, &json, &env, &help);
    if (rc || help) {
        if (help)
            usage (stdout);
        berth_request_free (r);
        return rc;
    }
    berth_client_t *c = cli_connect ("acquire", socket);
    berth_lease_t *l = c ? berth_acquire (c, r, &err) : NULL;
    if (c && !l)
        rc = (cli_daemon_fail ("acquire", &err), CLI_EXIT_BERTH);
    else if (!c)
        rc = CLI_EXIT_BERTH;
    else {
        cli_lease_warning ("acquire", l);
        rc = print_lease (l, json, env);
    }
    berth_lease_free (l);
    berth_close (c);
    berth_request_free (r);
    return rc;
}
