/* SPDX-License-Identifier: MIT */
/* berth resolve: choose partition / qos / queue, constraint, node count and
 * wall time for a job of N nodes on a machine. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_common.h"
#include "commands.h"
#include "machine.h"
#include "resolve.h"
#include "resolve_view.h"
#include "targets.h"
#include "wallclock.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth resolve --nodes N [OPTIONS]\n"
"Choose the partition and qos (Slurm) or queue (PBS), constraint, node count\n"
"and wall time for a job of N nodes. A request on an axis the machine does\n"
"not use is dropped; one that cannot be honored falls back to the default;\n"
"a node count outside a target's range is moved into it; a wall time past\n"
"the limit is capped. Each such change is listed, with why. Without\n"
"--wall-time the time is the limit in force, and the answer says which.\n\n"
"Machine:\n"
"  --machine NAME            a shipped machine (default: chosen from the environment)\n"
"  --config FILE             a machine or user config file (repeatable, later wins)\n"
"  --compiler C              compiler section to overlay ([parallel.C])\n"
"  --machine-path DIR        look for NAME.cfg in DIR first (repeatable)\n"
"Request:\n"
"  --nodes N                 nodes wanted (required)\n"
"  --min-nodes-allowed K     fewest nodes the job can run on (default 1)\n"
"  --partition P, --qos Q    Slurm targets\n"
"  --queue Q                 PBS queue\n"
"  --constraint C            node constraint\n"
"  --scheduler-target T      a name looked up in partitions, then qos (Slurm)\n"
"                            or queues (PBS)\n"
"  --wall-time T             desired wall time, as sbatch --time takes it (MM,\n"
"                            MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) or qsub\n"
"                            walltime (HH:MM:SS, SECONDS); a bare number is\n"
"                            minutes on Slurm, seconds on PBS; written back as\n"
"                            HH:MM:SS, which both take\n"
"  --account A               the account to charge (default: the machine's)\n"
"Output (default: one line per field):\n"
"  --json                    an object with every field; numbers as numbers\n"
"  --script                  #SBATCH / #PBS job-script header lines, after\n"
"                            comments saying where the time came from and\n"
"                            every change\n"
"  --strict                  exit 3 when a request could not be honored\n"
"  -h, --help                this text\n"
"Exit status: 0 answered (also when not honored, without --strict); 1 the\n"
"machine or the request cannot be resolved; 2 bad usage; 3 with --strict, a\n"
"request was not honored (the answer is still printed).\n");
}

enum {
    OPT_NODES = 256, OPT_MIN_NODES, OPT_PARTITION, OPT_QOS, OPT_QUEUE,
    OPT_CONSTRAINT, OPT_TARGET, OPT_WALL, OPT_JSON, OPT_SCRIPT, OPT_ACCOUNT,
    OPT_STRICT,
};

/* berth resolve --strict: a request that was not honored. */
#define RESOLVE_EXIT_NOT_HONORED 3

static const struct option options[] = {
    MACHINE_OPTIONS,
    { "nodes", required_argument, NULL, OPT_NODES },
    { "min-nodes-allowed", required_argument, NULL, OPT_MIN_NODES },
    { "partition", required_argument, NULL, OPT_PARTITION },
    { "qos", required_argument, NULL, OPT_QOS },
    { "queue", required_argument, NULL, OPT_QUEUE },
    { "constraint", required_argument, NULL, OPT_CONSTRAINT },
    { "scheduler-target", required_argument, NULL, OPT_TARGET },
    { "wall-time", required_argument, NULL, OPT_WALL },
    { "json", no_argument, NULL, OPT_JSON },
    { "script", no_argument, NULL, OPT_SCRIPT },
    { "account", required_argument, NULL, OPT_ACCOUNT },
    { "strict", no_argument, NULL, OPT_STRICT },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

struct resolve_args {
    struct machine_args machine;
    struct resolve_request req;
    bool json, script, strict;
};

/* Returns -1 to go on, else the exit status. */
static int parse_args (int argc, char **argv, struct resolve_args *a)
{
    int c;
    long long secs;

    a->req.min_nodes_allowed = 1;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "+h", options)) != -1) {
        if (machine_args_option (&a->machine, c, optarg))
            continue;
        switch (c) {
        case OPT_NODES:
            if (cli_int (optarg, 1, 1 << 30, &a->req.nodes) < 0)
                return cli_fail (2, "resolve", "--nodes wants a positive "
                                 "integer, got '%s'", optarg);
            break;
        case OPT_MIN_NODES:
            if (cli_int (optarg, 1, 1 << 30, &a->req.min_nodes_allowed) < 0)
                return cli_fail (2, "resolve", "--min-nodes-allowed wants a "
                                 "positive integer, got '%s'", optarg);
            break;
        case OPT_PARTITION: a->req.partition = optarg; break;
        case OPT_QOS: a->req.qos = optarg; break;
        case OPT_QUEUE: a->req.queue = optarg; break;
        case OPT_CONSTRAINT: a->req.constraint = optarg; break;
        case OPT_TARGET: a->req.scheduler_target = optarg; break;
        case OPT_WALL:
            /* Checked here, so that a typo is not silently passed through;
             * a bare number reads as Slurm or PBS read it, once the machine
             * is known. */
            if (!resolve_no_request (optarg)
                && wallclock_read (optarg, WALLCLOCK_SLURM, &secs) < 0)
                return cli_fail (2, "resolve", "--wall-time '%s' is in no "
                                 "form the schedulers take: write "
                                 WALLCLOCK_FORMS, optarg);
            a->req.wall_time = optarg;
            break;
        case OPT_ACCOUNT: a->req.account = optarg; break;
        case OPT_JSON: a->json = true; break;
        case OPT_SCRIPT: a->script = true; break;
        case OPT_STRICT: a->strict = true; break;
        default:
            return cli_help_or_bad_option (c, "resolve", argv, usage);
        }
    }
    if (cli_no_operands ("resolve", " (see --help)", argc, argv))
        return 2;
    if (a->req.nodes == 0)
        return cli_fail (2, "resolve", "--nodes N is required (see --help)");
    if (a->json && a->script)
        return cli_fail (2, "resolve", "--json and --script exclude each "
                         "other; pick one");
    return -1;
}

