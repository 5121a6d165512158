/* SPDX-License-Identifier: MIT */
/* berth run: acquire a lease (waiting as needed), run the step in it, pass
 * signals on, release, and exit with the step's status. The connection to
 * berthd stays open while the step runs: the lease is bound to it. The
 * step runs below a supervisor child (step_tree.h) that shares the
 * connection, so the lease ends only when berth run and the whole step
 * tree are gone, also when berth run is killed with SIGKILL. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "affinity.h"
#include "cli_daemon.h"
#include "clock.h"
#include "commands.h"
#include "idset.h"
#include "local_launch.h"
#include "request_options.h"
#include "srun_after.h"
#include "step_tree.h"
#include "text.h"
#include "topology.h"
#include "wait_progress.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth run [OPTIONS] [--] PROGRAM [ARGS...]\n"
"Ask berthd for a placement (waiting until it fits), run PROGRAM there and\n"
"exit with its status (128+N when killed by signal N). Without --local the\n"
"machine's launch (srun, mpiexec, ...) that berthd renders for the placement\n"
"is run; with --local PROGRAM runs on this node bound to the placed cores.\n"
"The step finds its share in BERTH_LEASE, BERTH_NODES, BERTH_CORES,\n"
"BERTH_GPUS and BERTH_MEMORY_MB. SIGINT, SIGTERM, SIGHUP, SIGUSR1 and\n"
"SIGUSR2 sent to berth run are passed to every process of the step,\n"
"also those that left its process group (setsid). SIGINT, SIGTERM and\n"
"SIGHUP stop it: after the grace (--grace, else BERTH_STOP_GRACE, default\n"
"10 s) what still runs gets SIGKILL, a second such signal kills at once,\n"
"and the lease ends only once no process of the step runs; berth run then\n"
"exits with the step's status (128+N when it died of signal N). When the\n"
"step's first process ends, what it\n"
"left running is stopped the same way. If berth run is killed (SIGKILL),\n"
"the step is stopped likewise and its cores stay its own until it is gone.\n"
"If berthd restarts\n"
"while the step runs, berth run reconnects (for up to BERTH_RECONNECT_S\n"
"seconds, default 60) and reclaims the lease; the step keeps its cores.\n"
"Exit status: the step's; else 125 when berth itself fails (a usage error,\n"
"no berthd, a request refused as unsatisfiable or busy, --timeout passed,\n"
"berthd shutting down or gone), 126 when PROGRAM cannot be run, 127 when it\n"
"is not found.\n\n");
    request_options_help (f);
    fprintf (f,
"Running:\n"
"  --local                  run on berthd's node: with CPU affinity (and, on a\n"
"                           GPU node, the vendor's visible-devices variable)\n"
"                           where berth places by CPU binding; through srun\n"
"                           where Slurm places every step (20.11 and newer)\n"
"  --grace SECONDS          between the stopping signal and SIGKILL (default\n"
"                           BERTH_STOP_GRACE, else 10)\n"
"  --time-limit SECONDS     stop the step (SIGTERM, the grace, SIGKILL) once it\n"
"                           has run this long\n"
"  --omp                    also set OMP_NUM_THREADS (cores per task, or the\n"
"                           placed cores of a --cores or --local step)\n"
"  -v, --verbose            say on stderr what was granted (and a cut made by\n"
"                           the --min-* options) and what runs; while the\n"
"                           request waits (also without -v when stderr is a\n"
"                           terminal), its place in the queue, why it waits\n"
"                           and when it could start where the running steps\n"
"                           stated their --duration, updated as they change\n"
"  -h, --help               this text\n");
}

enum { OPT_LOCAL = 256, OPT_OMP, OPT_GRACE, OPT_TIME_LIMIT };

static const struct option options[] = {
    REQUEST_OPTIONS,
    { "local", no_argument, NULL, OPT_LOCAL },
    { "omp", no_argument, NULL, OPT_OMP },
    { "grace", required_argument, NULL, OPT_GRACE },
    { "time-limit", required_argument, NULL, OPT_TIME_LIMIT },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

struct run_args {
    const char *socket;
    bool local, omp, verbose;
    int cpus_per_task;        /* 0: not given */
    int ntasks, cores, gpus;  /* as asked, 0: not given (to tell a cut) */
    const char *grace_text;   /* --grace, NULL: not given */
    double grace, time_limit; /* seconds; time_limit 0: none */
    char **argv;
};

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };
#define NFORWARDED ((int) (sizeof (forwarded) / sizeof (forwarded[0])))

