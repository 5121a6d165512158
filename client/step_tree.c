/* SPDX-License-Identifier: MIT */
/* A step as a supervised tree of processes (step_tree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "step_tree.h"

int step_tree_grace (const char *text, double *grace, berth_error_t *err)
{
    const char *from = "--grace";
    if (!text) {
        text = getenv ("BERTH_STOP_GRACE");
        from = "BERTH_STOP_GRACE";
    }
    if (!text || !*text) {
        *grace = STEP_TREE_GRACE_DEFAULT;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod (text, &end);
    if (errno || *end || end == text || !isfinite (v) || v < 0 || v > 86400)
        return errprintf (err, "%s '%s': give the grace before SIGKILL as seconds "
                          "from 0 to 86400, e.g. 10 or 0.5", from, text);
    *grace = v;
    return 0;
}

pid_t step_tree_start (struct step_tree *t, char *const *argv, const cpu_set_t *cpus,
                       const sigset_t *child_mask, const char *prefix,
                       berth_error_t *err)
{
    memset (t, 0, sizeof (*t));
    if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
        return errprintf (err, "cannot become the step's subreaper: %s", strerror (errno));
    sigset_t chld;
    sigemptyset (&chld);
    sigaddset (&chld, SIGCHLD);
    sigprocmask (SIG_BLOCK, &chld, NULL);
    fflush (NULL);
    pid_t pid = fork ();
    if (pid < 0)
        return errprintf (err, "cannot start '%s': %s", argv[0], strerror (errno));
    if (pid == 0) {
        sigprocmask (SIG_SETMASK, child_mask, NULL);
        if (cpus && sched_setaffinity (0, sizeof (*cpus), cpus) < 0) {
            fprintf (stderr, "%s: cannot bind to the placed cores: %s\n", prefix,
                     strerror (errno));
            _exit (126);
        }
        execvp (argv[0], argv);
        int e = errno;
        fprintf (stderr, "%s: cannot run '%s': %s\n", prefix, argv[0], strerror (e));
        _exit (e == ENOENT ? 127 : 126);
    }
    t->main = pid;
    return pid;
}

/* pid, parent and process group of one /proc entry; -1 when it is gone */
static int proc_stat (const char *name, pid_t *ppid, pid_t *pgrp)
{
    char path[64], buf[512];
    snprintf (path, sizeof (path), "/proc/%s/stat", name);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read (fd, buf, sizeof (buf) - 1);
    close (fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* the name in parentheses may hold anything: fields follow the last ')' */
    char *p = strrchr (buf, ')');
    int pp, pg;
    if (!p || sscanf (p + 1, " %*c %d %d", &pp, &pg) != 2)
        return -1;
    *ppid = pp;
    *pgrp = pg;
    return 0;
}

struct proc { pid_t pid, ppid, pgrp; };

int step_tree_signal (int sig, pid_t skip_pgrp)
{
    DIR *d = opendir ("/proc");
    if (!d)
        return 0;
    struct proc *all = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        struct proc p = { .pid = atoi (e->d_name) };
        if (proc_stat (e->d_name, &p.ppid, &p.pgrp) < 0)
            continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 256;
            struct proc *m = realloc (all, c * sizeof (*m));
            if (!m)
                break;
            all = m;
            cap = c;
        }
        all[n++] = p;
    }
    closedir (d);
    /* breadth first from this process: a parent is marked before its
     * children are looked for, and the list is walked until nothing new */
    pid_t self = getpid ();
    bool *in = calloc (n ? n : 1, sizeof (*in));
    int sent = 0;
    bool grew = true;
    while (in && grew) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (in[i])
                continue;
            bool below = all[i].ppid == self;
            for (size_t j = 0; !below && j < n; j++)
                below = in[j] && all[j].pid == all[i].ppid;
            if (!below)
                continue;
            in[i] = grew = true;
            if (skip_pgrp && all[i].pgrp == skip_pgrp)
                continue;
            if (kill (all[i].pid, sig) == 0)
                sent++;
        }
    }
    free (in);
    free (all);
    return sent;
}

static bool stopping_signal (int sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/* Reap what has ended; true when no child (so no process of the tree) is left. */
static bool reap (struct step_tree *t)
{
    for (;;) {
        int st;
        pid_t w = waitpid (-1, &st, WNOHANG);
        if (w > 0) {
            if (w == t->main) {
                t->main_done = true;
                t->main_status = st;
            }
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        return w < 0 && errno == ECHILD;
    }
}

int step_tree_wait (struct step_tree *t, const sigset_t *watched, double grace,
                    double time_limit)
{
    sigset_t set = *watched;
    sigaddset (&set, SIGCHLD);
    double limit_at = time_limit > 0 ? now_mono () + time_limit : 0;
    double kill_at = 0;           /* 0: not stopping */
    bool stopping = false;
    pid_t own = getpgrp ();
    for (;;) {
        bool empty = reap (t);
        if (empty)
            break;
        double now = now_mono ();
        if (t->main_done && !stopping) {
            /* the step ended and left processes behind: they go too */
            stopping = true;
            step_tree_signal (SIGTERM, 0);
            kill_at = now + grace;
        }
        if (!stopping && limit_at && now >= limit_at) {
            stopping = t->limited = true;
            step_tree_signal (SIGTERM, 0);
            kill_at = now + grace;
        }
        if (stopping && now >= kill_at) {
            /* again each round: a process forked between the scan and the
             * kill would escape a single pass */
            t->killed = true;
            step_tree_signal (SIGKILL, 0);
        }
        double until = t->killed ? now + 0.05 : stopping ? kill_at : limit_at;
        siginfo_t si;
        int sig;
        if (until > 0) {
            double left = until - now;
            if (left < 0)
                left = 0;
            struct timespec ts = { (time_t) left, (long) ((left - (time_t) left) * 1e9) };
            sig = sigtimedwait (&set, &si, &ts);
        } else
            sig = sigwaitinfo (&set, &si);
        if (sig <= 0 || sig == SIGCHLD)
            continue;
        /* the grace counts from the signal, not from when the wait began */
        now = now_mono ();
        bool from_terminal = si.si_code == SI_KERNEL;
        step_tree_signal (sig, from_terminal ? own : 0);
        if (!stopping_signal (sig))
            continue;
        if (!t->stop_sig)
            t->stop_sig = sig;
        if (stopping)
            kill_at = now;      /* the second one: no more grace */
        else {
            stopping = true;
            kill_at = now + grace;
        }
    }
    getrusage (RUSAGE_CHILDREN, &t->usage);
    /* The step's own status, as timeout(1) and srun report theirs: a step
     * that catches the stopping signal and exits 5 ends with 5; one that
     * dies of it (or of the SIGKILL after the grace) with 128+N. */
    if (!t->main_done)
        return 125;
    if (WIFSIGNALED (t->main_status))
        return 128 + WTERMSIG (t->main_status);
    return WEXITSTATUS (t->main_status);
}
