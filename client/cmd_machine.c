/* SPDX-License-Identifier: MIT */
/* berth machine: what a machine is (effective options, per-node figures,
 * account defaults, scheduler targets) and, with --allocation, what the
 * allocation this process stands in holds. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "machine.h"
#include "machine_view.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth machine [--machine NAME] [--config FILE]... [--compiler C]\n"
"                     [--machine-path DIR]... [--allocation] [--json]\n"
"Describe a machine: which one was chosen and why, which file was read and\n"
"why, the compilers it knows (each one's section and GPUs per node; * marks\n"
"the one in force, and why), its effective [parallel] options, per-node\n"
"cores, GPUs and memory, account defaults and scheduler targets. With\n"
"--allocation, the live allocation instead: system, job id, how liveness was\n"
"established, nodes, cores, GPUs, memory, placement support.\n"
"  --machine NAME        the machine (default: BERTH_MACHINE, else [discovery]\n"
"                        hostnames, else the batch job's generic machine, else\n"
"                        localhost)\n"
"  --config FILE         layered last (repeatable); a file that sets no\n"
"                        [parallel] system adjusts the machine chosen as\n"
"                        without it, one that sets it is a machine of its own\n"
"  --compiler C          compiler section to overlay ([parallel.C])\n"
"  --machine-path DIR    look for NAME.cfg in DIR before the shipped machines\n"
"                        (repeatable, searched in order, before the colon\n"
"                        list in BERTH_MACHINE_PATH, e.g. a site's own\n"
"                        machine files)\n"
"  --allocation          describe the live allocation\n"
"  --json                print one JSON object\n"
"  -h, --help            this text\n");
}

enum { OPT_JSON = 256, OPT_ALLOCATION };

static const struct option options[] = {
    MACHINE_OPTIONS,
    { "json", no_argument, NULL, OPT_JSON },
    { "allocation", no_argument, NULL, OPT_ALLOCATION },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_machine (int argc, char **argv)
{
    struct machine_args ma = { 0 };
    bool json = false, allocation = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "+h", options)) != -1) {
        if (machine_args_option (&ma, c, optarg))
            continue;
        switch (c) {
        case OPT_JSON: json = true; break;
        case OPT_ALLOCATION: allocation = true; break;
        default:
            return cli_help_or_bad_option (c, "machine", argv, usage);
        }
    }
    if (cli_no_operands ("machine", " (see --help)", argc, argv))
        return 2;

    berth_error_t err = { 0 };
    struct machine *m = NULL;
    json_t *view = NULL;
    int rc = 1;
    if (machine_args_load (&ma, &m, &err) < 0)
        goto error;
    if (allocation) {
        int status = machine_view_allocation (m, &view, &err);
        if (status != 0) {
            rc = status;
            goto error;
        }
    }
    else if (!(view = machine_view_json (m, &err)))
        goto error;
    if (json)
        cli_print_json (view);
    else if (allocation)
        machine_view_print_allocation (view, stdout);
    else
        machine_view_print (view, stdout);
    rc = 0;
    goto done;
error:
    if (json) {
        json_t *o = json_pack ("{s:{s:s s:s}}", "error", "code",
                               err.code ? err.code : "error", "message", err.text);
        cli_print_json (o);
        json_decref (o);
    }
    cli_fail (rc, "machine", "%s", err.text);
done:
    json_decref (view);
    machine_destroy (m);
    return rc;
}
