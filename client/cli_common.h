/* SPDX-License-Identifier: MIT */
/* Pieces shared by the berth subcommands: machine options, number parsing,
 * list splitting, JSON output. */
#ifndef BERTH_CLI_COMMON_H
#define BERTH_CLI_COMMON_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>

#include "error.h"
#include "machine.h"

#define CLI_MAX_CONFIGS 32

enum { CLI_OPT_MACHINE = 1000, CLI_OPT_CONFIG, CLI_OPT_COMPILER,
       CLI_OPT_MACHINE_PATH };

/* getopt_long entries for --machine, --config, --compiler, --machine-path */
#define MACHINE_OPTIONS \
    { "machine", required_argument, NULL, CLI_OPT_MACHINE }, \
    { "config", required_argument, NULL, CLI_OPT_CONFIG }, \
    { "compiler", required_argument, NULL, CLI_OPT_COMPILER }, \
    { "machine-path", required_argument, NULL, CLI_OPT_MACHINE_PATH }

struct machine_args {
    const char *name;
    const char *configs[CLI_MAX_CONFIGS + 1];
    int nconfigs;
    const char *compiler;
    const char *machine_path[CLI_MAX_CONFIGS + 1];
    int nmachine_path;
    bool too_many_configs, too_many_paths;
};

/* Take option c if it is one of MACHINE_OPTIONS; returns true when taken. */
bool machine_args_option (struct machine_args *a, int c, const char *arg);

/* Load the machine the options name (or the one chosen from the environment). */
int machine_args_load (const struct machine_args *a, struct machine **m,
                       berth_error_t *err);

/* Nodes of the allocation a stateless command renders for: --nodes when given;
 * else the batch job's node count from the environment (no scheduler query).
 * A Slurm or PBS machine outside a job is a login node: par->system becomes
 * BERTH_SYSTEM_LOGIN unless --nodes asks for a preview. */
int cli_allocation_nodes (struct machine_parallel *par, int nodes_option);

/* Strict integer parsing: the whole text, within [min, max]. */
int cli_int (const char *text, int min, int max, int *out);
int cli_llong (const char *text, long long *out);

/* Split on sep into trimmed, non-empty items (an empty item is an error that
 * names the text). */
int cli_split (const char *text, char sep, char ***items, int *count,
               berth_error_t *err);
void cli_strv_free (char **items, int count);

/* Print a JSON value on stdout, indented, with a newline. */
void cli_print_json (json_t *o);

#endif
