/* SPDX-License-Identifier: MIT */
/* A witness for the machine's own speed during a benchmark. On each CPU the
 * benchmark may use, a child process pinned there at real-time priority
 * (SCHED_FIFO, when allowed) wakes every millisecond and times a fixed loop
 * of arithmetic. A real-time process runs before any ordinary one and the
 * loop touches no memory, so the loop taking many times its usual time, or
 * a wake coming late, means that CPU was slowed or taken by something below
 * the operating system (the hypervisor), not that berthd or the load
 * generator was slow. Slow operations that ran while the CPUs were slowed
 * are the machine's; the rest are ours to explain. */
#ifndef BERTH_STALL_PROBE_H
#define BERTH_STALL_PROBE_H

#include <stdbool.h>
#include <sys/types.h>

#define STALL_PROBE_MAX_CPUS 64

struct probe_tick {
    double woke;  /* bench_now() when it woke */
    float late;   /* seconds after it was due */
    float loop;   /* seconds the fixed loop took */
};

struct stall_probe {
    pid_t pid[STALL_PROBE_MAX_CPUS]; /* one witness per CPU */
    int n;
    bool realtime;           /* SCHED_FIFO was granted to every witness */
    long iterations;         /* of the loop: about 5 us on this machine */
    struct probe_tick *log;  /* shared with the witnesses; sorted once stopped */
    long *count;             /* ticks recorded (past cap: dropped) */
    long cap;
    double usual;            /* the loop's time at full speed (its 10th
                              * percentile), once stopped */
};

/* Start the witnesses, room for cap ticks. Returns false (and starts
 * nothing) when it cannot. */
bool stall_probe_start (struct stall_probe *p, long cap);
/* Stop them, sort the log and find the loop's usual time. */
void stall_probe_stop (struct stall_probe *p);
void stall_probe_free (struct stall_probe *p);
/* How many times its full-speed time the loop took, on average, over the ticks
 * in [from, to] (the nearest tick when none falls inside); 0 when the log
 * is empty. */
double stall_probe_slowdown (const struct stall_probe *p, double from, double to);
/* The run cut into windows of `window` seconds: how many, in how many the
 * loop took on average at least `factor` times its full-speed time, and the
 * largest such average. The base rate for stall_probe_slowdown. */
void stall_probe_summary (const struct stall_probe *p, double factor, double window,
                          long *nwindows, long *slowed, double *worst);

#endif
