/* SPDX-License-Identifier: MIT */
/* Helpers shared by the C benchmarks: clocks, medians and percentiles, the
 * command line every benchmark takes (--quick, --json FILE, --berthd PATH),
 * a berthd started on a fake Slurm allocation of N nodes of 128 cores and
 * 4 GPUs (the allocation comes from the environment, the machine from a
 * --config file, as on a real job), its memory, and writing the results. */
#ifndef BERTH_BENCHUTIL_H
#define BERTH_BENCHUTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_CORES_PER_NODE 128
#define BENCH_GPUS_PER_NODE 4
#define BENCH_MEMORY_PER_NODE 512000

struct bench_args {
    bool quick;               /* prove it works: small counts, few runs */
    const char *json;         /* where the results go (NULL: nowhere) */
    const char *berthd;       /* the daemon to start, when one is needed */
};

static inline void bench_usage (const char *prog)
{
    fprintf (stderr, "usage: %s [--quick] [--json FILE] [--berthd PATH]\n",
             prog);
    exit (2);
}

static inline void bench_parse_args (int argc, char **argv,
                                     struct bench_args *a)
{
    memset (a, 0, sizeof (*a));
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--quick"))
            a->quick = true;
        else if (!strcmp (argv[i], "--json") && i + 1 < argc)
            a->json = argv[++i];
        else if (!strcmp (argv[i], "--berthd") && i + 1 < argc)
            a->berthd = argv[++i];
        else
            bench_usage (argv[0]);
    }
    if (!a->berthd)
        a->berthd = getenv ("BERTHD");
}

