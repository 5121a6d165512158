/* SPDX-License-Identifier: MIT */
/* berth render: the launch command for a step, with no daemon. */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "idset.h"
#include "launch_fit.h"
#include "launcher.h"
#include "launcher_detect.h"
#include "machine.h"
#include "placement.h"
#include "render.h"
#include "request_options.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth render [OPTIONS] -- PROGRAM [ARGS...]\n"
"Print the machine's launch command for PROGRAM.\n\n"
"Machine:\n"
"  --machine NAME          a shipped machine (default: chosen from the environment)\n"
"  --config FILE           a machine or user config file (repeatable, later wins)\n"
"  --compiler C            compiler section to overlay ([parallel.C])\n"
"  --machine-path DIR      look for NAME.cfg in DIR first (repeatable)\n"
"  --nodes N               render as inside an allocation of N nodes\n"
"  --launcher-version V    slurm:MAJOR.MINOR[.MICRO], pals, openmpi, mpich,\n"
"                          taskset or none (openmpi, mpich: taskset and that\n"
"                          MPI's mpirun on a single_node machine)\n"
"                          (default: detected from the installed launcher)\n"
"Step:\n"
"  -n, --ntasks N          tasks (default 1)\n"
"  -c, --cpus-per-task N   cores per task (default: none given, and no flag\n"
"                          rendered: the launcher's one core per task)\n"
"  --gpus-per-task N       GPUs per task (unplaced launches)\n"
"  --cores N               one process of N cores that is not MPI (instead of\n"
"                          -n/-c): a single_node machine runs it without mpirun\n"
"Placement:\n"
"  --place-nodes A,B       node names (leave out for one core set on the\n"
"                          launcher's own node: no -w, no --hosts)\n"
"  --place-cores 'S;S'     one core id set per node, e.g. '0-3;0-3'\n"
"  --place-gpus N          GPUs of the placement in total (default 0)\n"
"  --place-gpu-ids I,J     their indices, the same on every node; 'I,J;K,L'\n"
"                          gives each node its own list (one per node)\n"
"  --memory MB             memory cap per node, as berth run's --memory\n"
"                          (8000, 8000M, 8G, 1T)\n"
"  --memory-cap MB         the same, in MB only\n"
"Output:\n"
"  --json                  {argv, env, system, placement_support,\n"
"                          memory_cap_support, launcher}\n"
"  -h, --help              this text\n");
}

enum {
    OPT_NODES = 256, OPT_LAUNCHER,
    OPT_GPT, OPT_CORES, OPT_PNODES, OPT_PCORES, OPT_PGPUS, OPT_PGPUIDS, OPT_MEMCAP, OPT_MEMORY, OPT_JSON,
};

