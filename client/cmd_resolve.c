/* berth resolve: choose partition / qos / queue, constraint, node count and
 * wall time for a job of N nodes on a machine. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "commands.h"
#include "machine.h"
#include "resolve.h"
#include "targets.h"
#include "wallclock.h"

#define MAX_CONFIGS 64

static const char usage_text[] =
    "Usage: berth resolve --nodes N [--machine M] [--config FILE]... "
    "[--compiler C]\n"
    "         [--partition P] [--qos Q] [--queue Q] [--constraint C]\n"
    "         [--scheduler-target T] [--min-nodes-allowed K] "
    "[--wall-time HH:MM:SS]\n"
    "         [--json | --script]\n"
    "Choose the partition and qos (Slurm) or queue (PBS), constraint, node "
    "count\nand wall time for a job of N nodes. Requests on an axis the "
    "machine does not\nuse are ignored. --script prints job-script header "
    "lines instead.\n";

static int positive (const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol (text, &end, 10);
    if (end == text || *end || errno || v < 1 || v > 1000000000)
        return -1;
    *out = (int) v;
    return 0;
}

static void print_field (const char *name, const char *value)
{
    printf ("%-16s %s\n", name, value && *value ? value : "(none)");
}

static void print_human (const struct machine *m, const struct resolution *r)
{
    char n[32];
    printf ("%-16s %s%s%s%s\n", "machine", m->name,
            m->chosen_why ? " (" : "", m->chosen_why ? m->chosen_why : "",
            m->chosen_why ? ")" : "");
    print_field ("scheduler", r->scheduler);
    if (r->pbs)
        print_field ("queue", r->queue);
    else {
        print_field ("partition", r->partition);
        print_field ("qos", r->qos);
    }
    print_field ("constraint", r->constraint);
    print_field ("gpus_per_node", r->gpus_per_node);
    print_field ("max_wallclock", r->max_wallclock);
    if (r->pbs)
        print_field ("filesystems", r->filesystems);
    snprintf (n, sizeof (n), "%d", r->requested_nodes);
    print_field ("requested_nodes", n);
    snprintf (n, sizeof (n), "%d", r->effective_nodes);
    print_field ("effective_nodes", n);
    print_field ("adjustment", adjustment_name (r->adjustment));
    print_field ("wall_time", r->wall_time);
    print_field ("honored", r->honored ? "yes" : "no");
    print_field ("reason", r->reason ? r->reason
                 : "none, everything requested was honored");
}

static int emit (const struct machine *m, const struct machine_targets *t,
                 const struct resolution *r, bool json, bool script)
{
    if (json) {
        json_t *o = resolution_to_json (r);
        char *s = NULL;
        if (o && json_object_set_new (o, "machine", json_string (m->name)) == 0)
            s = json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS);
        json_decref (o);
        if (!s)
            return cli_fail (1, "resolve", "out of memory writing JSON");
        printf ("%s\n", s);
        free (s);
    } else if (script) {
        char *s = resolution_script (r, t);
        if (!s)
            return cli_fail (1, "resolve", "out of memory writing the script");
        fputs (s, stdout);
        free (s);
        if (r->reason)
            fprintf (stderr, "berth resolve: note: %s\n", r->reason);
    } else
        print_human (m, r);
    return 0;
}

int cmd_resolve (int argc, char **argv)
{
    enum { OPT_PARTITION = 256, OPT_QOS, OPT_QUEUE, OPT_CONSTRAINT,
           OPT_TARGET, OPT_MIN_NODES, OPT_WALL, OPT_COMPILER, OPT_JSON,
           OPT_SCRIPT };
    static const struct option longopts[] = {
        { "machine", required_argument, NULL, 'm' },
        { "nodes", required_argument, NULL, 'n' },
        { "config", required_argument, NULL, 'c' },
        { "compiler", required_argument, NULL, OPT_COMPILER },
        { "partition", required_argument, NULL, OPT_PARTITION },
        { "qos", required_argument, NULL, OPT_QOS },
        { "queue", required_argument, NULL, OPT_QUEUE },
        { "constraint", required_argument, NULL, OPT_CONSTRAINT },
        { "scheduler-target", required_argument, NULL, OPT_TARGET },
        { "min-nodes-allowed", required_argument, NULL, OPT_MIN_NODES },
        { "wall-time", required_argument, NULL, OPT_WALL },
        { "json", no_argument, NULL, OPT_JSON },
        { "script", no_argument, NULL, OPT_SCRIPT },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct resolve_request req = { .min_nodes_allowed = 1 };
    const char *configs[MAX_CONFIGS + 1] = { NULL };
    struct machine_options mopts = { .configs = configs };
    int nconfigs = 0, opt;
    bool json = false, script = false;
    long long secs;

    optind = 0;
    opterr = 0;
    while ((opt = getopt_long (argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'm': mopts.name = optarg; break;
        case 'c':
            if (nconfigs == MAX_CONFIGS)
                return cli_fail (2, "resolve", "at most %d --config files",
                                 MAX_CONFIGS);
            configs[nconfigs++] = optarg;
            break;
        case OPT_COMPILER: mopts.compiler = optarg; break;
        case 'n':
            if (positive (optarg, &req.nodes) < 0)
                return cli_fail (2, "resolve", "--nodes '%s' is not a "
                                 "positive whole number", optarg);
            break;
        case OPT_MIN_NODES:
            if (positive (optarg, &req.min_nodes_allowed) < 0)
                return cli_fail (2, "resolve", "--min-nodes-allowed '%s' is "
                                 "not a positive whole number", optarg);
            break;
        case OPT_PARTITION: req.partition = optarg; break;
        case OPT_QOS: req.qos = optarg; break;
        case OPT_QUEUE: req.queue = optarg; break;
        case OPT_CONSTRAINT: req.constraint = optarg; break;
        case OPT_TARGET: req.scheduler_target = optarg; break;
        case OPT_WALL:
            if (!resolve_no_request (optarg)
                && wallclock_parse (optarg, &secs) < 0)
                return cli_fail (2, "resolve", "--wall-time '%s' is not "
                                 "HH:MM:SS (hours may exceed 24)", optarg);
            req.wall_time = optarg;
            break;
        case OPT_JSON: json = true; break;
        case OPT_SCRIPT: script = true; break;
        case 'h': fputs (usage_text, stdout); return 0;
        case ':':
            fputs (usage_text, stderr);
            return cli_fail (2, "resolve", "%s needs a value",
                             argv[optind - 1]);
        default:
            fputs (usage_text, stderr);
            return cli_fail (2, "resolve", "unknown option '%s'",
                             argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_fail (2, "resolve", "unexpected argument '%s'",
                         argv[optind]);
    if (req.nodes == 0)
        return cli_fail (2, "resolve", "--nodes N is required");
    if (json && script)
        return cli_fail (2, "resolve", "--json and --script exclude each "
                         "other; pick one");

    struct machine *m = NULL;
    struct machine_targets *t = NULL;
    struct resolution r;
    berth_error_t err = { 0 };
    int rc;

    if (machine_load (&mopts, &m, &err) < 0)
        return cli_fail (1, "resolve", "%s", err.text);
    if (targets_load_machine (m, &t, &err) < 0
        || resolve_job (t, &req, &r, &err) < 0) {
        rc = cli_fail (1, "resolve", "%s", err.text);
    } else {
        rc = emit (m, t, &r, json, script);
        resolution_clear (&r);
    }
    targets_destroy (t);
    machine_destroy (m);
    return rc;
}