static void field (const char *name, const char *value)
{
    printf ("%-16s %s\n", name, value && *value ? value : "(none)");
}


static void print_human (const struct machine *m, const struct resolution *r)
{
    char n[32];
    if (m->chosen_why)
        printf ("%-16s %s (%s)\n", "machine", m->name, m->chosen_why);
    else
        field ("machine", m->name);
    field ("scheduler", r->scheduler);
    if (r->pbs)
        field ("queue", r->queue);
    else {
        field ("partition", r->partition);
        field ("qos", r->qos);
    }
    field ("constraint", r->constraint);
    if (*r->account)
        printf ("%-16s %s (%s)\n", "account", r->account, r->account_from);
    else
        field ("account", "");
    snprintf (n, sizeof (n), "%d", r->gpus);
    field ("gpus_per_node", n);
    if (*r->max_wallclock)
        printf ("%-16s %s (%s)\n", "max_wallclock", r->max_wallclock,
                r->max_wallclock_from);
    else
        field ("max_wallclock", "");
    if (r->pbs)
        field ("filesystems", r->filesystems);
    snprintf (n, sizeof (n), "%d", r->requested_nodes);
    field ("requested_nodes", n);
    snprintf (n, sizeof (n), "%d", r->effective_nodes);
    field ("effective_nodes", n);
    field ("adjustment", adjustment_name (r->adjustment));
    if (*r->wall_time)
        printf ("%-16s %s (%s)\n", "wall_time", r->wall_time,
                r->wall_time_from);
    else
        field ("wall_time", "");
    field ("honored", r->honored ? "yes" : "no");
    for (int i = 0; i < r->nchanges; i++) {
        char *c = resolve_change_text (&r->changes[i]);
        field (i ? "" : "changed", c ? c : "?");
        free (c);
    }
    field ("reason", r->reason ? r->reason
           : r->nchanges ? "none: honored, with the changes above"
                         : "none: everything asked for was honored, as asked");
}

static int emit (const struct resolve_args *a, const struct machine *m,
                 const struct resolution *r)
{
    if (a->json) {
        json_t *o = resolution_to_json (r);
        if (!o || json_object_set_new (o, "machine", json_string (m->name)) < 0) {
            json_decref (o);
            return cli_fail (1, "resolve", "out of memory writing JSON");
        }
        cli_print_json (o);
        json_decref (o);
    } else if (a->script) {
        char *s = resolution_script (r);
        if (!s)
            return cli_fail (1, "resolve", "out of memory writing the script");
        fputs (s, stdout);
        free (s);
        if (r->reason)
            fprintf (stderr, "berth resolve: not honored: %s\n", r->reason);
    } else
        print_human (m, r);
    return 0;
}

int cmd_resolve (int argc, char **argv)
{
    struct resolve_args a = { 0 };
    struct machine *m = NULL;
    struct machine_targets *t = NULL;
    struct resolution r;
    berth_error_t err = { 0 };
    int rc = parse_args (argc, argv, &a);

    if (rc >= 0)
        return rc;
    if (machine_args_load (&a.machine, &m, &err) < 0)
        return cli_fail (1, "resolve", "%s", err.text);
    if (targets_load_machine (m, &t, &err) < 0
        || resolve_job (t, &a.req, &r, &err) < 0)
        rc = cli_fail (1, "resolve", "%s", err.text);
    else {
        rc = emit (&a, m, &r);
        if (rc == 0 && a.strict && !r.honored)
            rc = RESOLVE_EXIT_NOT_HONORED;
        resolution_clear (&r);
    }
    targets_destroy (t);
    machine_destroy (m);
    return rc;
}