static volatile sig_atomic_t child_pid;

/* A signal from the terminal (SI_KERNEL) went to the whole foreground
 * process group, the step included: passing it on would deliver it twice. */
static void forward (int sig, siginfo_t *si, void *ctx)
{
    (void) ctx;
    if (si && si->si_code == SI_KERNEL)
        return;
    if (child_pid > 0)
        kill ((pid_t) child_pid, sig);
}

static int parse (int argc, char **argv, berth_request_t *r, struct run_args *a,
                  bool *help)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "+" REQUEST_SHORT "vh", options)) != -1) {
        int taken = request_option (r, &a->socket, c, optarg, "run");
        if (taken < 0)
            return 2;
        if (c == 'c' && taken)
            a->cpus_per_task = atoi (optarg);
        if (c == 'n' && taken)
            a->ntasks = atoi (optarg);
        if (c == REQ_OPT_CORES && taken)
            a->cores = atoi (optarg);
        if (c == REQ_OPT_GPUS && taken)
            a->gpus = atoi (optarg);
        if (taken)
            continue;
        switch (c) {
        case OPT_LOCAL:
            a->local = true;
            break;
        case OPT_OMP:
            a->omp = true;
            break;
        case OPT_GRACE:
            a->grace_text = optarg;
            break;
        case OPT_TIME_LIMIT: {
            char *end;
            errno = 0;
            a->time_limit = strtod (optarg, &end);
            if (errno || *end || end == optarg || !(a->time_limit > 0)
                || a->time_limit > 1e9)
                return cli_fail (2, "run", "--time-limit '%s': give the step's run time "
                                 "limit as seconds above 0, e.g. 600 or 1.5", optarg);
            break;
        }
        case 'v':
            a->verbose = true;
            break;
        case 'h':
            *help = true;
            return 0;
        default:
            return cli_bad_option ("run", argv);
        }
    }
    berth_error_t ge = { 0 };
    if (step_tree_grace (a->grace_text, &a->grace, &ge) < 0)
        return cli_fail (2, "run", "%s", ge.text);
    if (a->local && request_option_span (r) == 1)
        return cli_fail (2, "run", "--local runs the step on this node, so it "
                         "cannot span nodes: drop --local or --may-span-nodes");
    if (optind >= argc || !argv[optind][0])
        return cli_fail (2, "run", "no program given: put it after '--', e.g. "
                         "berth run -n 4 -- ./model");
    a->argv = argv + optind;
    return 0;
}

/* The environment of the step, set in this process before it forks (berth
 * run execs nothing else). */
static int step_environment (const berth_lease_t *l, const struct run_args *a)
{
    berth_client_error_t err;
    /* For a local step on a GPU node berthd's env_delta sets the vendor's
     * visible-devices variable to exactly its GPUs (PROTOCOL.md): the CLI
     * loads no machine config to know the vendor. */
    if (berth_launch_apply_env (berth_lease_launch (l), &err) < 0)
        return cli_daemon_fail ("run", &err), CLI_EXIT_BERTH;
    for (int i = 0; i < berth_lease_nenv (l); i++)
        setenv (berth_lease_env_name (l, i), berth_lease_env_value (l, i), 1);
    if (a->omp) {
        int n = a->cpus_per_task, ncores = 0;
        berth_lease_cores (l, 0, &ncores);
        char buf[16];
        /* a --cores step is one process on its granted cores (a --min-cores
         * cut included), as a --local one is */
        snprintf (buf, sizeof (buf), "%d",
                  n > 0 ? n : (a->local || a->cores > 0) && ncores > 0 ? ncores : 1);
        setenv ("OMP_NUM_THREADS", buf, 1);
    }
    return 0;
}

