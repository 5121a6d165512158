/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "run_command.h"
#include "srun_after.h"
#include "srun_steps.h"

#define CANCEL_WAIT_S 60.0

static void nap (long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* The output of argv, or NULL with the reason in err. */
static char *output (const char *const *argv, berth_error_t *err)
{
    struct run_output o;
    if (run_command (argv, NULL, 10.0, &o, NULL, err) < 0)
        return NULL;
    free (o.err);
    return o.out;
}

/* The controller's steps with their srun's host and pid (of this job when
 * inside one, else all), or NULL with the reason in err. */
static char *srun_steps (berth_error_t *err)
{
    const char *job = getenv ("SLURM_JOB_ID");
    const char *argv[] = { "scontrol", "show", "step", "-o", job && *job ? job : NULL,
                           NULL };
    return output (argv, err);
}

/* Whether Slurm has let go of step id: squeue no longer lists it (its job
 * is listed for minutes after it ended; a job already forgotten is an
 * "Invalid job id"). False also when squeue cannot say. */
static bool step_gone (const char *id)
{
    char job[64];
    snprintf (job, sizeof (job), "%.*s", (int) strcspn (id, "."), id);
    const char *argv[] = { "squeue", "-h", "-s", "-j", job, "-o", "%i", NULL };
    berth_error_t e = { 0 };
    char *list = output (argv, &e);
    bool gone = list ? !srun_step_listed (list, id) : strstr (e.text, "Invalid job id") != NULL;
    free (list);
    return gone;
}

/* srun (pid here) died while Slurm may still run its step: cancel that
 * step and wait until it is gone. */
static void cancel_leftover (pid_t pid, int sig, const char *prefix)
{
    char host[256];
    if (gethostname (host, sizeof (host)) < 0)
        return;
    host[sizeof (host) - 1] = '\0';
    berth_error_t e = { 0 };
    char *list = srun_steps (&e);
    char id[64];
    if (!list) {
        fprintf (stderr, "%s: srun died of signal %d and Slurm's steps could not be "
                 "listed to cancel what it left: %s\n", prefix, sig, e.text);
        return;
    }
    bool found = srun_step_find (list, host, (long) pid, id, sizeof (id));
    free (list);
    if (!found)
        return;          /* srun took its step down before it died */
    fprintf (stderr, "%s: srun (pid %ld) died of signal %d while Slurm still ran its "
             "step %s: cancelling the step\n", prefix, (long) pid, sig, id);
    const char *cancel[] = { "scancel", id, NULL };
    struct run_output o;
    if (run_command (cancel, NULL, 30.0, &o, NULL, &e) < 0) {
        fprintf (stderr, "%s: %s\n", prefix, e.text);
        return;
    }
    run_output_free (&o);
    double until = now_mono () + CANCEL_WAIT_S;
    for (;;) {
        if (step_gone (id))
            return;
        if (now_mono () >= until) {
            fprintf (stderr, "%s: Slurm still shows step %s %.0f s after scancel; the "
                     "lease ends anyway\n", prefix, id, CANCEL_WAIT_S);
            return;
        }
        nap (200);
    }
}

/* srun can return before Slurm has freed the step: each node's slurmstepd
 * reports the step complete on its own, after srun has its tasks' exit
 * status. Cores released at once can then be granted to a step that srun
 * holds back with "step creation temporarily disabled". Measured on the
 * local Slurm 22.05 (2 CPUs, 200 steps, 8 at once, load 6 to 10): srun
 * exits a median 4 ms after the controller frees the step, but before it in
 * 4 to 24 % of steps, by up to 19 ms at load 6 and 100 ms at load 10; the
 * next step's own srun needs at least 4 ms (median 16 to 36 ms, slower
 * under the same load) from its grant to its step request, which covers
 * most of that. With no wait 2 of 200 steps were held back; 25 ms (100 ms
 * before) leaves the rest of the margin, where 100 ms made every step cost
 * 100 ms of idle core in an oversubscribed ensemble. Multi-node steps
 * report through a tree of nodes and keep the longer wait. */
long srun_after (char *const *argv, pid_t pid, bool died, int status, int nnodes,
                 const char *prefix)
{
    const char *base = strrchr (argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strcmp (base, "srun") != 0)
        return 0;
    double t0 = now_mono ();
    if (died && WIFSIGNALED (status))
        cancel_leftover (pid, WTERMSIG (status), prefix);
    long ms = nnodes > 1 ? 250 : 25;
    const char *env = getenv ("BERTH_SRUN_SETTLE_MS");
    if (env && *env) {
        char *end;
        long v = strtol (env, &end, 10);
        if (!*end && v >= 0 && v <= 10000)
            ms = v;
    }
    nap (ms);
    return (long) ((now_mono () - t0) * 1000);
}