static const struct option options[] = {
    MACHINE_OPTIONS,
    { "nodes", required_argument, NULL, OPT_NODES },
    { "launcher-version", required_argument, NULL, OPT_LAUNCHER },
    { "ntasks", required_argument, NULL, 'n' },
    { "cpus-per-task", required_argument, NULL, 'c' },
    { "gpus-per-task", required_argument, NULL, OPT_GPT },
    { "cores", required_argument, NULL, OPT_CORES },
    { "place-nodes", required_argument, NULL, OPT_PNODES },
    { "place-cores", required_argument, NULL, OPT_PCORES },
    { "place-gpus", required_argument, NULL, OPT_PGPUS },
    { "place-gpu-ids", required_argument, NULL, OPT_PGPUIDS },
    { "memory-cap", required_argument, NULL, OPT_MEMCAP },
    { "memory", required_argument, NULL, OPT_MEMORY },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

struct render_args {
    struct machine_args machine;
    int nodes;                 /* 0: from the environment */
    const char *launcher;
    int ntasks, cpus_per_task, gpus_per_task;
    int cores;                 /* 0: an MPI launch of ntasks */
    bool ntasks_given, cpt_given;
    const char *place_nodes, *place_cores, *place_gpu_ids;
    int place_gpus;
    bool has_cap;
    long long memory_cap;
    bool json;
    char **argv;
};

/* --place-gpu-ids: "I,J" (the same ids on every node) or "I,J;K,L" (one
 * list per node, an empty list for a node without GPUs). */
static int build_gpu_ids (const char *arg, struct placement *p, berth_error_t *err)
{
    if (!strchr (arg, ';')) {
        if (idlist_parse (arg, &p->gpu_ids, &p->ngpu_ids, err) < 0)
            return errprefix (err, "--place-gpu-ids: ");
        return 0;
    }
    char **sets = NULL;
    int nsets = 0, rc = -1;
    if (cli_split (arg, ';', &sets, &nsets, err) < 0)
        return -1;
    if (nsets != p->nnodes) {
        errprintf (err, "--place-gpu-ids gives %d GPU id list(s) separated by ';' but "
                   "the placement has %d node(s); give one list per node, or one "
                   "list without ';' for every node", nsets, p->nnodes);
        goto done;
    }
    p->node_gpu_ids = true;
    for (int i = 0; i < nsets; i++) {
        struct placement_node *n = &p->nodes[i];
        if (sets[i][0] && idlist_parse (sets[i], &n->gpu_ids, &n->ngpu_ids, err) < 0) {
            errprefix (err, "--place-gpu-ids for node %s: ", placement_node_label (p, i));
            goto done;
        }
        p->gpus += n->ngpu_ids;
    }
    rc = 0;
done:
    cli_strv_free (sets, nsets);
    return rc;
}

/* Build the placement from the --place-* options; nothing is built when none
 * was given. Core sets without --place-nodes are one node, unnamed: "here,
 * on whichever node the launcher uses". */
static int build_placement (const struct render_args *a, struct placement *p,
                            bool *have, berth_error_t *err)
{
    memset (p, 0, sizeof (*p));
    *have = a->place_nodes || a->place_cores || a->place_gpu_ids || a->place_gpus;
    if (!*have)
        return 0;
    if (!a->place_cores)
        return errprintf (err, "a placement needs --place-cores (one core set per "
                          "node, or one set alone for the launcher's node)");
    char **names = NULL, **sets = NULL;
    int nnames = 0, nsets = 0;
    if ((a->place_nodes && cli_split (a->place_nodes, ',', &names, &nnames, err) < 0)
        || cli_split (a->place_cores, ';', &sets, &nsets, err) < 0)
        goto fail;
    if (!a->place_nodes && nsets != 1) {
        errprintf (err, "--place-cores gives %d core sets but no --place-nodes: "
                   "without node names a placement is one node, one core set; name "
                   "the nodes with --place-nodes", nsets);
        goto fail;
    }
    if (a->place_nodes && nnames != nsets) {
        errprintf (err, "--place-nodes names %d node(s) but --place-cores gives %d "
                   "core set(s); give one set per node, separated by ';'",
                   nnames, nsets);
        goto fail;
    }
    p->nodes = calloc ((size_t) nsets, sizeof (*p->nodes));
    if (!p->nodes && nsets) {
        errprintf (err, "out of memory");
        goto fail;
    }
    p->nnodes = nsets;
    for (int i = 0; i < nsets; i++) {
        if (names) {
            p->nodes[i].name = names[i];
            names[i] = NULL;
        }
        if (idlist_parse (sets[i], &p->nodes[i].cores, &p->nodes[i].ncores, err) < 0) {
            errprefix (err, "--place-cores for node %s: ", placement_node_label (p, i));
            goto fail;
        }
    }
    if (a->place_gpu_ids && build_gpu_ids (a->place_gpu_ids, p, err) < 0)
        goto fail;
    if (!p->node_gpu_ids)
        p->gpus = a->place_gpu_ids && !a->place_gpus ? p->ngpu_ids : a->place_gpus;
    else if (a->place_gpus && a->place_gpus != p->gpus) {
        errprintf (err, "--place-gpus %d but the per-node --place-gpu-ids hold %d ids; "
                   "give one id per GPU (or leave --place-gpus out)", a->place_gpus,
                   p->gpus);
        goto fail;
    }
    cli_strv_free (names, nnames);
    cli_strv_free (sets, nsets);
    if (placement_validate (p, err) == 0)
        return 0;
    placement_free (p);
    return -1;
fail:
    cli_strv_free (names, nnames);
    cli_strv_free (sets, nsets);
    placement_free (p);
    return -1;
}

static json_t *launch_json (const struct launch *l, const char *system,
                            const struct launcher_caps *caps)
{
    json_t *argv = json_array (), *unset = json_array (), *set = json_object ();
    for (int i = 0; i < l->argc; i++)
        json_array_append_new (argv, json_string (l->argv[i]));
    for (int i = 0; i < l->n_unset; i++)
        json_array_append_new (unset, json_string (l->env_unset[i]));
    for (int i = 0; i < l->n_set; i++)
        json_object_set_new (set, l->env_set[i].name, json_string (l->env_set[i].value));
    return json_pack ("{s:o s:{s:o s:o} s:s s:s s:s s:s}",
                      "argv", argv, "env", "unset", unset, "set", set,
                      "system", system,
                      "placement_support", placement_support_name (caps->placement),
                      "memory_cap_support", memcap_support_name (caps->memcap),
                      "launcher", caps->desc);
}

static int parse_args (int argc, char **argv, struct render_args *a)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "+n:c:h", options)) != -1) {
        if (machine_args_option (&a->machine, c, optarg))
            continue;
        switch (c) {
        case OPT_NODES:
            if (cli_int (optarg, 1, 1 << 20, &a->nodes) < 0)
                return cli_fail (2, "render", "--nodes wants a positive integer, got '%s'", optarg);
            break;
        case OPT_LAUNCHER: a->launcher = optarg; break;
        case 'n':
            if (cli_int (optarg, 1, 1 << 24, &a->ntasks) < 0)
                return cli_fail (2, "render", "--ntasks wants a positive integer, got '%s'", optarg);
            a->ntasks_given = true;
            break;
        case OPT_CORES:
            if (cli_int (optarg, 1, 1 << 20, &a->cores) < 0)
                return cli_fail (2, "render", "--cores wants a positive integer, got '%s'", optarg);
            break;
        case 'c':
            if (cli_int (optarg, 0, 1 << 20, &a->cpus_per_task) < 0)
                return cli_fail (2, "render", "--cpus-per-task wants an integer >= 0, got '%s'", optarg);
            a->cpt_given = true;
            break;
        case OPT_GPT:
            if (cli_int (optarg, 0, 1 << 20, &a->gpus_per_task) < 0)
                return cli_fail (2, "render", "--gpus-per-task wants an integer >= 0, got '%s'", optarg);
            break;
        case OPT_PNODES: a->place_nodes = optarg; break;
        case OPT_PCORES: a->place_cores = optarg; break;
        case OPT_PGPUS:
            if (cli_int (optarg, 0, 1 << 20, &a->place_gpus) < 0)
                return cli_fail (2, "render", "--place-gpus wants an integer >= 0, got '%s'", optarg);
            break;
        case OPT_PGPUIDS: a->place_gpu_ids = optarg; break;
        case OPT_MEMCAP:
            /* the value is checked by the renderer (<= 0 is its error) */
            if (cli_llong (optarg, &a->memory_cap) < 0)
                return cli_fail (2, "render", "--memory-cap wants an integer number of MB, got '%s'", optarg);
            a->has_cap = true;
            break;
        case OPT_MEMORY:
            /* the same name and units as berth run --memory */
            if (request_parse_memory (optarg, &a->memory_cap) < 0)
                return cli_fail (2, "render", "--memory wants a size in MB (8000, 8000M, "
                                 "8G, 1T), got '%s'", optarg);
            a->has_cap = true;
            break;
        case OPT_JSON: a->json = true; break;
        default:
            return cli_help_or_bad_option (c, "render", argv, usage);
        }
    }
    if (a->cores && (a->ntasks_given || a->cpt_given))
        return cli_fail (2, "render", "--cores (one process that is not MPI) and "
                         "--ntasks/--cpus-per-task (an MPI launch) contradict each "
                         "other; give one");
    if (a->cores) {
        a->ntasks = 1;
        a->cpus_per_task = a->cores;
    }
    if (optind >= argc)
        return cli_fail (2, "render", "no program given: put it after '--', "
                         "e.g. berth render -n 4 -- ./model");
    a->argv = argv + optind;
    return -1;   /* go on */
}

