/* SPDX-License-Identifier: MIT */
/* A machine: the layered config (default.cfg -> machines/<name>.cfg -> user
 * files) and the effective [parallel] options for one compiler. Loading one
 * (files, environment, host) is sys/machine_select.h. */
#ifndef BERTH_MACHINE_H
#define BERTH_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "error.h"

enum berth_system {
    BERTH_SYSTEM_SLURM,
    BERTH_SYSTEM_PBS,
    BERTH_SYSTEM_SINGLE_NODE,
    BERTH_SYSTEM_LOGIN,
};

const char *berth_system_name (enum berth_system s);
int berth_system_parse (const char *text, enum berth_system *s,
                        berth_error_t *err);

/* Effective [parallel] options ([parallel] overlaid with
 * [parallel.<compiler>]). Strings are NULL when unset (empty values count as
 * unset); numbers use the sentinels noted. */
struct machine_parallel {
    enum berth_system system;
    char *parallel_executable;
    int cores_per_node;          /* 0: unset */
    int gpus_per_node;           /* default 0 */
    int64_t memory_per_node;     /* MB; -1: unknown */
    int max_mpi_tasks_per_node;  /* 0: unset */
    char *cpus_per_task_flag;
    char *gpus_per_task_flag;
    char *cpu_bind;
    char *gpu_bind;
    char *mem_bind;
    char *distribution;
    char *placement;             /* legacy distribution type, e.g. "plane" */
    char *gpu_visible_devices_var;
    int login_cores;
    int login_gpus;
    char *account;
};

struct machine {
    char *name;         /* "pm-cpu", "localhost", "slurm" (generic), ... */
    char *compiler;     /* as given (NULL when none); section uses '_' */
    char *compiler_why; /* which compiler section is in force and why */
    char *compiler_warning; /* a compiler the machine does not know, taken
                               because it lists no compilers; else NULL */
    char *chosen_why;   /* how the machine was chosen, for people */
    char *file;         /* the machine file read (a path, or machines/X.cfg
                         * for a shipped one); NULL for a generic machine */
    char *file_why;     /* why that file: where on the search path, or
                         * shipped; NULL with file */
    struct config *cfg; /* the layered config, owned */
    struct machine_parallel par;
};

void machine_destroy (struct machine *m);

/* Names of the shipped machines (NULL-terminated, static). */
const char *const *machine_shipped_names (void);

/* Text of a shipped machine file ("default", "pm-cpu", ...) or NULL. */
const char *machine_shipped_text (const char *name);

/* Every effective [parallel] key (lower case) with its interpolated text, in a
 * stable order; *count entries in parallel arrays of borrowed strings the
 * caller frees (the arrays only). */
int machine_parallel_options (struct machine *m, const char ***keys,
                              const char ***values, int *count,
                              berth_error_t *err);

/* The compilers machine m knows: the [build] compiler, the [build] compilers
 * list, then its [parallel.<compiler>] sections, each once ('-' and '_'
 * alike). *names (caller frees items and array) may be empty. */
int machine_compilers (struct machine *m, char ***names, int *count,
                       berth_error_t *err);

/* True when m has a [parallel.<compiler>] section ('-' as '_'). */
bool machine_has_compiler_section (const struct machine *m, const char *compiler);

/* Split a comma list option ("regular, debug") into trimmed items; empty items
 * dropped. Caller frees items and array. */
int machine_list (struct machine *m, const char *section, const char *key,
                  char ***items, int *count, berth_error_t *err);

#endif
