/* SPDX-License-Identifier: MIT */
/* berthd start-up: from fork to its ready line (the socket is listening, the
 * journal written), on a fake Slurm allocation of 1, 1,000 and 10,000 nodes
 * of 128 cores and 4 GPUs given in the environment as a job gives it
 * (SLURM_JOB_NODELIST, SLURMD_NODENAME: no scheduler query), the machine
 * from a --config file. Beside it, the floor: `berthd --version` started and
 * read the same way (process start and dynamic linking). */
#include <stdio.h>
#include <stdlib.h>

#include "benchutil.h"

static double version_s (const char *berthd)
{
    int p[2];
    if (pipe2 (p, O_CLOEXEC) < 0)
        bench_die ("pipe: %s", strerror (errno));
    double t0 = bench_now ();
    pid_t pid = fork ();
    if (pid == 0) {
        dup2 (p[1], 1);
        execl (berthd, berthd, "--version", (char *) NULL);
        _exit (127);
    }
    close (p[1]);
    char buf[256];
    ssize_t n = read (p[0], buf, sizeof (buf));
    double el = bench_now () - t0;
    close (p[0]);
    waitpid (pid, NULL, 0);
    if (n <= 0)
        bench_die ("berthd --version printed nothing");
    return el;
}

int main (int argc, char **argv)
{
    struct bench_args a;
    bench_parse_args (argc, argv, &a);
    const int sizes[] = { 1, 1000, 10000 };
    const int runs = a.quick ? 3 : 21;
    double med[3], best[3], rss[3], floor_v[64];
    for (int s = 0; s < 3; s++) {
        double v[64];
        long kib = 0;
        for (int i = 0; i < runs; i++) {
            struct bench_daemon d;
            bench_daemon_prepare (&d);
            bench_daemon_start (&d, a.berthd, sizes[s], NULL);
            v[i] = d.ready_s * 1e3;
            kib = bench_proc_kib (d.pid, "VmRSS");
            bench_daemon_stop (&d);
        }
        med[s] = bench_median (v, (size_t) runs);
        best[s] = v[0];
        rss[s] = kib / 1024.0;
    }
    for (int i = 0; i < runs; i++)
        floor_v[i] = version_s (a.berthd) * 1e3;
    double fl = bench_median (floor_v, (size_t) runs);
    printf ("berthd start-up to ready (median of %d runs; fastest in "
            "brackets)\n", runs);
    for (int s = 0; s < 3; s++)
        printf ("  %5d nodes: %6.2f ms (%.2f)  RSS %.1f MiB\n", sizes[s],
                med[s], best[s], rss[s]);
    printf ("  floor, `berthd --version`: %.2f ms   target at 10,000 nodes: "
            "< 20 ms\n", fl);
    json_t *rows = json_array ();
    for (int s = 0; s < 3; s++)
        json_array_append_new (rows, json_pack ("{s:i s:f s:f s:f}", "nodes",
                                                sizes[s], "ready_ms", med[s],
                                                "fastest_ms", best[s],
                                                "rss_mib", rss[s]));
    bench_write_json (a.json, json_pack (
        "{s:s s:b s:i s:o s:f s:{s:b}}", "benchmark", "startup", "quick",
        a.quick, "runs", runs, "rows", rows, "version_floor_ms", fl, "meets",
        "ready_under_20ms_at_10000", med[2] < 20));
    return 0;
}
