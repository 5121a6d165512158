/* SPDX-License-Identifier: MIT */
/* This host's figures for machines whose figures are detected: usable
 * physical cores, memory, GPUs, and the MPI launcher on PATH. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpus.h"
#include "machine_select.h"
#include "memory.h"
#include "run_command.h"
#include "topology.h"

/* The first of mpirun, mpiexec that PATH holds as an executable file. */
static void find_launcher (char *out, size_t size)
{
    static const char *const names[] = { "mpirun", "mpiexec" };
    const char *path = getenv ("PATH");
    out[0] = '\0';
    for (size_t i = 0; path && i < sizeof (names) / sizeof (names[0]); i++) {
        char *full = run_command_find (names[i], path);
        bool found = full != NULL;
        free (full);
        if (found) {
            snprintf (out, size, "%s", names[i]);
            return;
        }
    }
}

int machine_detect_facts (void *arg, struct machine_facts *f,
                          berth_error_t *err)
{
    int *ids = NULL, *cores = NULL, nids = 0, ncores = 0;
    struct memory_facts mf;
    struct gpu_facts gf = { 0 };
    (void)arg;

    memset (f, 0, sizeof (*f));
    f->memory_mb = -1;
    if (topology_affinity_ids (&ids, &nids, err) < 0
        || topology_physical_cores (NULL, ids, nids, &cores, &ncores, err)
               < 0) {
        free (ids);
        return errprefix (err, "reading this host's cores: ");
    }
    free (ids);
    free (cores);
    f->cores = ncores;
    if (memory_read_facts (NULL, NULL, &mf, err) < 0)
        return errprefix (err, "reading this host's memory: ");
    f->memory_mb = mf.credited_mb > 0 ? mf.credited_mb : mf.mem_total_mb;
    if (gpus_detect (NULL, NULL, &gf, err) < 0)
        return errprefix (err, "looking for this host's GPUs: ");
    f->gpus = gf.count;
    f->gpu_visible_devices_var = gf.count ? gpus_visible_devices_var (gf.vendor)
                                          : NULL;
    gpu_facts_free (&gf);
    find_launcher (f->launcher, sizeof (f->launcher));
    return 0;
}