static inline double bench_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int bench_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0..n-1], nearest rank; v is sorted in place. */
static inline double bench_quantile (double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    qsort (v, n, sizeof (*v), bench_cmp_double);
    size_t k = (size_t) (q * (double) n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

static inline double bench_median (double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort (v, n, sizeof (*v), bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline void bench_die (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));

static inline void bench_die (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fputs ("bench: ", stderr);
    vfprintf (stderr, fmt, ap);
    fputc ('\n', stderr);
    va_end (ap);
    exit (1);
}

/* Kib of a /proc/<pid>/status field (VmRSS, VmHWM); -1 when unreadable. */
static inline long bench_proc_kib (pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf (path, sizeof (path), "/proc/%d/status", (int) pid);
    FILE *f = fopen (path, "r");
    long v = -1;
    size_t n = strlen (field);
    while (f && fgets (line, sizeof (line), f))
        if (!strncmp (line, field, n) && line[n] == ':')
            v = strtol (line + n + 1, NULL, 10);
    if (f)
        fclose (f);
    return v;
}

/* CPU seconds (user + system) a process has used so far; -1 unreadable. */
static inline double bench_proc_cpu (pid_t pid)
{
    char path[64], buf[1024];
    snprintf (path, sizeof (path), "/proc/%d/stat", (int) pid);
    FILE *f = fopen (path, "r");
    size_t n = f ? fread (buf, 1, sizeof (buf) - 1, f) : 0;
    if (f)
        fclose (f);
    buf[n] = '\0';
    char *p = strrchr (buf, ')');
    unsigned long ut, st;
    /* after the command: state ppid pgrp session tty tpgid flags minflt
     * cminflt majflt cmajflt utime stime */
    if (!p || sscanf (p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                      "%lu %lu", &ut, &st) != 2)
        return -1;
    return (double) (ut + st) / (double) sysconf (_SC_CLK_TCK);
}

static inline void bench_write_json (const char *path, json_t *doc)
{
    if (path && json_dump_file (doc, path, JSON_INDENT (2) | JSON_SORT_KEYS))
        bench_die ("cannot write %s", path);
    json_decref (doc);
}

/* ---- the fake allocation in process (with ledger.h included first) ---- */

#ifdef BERTH_LEDGER_H
/* Specs of nnodes nodes of BENCH_* cores, GPUs and memory, named "nid" and
 * the index in width digits; names has room for nnodes names. */
static inline void bench_node_specs (int nnodes, int width,
                                     char (*names)[16],
                                     struct ledger_node_spec *spec)
{
    static int cores[BENCH_CORES_PER_NODE];
    for (int i = 0; i < BENCH_CORES_PER_NODE; i++)
        cores[i] = i;
    for (int i = 0; i < nnodes; i++) {
        snprintf (names[i], sizeof (names[i]), "nid%0*d", width, i);
        spec[i] = (struct ledger_node_spec) {
            names[i], cores, BENCH_CORES_PER_NODE, BENCH_GPUS_PER_NODE,
            BENCH_MEMORY_PER_NODE };
    }
}
#endif

/* ---- a berthd on a fake allocation ---- */

struct bench_daemon {
    pid_t pid;
    char dir[64];             /* its socket, state, config, stderr */
    char socket[128];
    double ready_s;           /* from fork to its ready line */
};

static inline int bench_rm_one (const char *p, const struct stat *st, int t,
                                struct FTW *f)
{
    (void) st;
    (void) t;
    (void) f;
    return remove (p);
}

static inline void bench_short_host (char *buf, size_t size)
{
    if (gethostname (buf, size) < 0)
        snprintf (buf, size, "localhost");
    buf[size - 1] = '\0';
    buf[strcspn (buf, ".")] = '\0';
}

/* A fresh private directory with the machine's --config file. */
static inline void bench_daemon_prepare (struct bench_daemon *d)
{
    memset (d, 0, sizeof (*d));
    snprintf (d->dir, sizeof (d->dir), "/tmp/berth-bench.XXXXXX");
    if (!mkdtemp (d->dir))
        bench_die ("mkdtemp: %s", strerror (errno));
    snprintf (d->socket, sizeof (d->socket), "%s/b.sock", d->dir);
    char path[128];
    snprintf (path, sizeof (path), "%s/machine.cfg", d->dir);
    FILE *f = fopen (path, "w");
    if (!f)
        bench_die ("cannot write %s", path);
    fprintf (f, "[parallel]\nsystem = slurm\nparallel_executable = srun\n"
             "cores_per_node = %d\ngpus_per_node = %d\n"
             "memory_per_node = %d\nmax_mpi_tasks_per_node = %d\n",
             BENCH_CORES_PER_NODE, BENCH_GPUS_PER_NODE,
             BENCH_MEMORY_PER_NODE, BENCH_CORES_PER_NODE);
    fclose (f);
}

/* In the child: the environment of a live Slurm job of nnodes nodes, this
 * host being the first (SLURMD_NODENAME: the allocation is proved live
 * without asking the scheduler, as on a compute node). */
static inline void bench_fake_job_env (int nnodes)
{
    extern char **environ;
    for (char **e = environ; *e;) {
        if (!strncmp (*e, "SLURM", 5) || !strncmp (*e, "PBS_", 4)
            || !strncmp (*e, "BERTH_", 6)) {
            char name[256];
            snprintf (name, sizeof (name), "%.*s", (int) strcspn (*e, "="), *e);
            unsetenv (name);
        }
        else
            e++;
    }
    char host[256], list[512], n[32];
    bench_short_host (host, sizeof (host));
    if (nnodes == 1)
        snprintf (list, sizeof (list), "%s", host);
    else if (nnodes == 2)
        snprintf (list, sizeof (list), "%s,nid00001", host);
    else
        snprintf (list, sizeof (list), "%s,nid[00001-%05d]", host, nnodes - 1);
    snprintf (n, sizeof (n), "%d", nnodes);
    setenv ("SLURM_JOB_ID", "424242", 1);
    setenv ("SLURM_JOB_NODELIST", list, 1);
    setenv ("SLURM_JOB_NUM_NODES", n, 1);
    setenv ("SLURMD_NODENAME", host, 1);
}

/* Start berthd --foreground on nnodes fake nodes; extra: more options
 * (NULL-terminated, may be NULL). Returns once it printed its ready line;
 * d->ready_s is the time from fork to that line. */
static inline void bench_daemon_start (struct bench_daemon *d,
                                       const char *berthd, int nnodes,
                                       const char *const *extra)
{
    if (!berthd)
        bench_die ("no berthd: give --berthd PATH or set BERTHD");
    int p[2];
    if (pipe2 (p, O_CLOEXEC) < 0)
        bench_die ("pipe: %s", strerror (errno));
    char cfg[128], state[128], errpath[128];
    snprintf (cfg, sizeof (cfg), "%s/machine.cfg", d->dir);
    snprintf (state, sizeof (state), "%s/state", d->dir);
    snprintf (errpath, sizeof (errpath), "%s/berthd.err", d->dir);
    const char *argv[32] = { berthd, "--foreground", "--machine", "localhost",
                             "--config", cfg, "--socket", d->socket,
                             "--state-dir", state };
    int argc = 10;
    for (int i = 0; extra && extra[i] && argc < 31; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;
    double t0 = bench_now ();
    pid_t pid = fork ();
    if (pid < 0)
        bench_die ("fork: %s", strerror (errno));
    if (pid == 0) {
        bench_fake_job_env (nnodes);
        int fd = open (errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2 (p[1], 1);
        if (fd >= 0)
            dup2 (fd, 2);
        execv (berthd, (char *const *) argv);
        _exit (127);
    }
    close (p[1]);
    char buf[512];
    size_t n = 0;
    while (n < sizeof (buf) - 1) {
        struct pollfd pf = { p[0], POLLIN, 0 };
        if (poll (&pf, 1, 20000) <= 0)
            break;
        ssize_t r = read (p[0], buf + n, sizeof (buf) - 1 - n);
        if (r <= 0)
            break;
        n += (size_t) r;
        if (memchr (buf, '\n', n))
            break;
    }
    d->ready_s = bench_now () - t0;
    buf[n] = '\0';
    close (p[0]);
    d->pid = pid;
    if (!strstr (buf, "BERTH_SOCKET=")) {
        char msg[600] = "";
        FILE *f = fopen (errpath, "r");
        if (f) {
            size_t k = fread (msg, 1, sizeof (msg) - 1, f);
            msg[k] = '\0';
            fclose (f);
        }
        kill (pid, SIGKILL);
        waitpid (pid, NULL, 0);
        bench_die ("berthd did not get ready: %s", msg);
    }
}

/* Stop it (a second SIGTERM forces; SIGKILL after 10 s) and remove its
 * directory. */
static inline void bench_daemon_stop (struct bench_daemon *d)
{
    bool failed = false;
    if (d->pid > 0) {
        kill (d->pid, SIGTERM);
        int status = 0;
        for (int i = 0; i < 1000; i++) {
            if (waitpid (d->pid, &status, WNOHANG) == d->pid) {
                d->pid = 0;
                /* a clean stop is part of what is measured */
                failed = !WIFEXITED (status) || WEXITSTATUS (status) != 0;
                break;
            }
            if (i == 100)
                kill (d->pid, SIGTERM);
            usleep (10000);
        }
        if (d->pid > 0) {
            kill (d->pid, SIGKILL);
            waitpid (d->pid, NULL, 0);
            failed = true;
        }
        d->pid = 0;
    }
    if (failed && d->dir[0]) {
        char path[128], msg[1200] = "";
        snprintf (path, sizeof (path), "%s/berthd.err", d->dir);
        FILE *f = fopen (path, "r");
        if (f) {
            fseek (f, 0, SEEK_END);
            long n = ftell (f);
            fseek (f, n > 1000 ? n - 1000 : 0, SEEK_SET);
            size_t k = fread (msg, 1, sizeof (msg) - 1, f);
            msg[k] = '\0';
            fclose (f);
        }
        nftw (d->dir, bench_rm_one, 16, FTW_DEPTH | FTW_PHYS);
        bench_die ("berthd did not stop cleanly: %s", msg);
    }
    if (d->dir[0])
        nftw (d->dir, bench_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    d->dir[0] = '\0';
}

#endif
