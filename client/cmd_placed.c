/* SPDX-License-Identifier: MIT */
/* berth placed: the first program of a local step that berthd had launched
 * through srun (SCHEDULER mode, where Slurm picks every step's CPUs). Inside
 * the step it reads the CPUs it was given, tells berthd (op placed) so that
 * the lease shows the real ids, sets BERTH_CORES to them and execs the
 * step's program. berth run puts it in front of the program; a failed report
 * is said on stderr and the program runs all the same. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_daemon.h"
#include "commands.h"
#include "idset.h"
#include "topology.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth placed [--] PROGRAM [ARGS...]\n"
"Inside a local step that berthd launched through srun: tell berthd the\n"
"cores this process was given (lease $BERTH_LEASE, socket $BERTH_SOCKET),\n"
"set BERTH_CORES to them and run PROGRAM. berth run --local does this by\n"
"itself where Slurm places steps (Slurm 20.11 and newer).\n\n"
"  -h, --help   this text\n");
}

/* The physical cores this process may run on. */
static int own_cores (int **cores, int *ncores, berth_error_t *e)
{
    int *threads = NULL, nthreads = 0;
    if (topology_affinity_ids (&threads, &nthreads, e) < 0)
        return -1;
    int rc = topology_physical_cores (NULL, threads, nthreads, cores, ncores, e);
    free (threads);
    return rc;
}

/* The GPUs Slurm gave this step, as berthd numbers the node's GPUs: their
 * places in the job's list (SLURM_STEP_GPUS and SLURM_JOB_GPUS hold the
 * node's own indices). -1 when the lease has none or they are not told. */
static int own_gpus (int **gpus, berth_error_t *e)
{
    const char *lease_gpus = getenv ("BERTH_GPUS"), *step = getenv ("SLURM_STEP_GPUS");
    const char *job = getenv ("SLURM_JOB_GPUS");
    int *sg = NULL, nsg = 0, *jg = NULL, njg = 0;
    *gpus = NULL;
    if (!lease_gpus || !*lease_gpus || !step || idset_parse (step, &sg, &nsg, e) < 0)
        return -1;
    if (job && *job && idset_parse (job, &jg, &njg, e) < 0) {
        free (sg);
        return -1;
    }
    for (int i = 0; i < nsg && jg; i++) {
        int k = 0;
        while (k < njg && jg[k] != sg[i])
            k++;
        if (k == njg) {
            errprintf (e, "SLURM_STEP_GPUS=%s names GPU %d, which SLURM_JOB_GPUS=%s "
                       "lacks", step, sg[i], job);
            free (sg);
            free (jg);
            return -1;
        }
        sg[i] = k;
    }
    free (jg);
    *gpus = sg;
    return nsg;
}

static void report (const char *lease)
{
    berth_error_t e = { 0 };
    berth_client_error_t err;
    int *cores = NULL, n = 0, *gpus = NULL;
    if (own_cores (&cores, &n, &e) < 0) {
        fprintf (stderr, "berth placed: cannot read this step's CPUs: %s\n", e.text);
        return;
    }
    char set[1024], gset[1024] = "";
    if (idset_format (cores, n, set, sizeof (set)) < (int) sizeof (set))
        setenv ("BERTH_CORES", set, 1);
    e.text[0] = '\0';
    int ng = own_gpus (&gpus, &e);
    if (e.text[0])
        fprintf (stderr, "berth placed: %s; GPUs not reported\n", e.text);
    if (ng >= 0) {
        for (int i = 0, off = 0; i < ng && off < (int) sizeof (gset) - 12; i++)
            off += snprintf (gset + off, sizeof (gset) - off, "%s%d", i ? "," : "", gpus[i]);
        setenv ("BERTH_GPUS", gset, 1);
    }
    berth_client_t *c = cli_connect ("placed", NULL);
    if (c && berth_placed (c, lease, cores, n, gpus, ng, &err) < 0)
        fprintf (stderr, "berth placed: berthd did not record cores %s%s%s for %s: %s (%s)\n",
                 set, ng >= 0 ? " and GPUs " : "", gset, lease, err.message, err.code);
    berth_close (c);
    free (cores);
    free (gpus);
}

int cmd_placed (int argc, char **argv)
{
    int first = 1;
    if (first < argc && (!strcmp (argv[first], "-h") || !strcmp (argv[first], "--help"))) {
        usage (stdout);
        return 0;
    }
    if (first < argc && !strcmp (argv[first], "--"))
        first++;
    if (first >= argc || !argv[first][0])
        return cli_fail (2, "placed", "no program given: berth placed -- PROGRAM [ARGS...]");
    const char *lease = getenv ("BERTH_LEASE");
    if (lease && *lease)
        report (lease);
    else
        fprintf (stderr, "berth placed: BERTH_LEASE is not set; nothing reported\n");
    fflush (NULL);
    execvp (argv[first], argv + first);
    int e = errno;
    fprintf (stderr, "berth placed: cannot run '%s': %s\n", argv[first], strerror (e));
    return e == ENOENT ? CLI_EXIT_NOT_FOUND : CLI_EXIT_CANNOT_RUN;
}