int cmd_render (int argc, char **argv)
{
    struct render_args a = { .ntasks = 1 };
    int rc = parse_args (argc, argv, &a);
    if (rc >= 0)
        return rc;

    berth_error_t err = { 0 };
    struct machine *m = NULL;
    struct placement p;
    bool have_placement = false;
    struct launch l = { 0 };
    struct launcher_caps caps;
    struct machine_parallel par;
    const char *system = NULL;
    json_t *out = NULL;
    memset (&p, 0, sizeof (p));
    rc = 1;

    if (machine_args_load (&a.machine, &m, &err) < 0)
        goto error;
    par = m->par;
    int alloc_nodes = cli_allocation_nodes (&par, a.nodes);
    system = berth_system_name (par.system);
    if (a.launcher) {
        if (launcher_caps_parse (a.launcher, par.system, &caps, &err) < 0) {
            rc = 2;
            goto error;
        }
    }
    else
        launcher_detect (m, &caps);
    if (build_placement (&a, &p, &have_placement, &err) < 0)
        goto error;
    struct launch_request req = {
        .argv = a.argv,
        .ntasks = a.ntasks,
        .cpus_per_task = a.cpus_per_task,
        .gpus_per_task = a.gpus_per_task,
        .placement = have_placement ? &p : NULL,
        .has_memory_cap = a.has_cap,
        .memory_cap = a.memory_cap,
        .single_process = a.cores > 0,
    };
    /* berthd's checks of the request, against this machine's figures: what
     * no node holds first, then the launcher's own rules, then the shape */
    struct step_capacity cap;
    launch_fit_machine_capacity (m, alloc_nodes, &cap);
    if (have_placement && launch_fit_placement (&p, &cap, &err) < 0) {
        launch_fit_blame_machine (m, &err);
        goto error;
    }
    if (render_launch (&par, alloc_nodes, &caps, &req, &l, &err) < 0)
        goto error;
    if (launch_fit (&req, &cap, &err) < 0) {
        launch_fit_blame_machine (m, &err);
        goto error;
    }
    if (a.json) {
        out = launch_json (&l, system, &caps);
        cli_print_json (out);
    }
    else {
        /* the environment delta is applied by berth run; --json shows it */
        char *line = render_shell_quote (l.argv);
        printf ("%s\n", line ? line : "");
        free (line);
    }
    rc = 0;
    goto done;
error:
    if (a.json && rc == 1) {
        out = json_pack ("{s:{s:s s:s}}", "error", "code", err.code ? err.code : "error",
                         "message", err.text);
        cli_print_json (out);
    }
    cli_fail (rc, "render", "%s", err.text);
done:
    json_decref (out);
    launch_free (&l);
    placement_free (&p);
    machine_destroy (m);
    return rc;
}
