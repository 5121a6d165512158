/* SPDX-License-Identifier: MIT */
/* berth size: a step's GPUs or cores from its cell count,
 * printed as request options for berth run. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_common.h"
#include "commands.h"
#include "launch_fit.h"
#include "machine.h"
#include "sizing.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth size --cells N [OPTIONS]\n"
"The GPUs or cores for a step of N cells: the target from the goal cells per\n"
"unit, the minimum from the most cells one unit can hold. Prints request\n"
"options for berth run and berth acquire, e.g.\n"
"  berth run $(berth size --cells 100000) -- ./model\n\n"
"  --cells N                    the step's cell count (required)\n"
"  --gpus, --cores              size in GPUs or in cores (default: GPUs when\n"
"                               the machine has them, else cores; GPUs where\n"
"                               the compiler section has none are refused)\n"
"  --goal-cells-per-gpu N       default: [sizing] goal_cells_per_gpu, else %d\n"
"  --max-cells-per-gpu N        default: [sizing] max_cells_per_gpu, else %d\n"
"  --goal-cells-per-core N      default: [sizing] goal_cells_per_core\n"
"  --max-cells-per-core N       default: [sizing] max_cells_per_core\n"
"  --machine NAME, --config FILE, --compiler C, --machine-path DIR\n"
"                               where the [sizing] figures come from\n"
"  --json                       an object instead of options\n"
"  -h, --help                   this text\n",
             SIZING_GOAL_CELLS_PER_GPU, SIZING_MAX_CELLS_PER_GPU);
}

enum {
    OPT_CELLS = 256, OPT_GPUS, OPT_CORES, OPT_GOAL_GPU, OPT_MAX_GPU,
    OPT_GOAL_CORE, OPT_MAX_CORE, OPT_JSON,
};

static const struct option options[] = {
    MACHINE_OPTIONS,
    { "cells", required_argument, NULL, OPT_CELLS },
    { "gpus", no_argument, NULL, OPT_GPUS },
    { "cores", no_argument, NULL, OPT_CORES },
    { "goal-cells-per-gpu", required_argument, NULL, OPT_GOAL_GPU },
    { "max-cells-per-gpu", required_argument, NULL, OPT_MAX_GPU },
    { "goal-cells-per-core", required_argument, NULL, OPT_GOAL_CORE },
    { "max-cells-per-core", required_argument, NULL, OPT_MAX_CORE },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* Per-unit figures: -1 until an option or the machine gives them. */
struct size_args {
    struct machine_args machine;
    long long cells;
    int resource;                 /* -1: by the machine's GPUs */
    long long figure[4];          /* goal gpu, max gpu, goal core, max core */
    bool json;
};

static const char *const figure_keys[4] = {
    "goal_cells_per_gpu", "max_cells_per_gpu", "goal_cells_per_core",
    "max_cells_per_core",
};

static const char *const figure_options[4] = {
    "--goal-cells-per-gpu", "--max-cells-per-gpu", "--goal-cells-per-core",
    "--max-cells-per-core",
};

static int positive (const char *option, const char *arg, long long *out)
{
    if (cli_llong (arg, out) < 0 || *out < 1)
        return cli_fail (2, "size", "%s wants a positive number of cells, got '%s'",
                         option, arg), -1;
    return 0;
}

/* -1: go on; else the exit status. */
static int parse_args (int argc, char **argv, struct size_args *a)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "+h", options)) != -1) {
        if (machine_args_option (&a->machine, c, optarg))
            continue;
        switch (c) {
        case OPT_CELLS:
            if (positive ("--cells", optarg, &a->cells) < 0)
                return 2;
            break;
        case OPT_GPUS:
        case OPT_CORES: {
            int r = c == OPT_GPUS ? SIZING_GPUS : SIZING_CORES;
            if (a->resource >= 0 && a->resource != r)
                return cli_fail (2, "size", "--gpus and --cores contradict each "
                                 "other; give one");
            a->resource = r;
            break;
        }
        case OPT_GOAL_GPU:
        case OPT_MAX_GPU:
        case OPT_GOAL_CORE:
        case OPT_MAX_CORE:
            if (positive (figure_options[c - OPT_GOAL_GPU], optarg,
                          &a->figure[c - OPT_GOAL_GPU]) < 0)
                return 2;
            break;
        case OPT_JSON: a->json = true; break;
        default:
            return cli_help_or_bad_option (c, "size", argv, usage);
        }
    }
    if (cli_no_operands ("size", " (see --help)", argc, argv))
        return 2;
    if (a->cells == 0)
        return cli_fail (2, "size", "--cells N is required (see --help)");
    return -1;
}

/* A [sizing] figure of the machine: 0 with *out set or left (absent), -1 on
 * a bad value. */
