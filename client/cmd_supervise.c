/* SPDX-License-Identifier: MIT */
/* berth supervise: run a program as a supervised step tree (step_tree.h)
 * and exit with its status. The Python client starts its steps through it,
 * so that a timeout or a cancel (SIGTERM to this process) stops every
 * process of the step before the lease is released: one implementation of
 * the stop sequence, berth run's. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_daemon.h"
#include "commands.h"
#include "srun_after.h"
#include "step_tree.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth supervise [--grace SECONDS] [--time-limit SECONDS] [--nodes N]\n"
"                       [--] PROGRAM [ARGS...]\n"
"Run PROGRAM as a step whose every process (also those that leave its\n"
"process group) stays below this one, and exit once none runs, with\n"
"PROGRAM's status (128+N when it died by signal N). SIGINT, SIGTERM and\n"
"SIGHUP stop the step as berth run does: passed to every process, SIGKILL\n"
"after the grace (--grace, else BERTH_STOP_GRACE, default 10 s), a second\n"
"such signal kills at once. SIGUSR1 and\n"
"SIGUSR2 are passed on. No lease is taken: the caller holds one.\n"
"When PROGRAM is srun and died by a signal, the step it left in Slurm is\n"
"cancelled (scancel) and waited for; after any srun, Slurm's release of\n"
"the step is waited for (25 ms, 250 ms for several nodes).\n\n"
"  --grace SECONDS          between the stopping signal and SIGKILL\n"
"  --time-limit SECONDS     stop the step once it has run this long\n"
"  --nodes N                the lease's nodes (the wait after srun; default 1)\n"
"  -h, --help               show this help\n");
}

static const struct option options[] = {
    { "grace", required_argument, NULL, 'g' },
    { "time-limit", required_argument, NULL, 't' },
    { "nodes", required_argument, NULL, 'n' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_supervise (int argc, char **argv)
{
    const char *grace_text = NULL;
    double limit = 0;
    int c, nodes = 1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long (argc, argv, "+h", options, NULL)) != -1) {
        switch (c) {
        case 'g':
            grace_text = optarg;
            break;
        case 't': {
            char *end;
            errno = 0;
            limit = strtod (optarg, &end);
            if (errno || *end || end == optarg || !(limit > 0) || limit > 1e9)
                return cli_fail (CLI_EXIT_BERTH, "supervise", "--time-limit '%s': give "
                                 "the run time limit as seconds above 0", optarg);
            break;
        }
        case 'n': {
            char *end;
            errno = 0;
            long v = strtol (optarg, &end, 10);
            if (errno || *end || end == optarg || v < 1 || v > 1000000)
                return cli_fail (CLI_EXIT_BERTH, "supervise", "--nodes '%s': give the "
                                 "lease's node count, 1 or more", optarg);
            nodes = (int) v;
            break;
        }
        case 'h':
            usage (stdout);
            return 0;
        default:
            cli_bad_option ("supervise", argv);
            return CLI_EXIT_BERTH;
        }
    }
    if (optind >= argc)
        return cli_fail (CLI_EXIT_BERTH, "supervise", "no program given: put it after "
                         "'--', e.g. berth supervise -- ./model");
    double grace;
    berth_error_t e = { 0 };
    if (step_tree_grace (grace_text, &grace, &e) < 0)
        return cli_fail (CLI_EXIT_BERTH, "supervise", "%s", e.text);
    static const int watched[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };
    sigset_t set, old;
    sigemptyset (&set);
    for (size_t i = 0; i < sizeof (watched) / sizeof (watched[0]); i++) {
        struct sigaction prev;
        /* one ignored when this started (nohup) stays so, for the step too */
        if (sigaction (watched[i], NULL, &prev) == 0 && prev.sa_handler != SIG_IGN)
            sigaddset (&set, watched[i]);
    }
    sigprocmask (SIG_BLOCK, &set, &old);
    struct step_tree t;
    if (step_tree_start (&t, argv + optind, NULL, &old, "berth supervise", &e) < 0)
        return cli_fail (CLI_EXIT_BERTH, "supervise", "%s", e.text);
    int rc = step_tree_wait (&t, &set, grace, limit);
    srun_after (argv + optind, t.main, t.main_done, t.main_status, nodes,
                "berth supervise");
    return rc;
}
