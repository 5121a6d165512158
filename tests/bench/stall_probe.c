/* SPDX-License-Identifier: MIT */
/* The speed witness (stall_probe.h): a real-time child per CPU that wakes
 * every millisecond, times a fixed loop and logs it into memory shared with
 * the benchmark. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "stall_probe.h"

/* Arithmetic only: no memory, no system call, so its time is the CPU's.
 * The sum is returned so that the compiler cannot drop the loop. */
static unsigned long fixed_loop (long iterations)
{
    volatile unsigned long x = 0;
    for (long i = 0; i < iterations; i++)
        x += (unsigned long) i * 7;
    return x;
}

static void witness (struct stall_probe *p)
{
    struct timespec due;
    clock_gettime (CLOCK_MONOTONIC, &due);
    for (;;) {
        due.tv_nsec += 1000000;
        if (due.tv_nsec >= 1000000000) {
            due.tv_nsec -= 1000000000;
            due.tv_sec++;
        }
        clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        double woke = bench_now ();
        (void) fixed_loop (p->iterations);
        double done = bench_now ();
        double late = woke - ((double) due.tv_sec + due.tv_nsec / 1e9);
        long k = __atomic_fetch_add (p->count, 1, __ATOMIC_RELAXED);
        if (k < p->cap)
            p->log[k] = (struct probe_tick){ .woke = woke, .late = (float) late,
                                             .loop = (float) (done - woke) };
        if (late > 0.002)
            clock_gettime (CLOCK_MONOTONIC, &due); /* no catching up after a gap */
    }
}

/* One witness pinned to cpu; true when it got SCHED_FIFO. *pid < 0: none. */
static bool start_one (struct stall_probe *p, int cpu, pid_t *pid)
{
    int pipefd[2];
    if (pipe (pipefd) < 0) {
        *pid = -1;
        return false;
    }
    *pid = fork ();
    if (*pid < 0) {
        close (pipefd[0]);
        close (pipefd[1]);
        return false;
    }
    if (*pid == 0) {
        close (pipefd[0]);
        /* a benchmark that dies (bench_die) takes its witnesses along, and
         * they hold none of its output open for whoever waits on it */
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        int devnull = open ("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2 (devnull, STDIN_FILENO);
            dup2 (devnull, STDOUT_FILENO);
            dup2 (devnull, STDERR_FILENO);
            close (devnull);
        }
        cpu_set_t one;
        CPU_ZERO (&one);
        CPU_SET (cpu, &one);
        struct sched_param rt = { .sched_priority = 1 };
        char ok = sched_setaffinity (0, sizeof (one), &one) == 0
                          && sched_setscheduler (0, SCHED_FIFO, &rt) == 0
                      ? 'r'
                      : 'n';
        if (write (pipefd[1], &ok, 1) != 1)
            _exit (1);
        close (pipefd[1]);
        witness (p);
        _exit (0);
    }
    close (pipefd[1]);
    char ok = 'n';
    if (read (pipefd[0], &ok, 1) != 1)
        ok = 'n';
    close (pipefd[0]);
    return ok == 'r';
}

static size_t log_bytes (long cap)
{
    return sizeof (long) + sizeof (struct probe_tick) * (size_t) cap;
}

bool stall_probe_start (struct stall_probe *p, long cap)
{
    void *m = mmap (NULL, log_bytes (cap), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return false;
    *p = (struct stall_probe){ .count = m, .log = (struct probe_tick *) ((long *) m + 1),
                               .cap = cap, .realtime = true };
    /* about 5 us of loop: the quickest of a few timed runs, scaled */
    double quickest = 1;
    for (int i = 0; i < 20; i++) {
        double t0 = bench_now ();
        (void) fixed_loop (10000);
        double t = bench_now () - t0;
        quickest = t < quickest ? t : quickest;
    }
    p->iterations = (long) (10000 * 5e-6 / (quickest > 1e-7 ? quickest : 1e-7)) + 1;
    /* a slowed CPU delays only what runs on it: one witness per CPU */
    cpu_set_t mine;
    if (sched_getaffinity (0, sizeof (mine), &mine) < 0) {
        munmap (m, log_bytes (cap));
        return false;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE && p->n < STALL_PROBE_MAX_CPUS; cpu++) {
        if (!CPU_ISSET (cpu, &mine))
            continue;
        bool rt = start_one (p, cpu, &p->pid[p->n]);
        if (p->pid[p->n] < 0)
            break;
        p->realtime = p->realtime && rt;
        p->n++;
    }
    if (p->n == 0) {
        munmap (m, log_bytes (cap));
        return false;
    }
    return true;
}

static int by_woke (const void *a, const void *b)
{
    const struct probe_tick *x = a, *y = b;
    return (x->woke > y->woke) - (x->woke < y->woke);
}

static int by_loop (const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;
    return (x > y) - (x < y);
}

static long ticks (const struct stall_probe *p)
{
    return *p->count < p->cap ? *p->count : p->cap;
}

void stall_probe_stop (struct stall_probe *p)
{
    for (int i = 0; i < p->n; i++) {
        kill (p->pid[i], SIGKILL);
        waitpid (p->pid[i], NULL, 0);
    }
    p->n = 0;
    long n = ticks (p);
    qsort (p->log, (size_t) n, sizeof (*p->log), by_woke);
    float *loops = malloc (sizeof (float) * (size_t) (n ? n : 1));
    if (!loops)
        return;
    for (long i = 0; i < n; i++)
        loops[i] = p->log[i].loop;
    qsort (loops, (size_t) n, sizeof (float), by_loop);
    p->usual = n ? loops[n / 10] : 0;
    free (loops);
}

void stall_probe_free (struct stall_probe *p)
{
    stall_probe_stop (p);
    if (p->count)
        munmap (p->count, log_bytes (p->cap));
    p->count = NULL;
}

/* First tick that woke at or after t. */
static long first_from (const struct stall_probe *p, double t)
{
    long lo = 0, hi = ticks (p);
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (p->log[mid].woke < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double stall_probe_slowdown (const struct stall_probe *p, double from, double to)
{
    long n = ticks (p);
    if (n == 0 || p->usual <= 0)
        return 0;
    long i = first_from (p, from), k = 0;
    double sum = 0;
    for (long j = i; j < n && p->log[j].woke <= to; j++, k++)
        sum += p->log[j].loop / p->usual;
    if (k)
        return sum / (double) k;
    long near = i < n ? i : n - 1;
    return p->log[near].loop / p->usual;
}

void stall_probe_summary (const struct stall_probe *p, double factor, double window,
                          long *nwindows, long *slowed, double *worst)
{
    long n = ticks (p);
    *nwindows = *slowed = 0;
    *worst = 0;
    if (n == 0 || p->usual <= 0)
        return;
    for (double t = p->log[0].woke; t + window <= p->log[n - 1].woke; t += window) {
        double f = stall_probe_slowdown (p, t, t + window);
        (*nwindows)++;
        *slowed += f >= factor;
        *worst = f > *worst ? f : *worst;
    }
}