static int machine_figure (struct machine *m, const char *key, long long *out,
                           berth_error_t *err)
{
    const char *v;
    long long n;
    if (config_get (m->cfg, "sizing", key, &v, err) < 0)
        return -1;
    if (!v || !*v)
        return 0;
    if (cli_llong (v, &n) < 0 || n < 1) {
        const char *file = "?";
        int line = 0;
        config_origin (m->cfg, "sizing", key, &file, &line);
        return errprintf (err, "%s:%d: [sizing] %s must be a positive number of "
                          "cells, got '%s'", file, line, key, v);
    }
    *out = n;
    return 0;
}

static int print_json (const struct size_args *a, const struct sizing_request *req,
                       const struct sizing_result *res, const char *opts)
{
    bool gpus = res->resource == SIZING_GPUS;
    json_t *o = json_pack ("{s:I s:s s:I s:I s:i s:i s:s s:{s:i s:i}}",
                           "cells", (json_int_t) a->cells,
                           "resource", sizing_resource_name (res->resource),
                           gpus ? "goal_cells_per_gpu" : "goal_cells_per_core",
                           (json_int_t) req->goal_cells_per_unit,
                           gpus ? "max_cells_per_gpu" : "max_cells_per_core",
                           (json_int_t) req->max_cells_per_unit,
                           "target", res->target, "min", res->min,
                           "options", opts,
                           "request", gpus ? "gpus" : "ntasks", res->target,
                           gpus ? "min_gpus" : "min_tasks", res->min);
    if (!o)
        return cli_fail (1, "size", "out of memory");
    cli_print_json (o);
    json_decref (o);
    return 0;
}

int cmd_size (int argc, char **argv)
{
    struct size_args a = { .resource = -1, .figure = { -1, -1, -1, -1 } };
    struct machine *m = NULL;
    berth_error_t err;
    int rc = parse_args (argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (machine_args_load (&a.machine, &m, &err) < 0)
        return cli_fail (1, "size", "%s", err.text);
    for (int i = 0; i < 4; i++)
        if (a.figure[i] < 0 && machine_figure (m, figure_keys[i], &a.figure[i], &err) < 0) {
            machine_destroy (m);
            return cli_fail (1, "size", "%s", err.text);
        }
    if (a.resource < 0)
        a.resource = m->par.gpus_per_node > 0 ? SIZING_GPUS : SIZING_CORES;
    struct sizing_request req = { .cells = a.cells, .resource = a.resource };
    if (a.resource == SIZING_GPUS) {
        req.goal_cells_per_unit = a.figure[0] > 0 ? a.figure[0] : SIZING_GOAL_CELLS_PER_GPU;
        req.max_cells_per_unit = a.figure[1] > 0 ? a.figure[1] : SIZING_MAX_CELLS_PER_GPU;
    }
    else if (a.figure[2] < 0 || a.figure[3] < 0) {
        rc = cli_fail (1, "size", "sizing in cores needs goal_cells_per_core and "
                       "max_cells_per_core; machine %s has no %s in [sizing]: give "
                       "--goal-cells-per-core and --max-cells-per-core, or add them "
                       "to a --config file", m->name,
                       a.figure[2] < 0 ? "goal_cells_per_core" : "max_cells_per_core");
        machine_destroy (m);
        return rc;
    }
    else {
        req.goal_cells_per_unit = a.figure[2];
        req.max_cells_per_unit = a.figure[3];
    }
    struct sizing_result res;
    char opts[96];
    if (sizing_compute (&req, &res, &err) < 0) {
        machine_destroy (m);
        return cli_fail (1, "size", "%s", err.text);
    }
    /* berthd's checks of such a step, against the machine's figures (on as
     * many nodes as it takes) */
    struct step_capacity cap;
    struct step_request step;
    step_request_init (&step);
    launch_fit_machine_capacity (m, 0, &cap);
    if (res.resource == SIZING_GPUS) {
        step.gpus = res.target;
        step.min_gpus = res.min;
    }
    else {
        step.ntasks = res.target;
        step.min_tasks = res.min;
    }
    if (launch_fit_step (&step, &cap, &err) < 0) {
        launch_fit_blame_machine (m, &err);
        rc = cli_fail (1, "size", "%s%s%s%s", err.text, res.resource == SIZING_GPUS
                       ? "; size in cores with --cores, or give a --compiler whose "
                         "section has GPUs (berth machine --machine " : "",
                       res.resource == SIZING_GPUS ? m->name : "",
                       res.resource == SIZING_GPUS ? " lists them)" : "");
        machine_destroy (m);
        return rc;
    }
    machine_destroy (m);
    sizing_options (&res, opts, sizeof (opts));
    if (a.json)
        return print_json (&a, &req, &res, opts);
    printf ("%s\n", opts);
    return 0;
}
