/* SPDX-License-Identifier: MIT */
/* mpi_report: a small real MPI program for the launch tests (issue 15).
 * Every rank prints one JSON line: which MPI it was built with, its rank and
 * the size it was started in, the node it ran on (SLURMD_NODENAME inside a
 * Slurm step, where several slurmds may share one host; else the host name),
 * its CPU affinity, the GPUs and berth share it was given, and the result of
 * an MPI_Allreduce over all ranks that it checks itself: the sum of the
 * ranks must be size*(size-1)/2 and the sum of ones must be size, which only
 * holds when the ranks really talk to each other in one job.
 * Usage: mpi_report [SECONDS [MEET PEER]]: hold the step that long after the
 * reduction (so that steps run side by side), then meet the others at a
 * barrier. With MEET and PEER, rank 0 first creates the file MEET and waits
 * (at most 60 s) for the file PEER, which another step's rank 0 creates: two
 * steps given each other's files surely run at once, whatever the machine's
 * speed ("met" says whether it came).
 * Exit 0 when the reduction was right, 3 when not, 2 on bad usage. */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(OPEN_MPI)
#define MPI_KIND "openmpi"
#elif defined(MPICH)
#define MPI_KIND "mpich"
#else
#define MPI_KIND "other"
#endif

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The affinity as an id list ("0-3,8"); "?" when it cannot be read. */
static void affinity_text (char *buf, size_t size)
{
    cpu_set_t set;
    size_t len = 0;
    buf[0] = '\0';
    if (sched_getaffinity (0, sizeof (set), &set) < 0) {
        snprintf (buf, size, "?");
        return;
    }
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET (c, &set) || (c > 0 && CPU_ISSET (c - 1, &set)))
            continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET (end + 1, &set))
            end++;
        int n = end > c ? snprintf (buf + len, size - len, "%s%d-%d", len ? "," : "", c, end)
                        : snprintf (buf + len, size - len, "%s%d", len ? "," : "", c);
        if (n < 0 || (size_t)n >= size - len)
            return;
        len += (size_t)n;
    }
}

/* "NAME": "value" with the value's quotes and backslashes dropped (these
 * are node names, id lists and step ids), or null when it is not set. */
static void json_env (const char *key, const char *name)
{
    const char *v = getenv (name);
    printf (", \"%s\": ", key);
    if (!v) {
        printf ("null");
        return;
    }
    putchar ('"');
    for (; *v; v++)
        if (*v != '"' && *v != '\\' && (unsigned char)*v >= ' ')
            putchar (*v);
    putchar ('"');
}

/* Create the file self, then wait for the file peer: 1 when it came within
 * 60 s, 0 when not. */
static int meet (const char *self, const char *peer)
{
    FILE *f = fopen (self, "w");
    if (f)
        fclose (f);
    for (int i = 0; i < 600; i++) {
        if (access (peer, F_OK) == 0)
            return 1;
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep (&ts, NULL);
    }
    return 0;
}

int main (int argc, char **argv)
{
    double hold = argc > 1 ? atof (argv[1]) : 0;
    if ((argc != 2 && argc != 4 && argc > 1) || hold < 0) {
        fprintf (stderr, "usage: mpi_report [SECONDS [MEET PEER]]\n");
        return 2;
    }
    MPI_Init (&argc, &argv);
    double t0 = now ();
    int rank, size;
    MPI_Comm_rank (MPI_COMM_WORLD, &rank);
    MPI_Comm_size (MPI_COMM_WORLD, &size);

    long mine[2] = { rank, 1 }, sum[2] = { -1, -1 };
    MPI_Allreduce (mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long want = (long)size * (size - 1) / 2;
    int ok = sum[0] == want && sum[1] == size;

    char host[256] = "?", cpus[4096];
    gethostname (host, sizeof (host));
    host[sizeof (host) - 1] = '\0';
    const char *node = getenv ("SLURMD_NODENAME");
    affinity_text (cpus, sizeof (cpus));

    int met = -1;
    if (argc == 4) {
        met = rank == 0 ? meet (argv[2], argv[3]) : 0;
        MPI_Bcast (&met, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (hold > 0) {
        struct timespec ts = { (time_t)hold, (long)((hold - (double)(time_t)hold) * 1e9) };
        nanosleep (&ts, NULL);
    }
    MPI_Barrier (MPI_COMM_WORLD);
    double t1 = now ();

    printf ("{\"mpi_report\": \"%s\", \"rank\": %d, \"size\": %d, \"node\": \"%s\", "
            "\"host\": \"%s\", \"cpus\": \"%s\", \"sum\": %ld, \"ones\": %ld, "
            "\"want\": %ld, \"ok\": %s, \"t0\": %.6f, \"t1\": %.6f",
            MPI_KIND, rank, size, node ? node : host, host, cpus, sum[0], sum[1], want,
            ok ? "true" : "false", t0, t1);
    if (met >= 0)
        printf (", \"met\": %s", met ? "true" : "false");
    json_env ("job", "SLURM_JOB_ID");
    json_env ("step", "SLURM_STEP_ID");
    json_env ("step_gpus", "SLURM_STEP_GPUS");
    json_env ("cuda_visible_devices", "CUDA_VISIBLE_DEVICES");
    json_env ("berth_lease", "BERTH_LEASE");
    json_env ("berth_nodes", "BERTH_NODES");
    json_env ("berth_cores", "BERTH_CORES");
    json_env ("berth_gpus", "BERTH_GPUS");
    printf ("}\n");
    fflush (stdout);
    if (!ok)
        fprintf (stderr, "mpi_report: rank %d of %d: MPI_Allreduce gave sum %ld and count "
                 "%ld, want %ld and %d\n", rank, size, sum[0], sum[1], want, size);
    MPI_Finalize ();
    return ok ? 0 : 3;
}