/* The CPU set for a --local step. */
static int local_cpus (const berth_lease_t *l, cpu_set_t *set)
{
    berth_error_t e = { 0 };
    int *usable = NULL, nusable = 0, *threads = NULL, nthreads = 0, ncores = 0;
    const int *cores = berth_lease_cores (l, 0, &ncores);
    if (topology_affinity_ids (&usable, &nusable, &e) < 0
        || affinity_threads (NULL, cores, ncores, usable, nusable, &threads, &nthreads,
                             &e) < 0) {
        free (usable);
        return cli_fail (CLI_EXIT_BERTH, "run", "%s", e.text);
    }
    CPU_ZERO (set);
    for (int i = 0; i < nthreads; i++)
        if (threads[i] < CPU_SETSIZE)
            CPU_SET (threads[i], set);
    free (usable);
    free (threads);
    return 0;
}

static void describe (const berth_lease_t *l, char *const *argv, int asked_cores,
                      int asked_gpus)
{
    int total = 0;
    fprintf (stderr, "berth run: lease %s:", berth_lease_id (l));
    for (int i = 0; i < berth_lease_nnodes (l); i++) {
        int n;
        const int *ids = berth_lease_cores (l, i, &n);
        char set[256];
        idset_format (ids, n, set, sizeof (set));
        fprintf (stderr, "%s %s (cores %s)", i ? "," : "", berth_lease_node (l, i), set);
        total += n;
    }
    int gpus = berth_lease_gpus (l);
    char cut[96];
    wait_progress_cut (total, gpus, asked_cores, asked_gpus, cut, sizeof (cut));
    fprintf (stderr, ", %d GPU%s%s%s%s; running", gpus, gpus == 1 ? "" : "s",
             cut[0] ? " (" : "", cut, cut[0] ? ")" : "");
    for (int i = 0; argv[i]; i++) {
        fputc (' ', stderr);
        cli_shell_word (stderr, argv[i]);
    }
    fputc ('\n', stderr);
}

/* What the supervisor tells berth run of why the step ended, in a page
 * they share (the exit status says only how). */
struct stop_note {
    int stop_sig;   /* the stopping signal the step got, 0: none */
    int limited;    /* stopped by --time-limit */
    long after_ms;  /* srun_after's wait */
};

/* The supervisor (step_tree.h), a child of berth run: never returns. It
 * holds a copy of the connection, so that the lease, bound to it, outlives
 * a berth run killed by SIGKILL while any process of the step runs; told
 * of that death by PR_SET_PDEATHSIG, it stops the step. */
