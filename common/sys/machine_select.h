/* SPDX-License-Identifier: MIT */
/* Loading a machine (berthsys): which one, from the options, the
 * environment and the host; its files read from the search path; the
 * figures detected on this host where the files leave them out. */
#ifndef BERTH_MACHINE_SELECT_H
#define BERTH_MACHINE_SELECT_H

#include "machine.h"

struct machine_options {
    const char *name;            /* --machine, or NULL */
    const char *const *configs;  /* --config files, NULL-terminated, or NULL */
    const char *compiler;        /* --compiler, or NULL ([build] compiler) */
    const char *const *machine_path; /* --machine-path directories,
                                      * NULL-terminated, or NULL: searched
                                      * before BERTH_MACHINE_PATH */
};

/* Load and layer the config and compute the effective options. Without a
 * name, and without a --config file that sets [parallel] system (a machine of
 * its own), the machine is chosen in this order
 * (BERTH_MACHINE, [discovery] hostnames, generic Slurm/PBS job, localhost)
 * and the config files are layered over it. <name>.cfg is looked for in the
 * machine search path (machine_path, then BERTH_MACHINE_PATH, a colon list,
 * then BERTH_MACHINES_DIR) before the shipped machines.
 * Errors name the file and line, or the option and system. */
int machine_load (const struct machine_options *opts, struct machine **mp,
                  berth_error_t *err);

/* Facts about this host, for machines whose figures are detected (localhost
 * and other single_node machines, the generic Slurm/PBS machines). */
struct machine_facts {
    int cores;                           /* usable physical cores, 0: unknown */
    int gpus;
    const char *gpu_visible_devices_var; /* static string, NULL: none */
    int64_t memory_mb;                   /* credited, else total; -1: unknown */
    char launcher[256];                  /* MPI launcher on PATH, "": none */
};

/* What machine selection looks at, so tests can inject it. A NULL member (or
 * a NULL env) means the real thing: getenv(3), gethostname(2),
 * machine_detect_facts. `detect` is called at most once per load, and only
 * when a figure is needed. */
struct machine_env {
    const char *(*getenv) (void *arg, const char *name);
    const char *hostname;
    int (*detect) (void *arg, struct machine_facts *facts, berth_error_t *err);
    void *arg;
};

/* machine_load with an injected environment (machine_load passes NULL). */
int machine_load_env (const struct machine_options *opts,
                      const struct machine_env *env, struct machine **mp,
                      berth_error_t *err);

/* The real detection: topology, memory and GPU modules, and the first of
 * mpirun, mpiexec on PATH. */
int machine_detect_facts (void *arg, struct machine_facts *facts,
                          berth_error_t *err);

#endif