static void supervise (char *const *argv, const cpu_set_t *cpus, pid_t parent,
                       const sigset_t *watched, const sigset_t *child_mask,
                       double grace, double time_limit, int nnodes,
                       struct stop_note *note)
{
    if (prctl (PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid () != parent)
        kill (getpid (), SIGTERM);   /* blocked: the wait below takes it */
    struct step_tree t;
    berth_error_t e = { 0 };
    if (step_tree_start (&t, argv, cpus, child_mask, "berth run", &e) < 0) {
        fprintf (stderr, "berth run: %s\n", e.text);
        _exit (CLI_EXIT_BERTH);
    }
    int rc = step_tree_wait (&t, watched, grace, time_limit);
    long after = srun_after (argv, t.main, t.main_done, t.main_status, nnodes, "berth run");
    if (note) {
        note->stop_sig = t.stop_sig;
        note->limited = t.limited;
        note->after_ms = after;
    }
    _exit (rc);
}

/* Wait for the step while watching the connection: if berthd goes away,
 * the lease is reclaimed as soon as it is back (so that status shows it
 * held by this connection again), not only at the release. Where pidfds
 * are missing, the step is waited for alone (the release reconnects). */
static int wait_step (pid_t pid, berth_client_t *c, int *status,
                      struct rusage *ru)
{
    int pfd = (int) syscall (SYS_pidfd_open, pid, 0);
    int fd = pfd >= 0 ? berth_fd (c) : -1;
    while (fd >= 0) {
        struct pollfd p[2] = { { pfd, POLLIN, 0 }, { fd, POLLIN, 0 } };
        if (poll (p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        if (p[1].revents) {
            berth_client_error_t err;
            /* not back in time: the release tries again, and says so */
            fd = berth_check (c, &err) == 0 ? berth_fd (c) : -1;
        }
    }
    if (pfd >= 0)
        close (pfd);
    while (wait4 (pid, status, 0, ru) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

/* Run argv and wait for it: its exit status, 128+N for signal N; *after_ms
 * gets the supervisor's wait for Slurm after srun (srun_after.h). */
static int run_step (char *const *argv, const cpu_set_t *cpus, berth_client_t *c,
                     double grace, double time_limit, int nnodes,
                     berth_outcome_t *out, long *after_ms)
{
    sigset_t block, old;
    sigemptyset (&block);
    for (int i = 0; i < NFORWARDED; i++)
        sigaddset (&block, forwarded[i]);
    sigprocmask (SIG_BLOCK, &block, &old);
    fflush (NULL);
    struct stop_note *note = mmap (NULL, sizeof (*note), PROT_READ | PROT_WRITE,
                                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (note == MAP_FAILED)
        note = NULL;      /* the outcome then lacks why it was stopped */
    else
        memset (note, 0, sizeof (*note));
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid < 0) {
        if (note)
            munmap (note, sizeof (*note));
        sigprocmask (SIG_SETMASK, &old, NULL);
        return cli_fail (CLI_EXIT_BERTH, "run", "cannot start '%s': %s", argv[0],
                         strerror (errno));
    }
    if (pid == 0)
        supervise (argv, cpus, parent, &block, &old, grace, time_limit, nnodes, note);
    child_pid = pid;
    struct sigaction sa = { .sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigemptyset (&sa.sa_mask);
    for (int i = 0; i < NFORWARDED; i++) {
        struct sigaction prev;
        /* a signal ignored when berth run started (nohup, `cmd &`) stays so */
        if (sigaction (forwarded[i], NULL, &prev) == 0 && prev.sa_handler != SIG_IGN)
            sigaction (forwarded[i], &sa, NULL);
    }
    sigprocmask (SIG_SETMASK, &old, NULL);
    int status;
    struct rusage ru;
    double t0 = now_mono ();
    if (wait_step (pid, c, &status, &ru) < 0) {
        if (note)
            munmap (note, sizeof (*note));
        return cli_fail (CLI_EXIT_BERTH, "run", "waiting for '%s': %s", argv[0],
                         strerror (errno));
    }
    child_pid = 0;
    if (note) {
        out->stopped = note->limited ? "time-limit" : note->stop_sig ? "signal" : NULL;
        *after_ms = note->after_ms;
        munmap (note, sizeof (*note));
    }
    /* wait4's rusage: the supervisor and the step's tree, which it waited
     * for */
    out->wall_s = now_mono () - t0 - *after_ms / 1000.0;
    out->cpu_s = (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
                 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    out->max_rss_kb = ru.ru_maxrss;
    if (WIFSIGNALED (status)) {
        out->signal = WTERMSIG (status);
        return out->status = 128 + WTERMSIG (status);
    }
    /* the supervisor exits 128+N for a step killed by signal N */
    out->status = WEXITSTATUS (status);
    if (out->status > 128 && out->status - 128 < NSIG)
        out->signal = out->status - 128;
    return out->status;
}

/* How long the release may wait for berthd's answer: berth run returns the
 * step's status whatever berthd does, and a berthd that is stopped or hung
 * answers never. Its books stay right: the connection closes as this
 * command exits, which ends the lease. BERTH_RELEASE_WAIT_S overrides
 * (0.1..86400). */
#define DEFAULT_RELEASE_WAIT_S 30.0

static double release_wait_s (void)
{
    return text_seconds_or (getenv ("BERTH_RELEASE_WAIT_S"), 0.1, 86400,
                            DEFAULT_RELEASE_WAIT_S);
}

static long ms_since (double t0)
{
    return (long) ((now_mono () - t0) * 1000);
}

int cmd_run (int argc, char **argv)
{
    berth_client_error_t err;
    struct run_args a = { 0 };
    bool help = false;
    berth_request_t *r = berth_request_new ();
    if (!r)
        return cli_fail (CLI_EXIT_BERTH, "run", "out of memory");
    int rc = parse (argc, argv, r, &a, &help);
    if (rc || help) {
        if (help)
            usage (stdout);
        berth_request_free (r);
        /* a usage error too is berth's, not the step's */
        return rc ? CLI_EXIT_BERTH : 0;
    }
    berth_request_set_bool (r, "env", 1, NULL);
    if (a.local)
        berth_request_set_bool (r, "local", 1, NULL);
    /* a local step's too: berthd renders its launch where srun places it */
    if (berth_request_set_argv (r, (const char *const *) a.argv, &err) < 0) {
        berth_request_free (r);
        return cli_fail (CLI_EXIT_BERTH, "run", "%s", err.message);
    }
    berth_client_t *c = cli_connect ("run", a.socket);
    /* -v, or a terminal where this is the foreground job (steps started
     * with & in one terminal would draw over each other): show the wait */
    pid_t watcher = 0;
    int asked = a.cores ? a.cores : (a.ntasks ? a.ntasks : 1)
                                    * (a.cpus_per_task ? a.cpus_per_task : 1);
    if (c && (a.verbose || (isatty (STDERR_FILENO)
                            && tcgetpgrp (STDERR_FILENO) == getpgrp ())))
        watcher = wait_progress_start (a.socket, asked, a.gpus);
    berth_lease_t *l = c ? berth_acquire (c, r, &err) : NULL;
    wait_progress_stop (watcher);
    berth_request_free (r);
    if (!l) {
        if (c)
            cli_daemon_fail ("run", &err);
        rc = CLI_EXIT_BERTH;
        berth_close (c);
        return rc;
    }

    double granted = now_mono ();
    long settle_ms = 0;   /* the supervisor's wait for Slurm after srun */
    berth_outcome_t outcome;
    bool ran = false;
    berth_outcome_init (&outcome);
    cli_lease_warning ("run", l);
    char *const *step_argv = a.argv;
    cpu_set_t cpus;
    bool oom = false;
    char **wrapped = a.local ? local_launch (l, a.argv, &oom) : NULL;
    bool bind = a.local && !wrapped;   /* else a launcher places the step */
    if (wrapped)
        step_argv = wrapped;
    if (oom)
        rc = cli_fail (CLI_EXIT_BERTH, "run", "out of memory, or /proc/self/exe "
                       "unreadable, preparing the launch of %s", berth_lease_id (l));
    else if (!a.local && !(step_argv = (char *const *) berth_launch_argv (berth_lease_launch (l))))
        rc = cli_fail (CLI_EXIT_BERTH, "run", "berthd granted lease %s without a "
                       "rendered launch; cannot run the step", berth_lease_id (l));
    else if (bind && local_cpus (l, &cpus) != 0)
        rc = CLI_EXIT_BERTH;
    else if (step_environment (l, &a) != 0)
        rc = CLI_EXIT_BERTH;
    else {
        if (a.verbose)
            describe (l, step_argv, asked, a.gpus);
        rc = run_step (step_argv, bind ? &cpus : NULL, c, a.grace, a.time_limit,
                       berth_lease_nnodes (l), &outcome, &settle_ms);
        ran = true;
        if (outcome.wall_s < 0) {         /* fork or wait failed */
            outcome.status = rc;
            outcome.launch_error = "berth run could not start or wait for it";
        }
    }
    long step_ms = ms_since (granted) - settle_ms;
    free (wrapped);
    /* libberth reconnects if berthd went away meanwhile. If it never came
     * back, berthd (restarted later) frees the lease when this process has
     * exited; the step's status is returned whatever happened. */
    berth_set_answer_wait (c, release_wait_s (), NULL);
    if (berth_release_outcome (c, berth_lease_id (l), ran ? &outcome : NULL,
                               &err) < 0) {
        if (!strcmp (err.code, BERTH_ERR_TIMEOUT))
            cli_fail (rc, "run", "the release of lease %s could not be recorded: %s; "
                      "the step's status is returned, and the lease ends when "
                      "berthd sees this command gone", berth_lease_id (l),
                      err.message);
        else if (!strcmp (err.code, BERTH_ERR_CLOSED))
            cli_fail (rc, "run", "the release of lease %s could not be recorded: %s "
                      "(a restarted berthd frees it once this command has exited)",
                      berth_lease_id (l), err.message);
        else
            cli_fail (rc, "run", "could not release lease %s: %s: %s (it ends as this "
                      "command exits)", berth_lease_id (l), err.code, err.message);
    }
    /* where the lease's time went: the step (launcher start included), the
     * wait for the launcher's scheduler to free it, the release */
    if (a.verbose)
        fprintf (stderr, "berth run: lease %s held %ld ms: step %ld ms, settle %ld ms, "
                 "status %d\n", berth_lease_id (l), ms_since (granted), step_ms,
                 settle_ms, rc);
    berth_lease_free (l);
    berth_close (c);
    return rc;
}
