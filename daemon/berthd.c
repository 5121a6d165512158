/* SPDX-License-Identifier: MIT */
/* berthd: options, start-up (machine, allocation, ledger, journal, socket),
 * readiness (stdout line, --print-env, sd_notify, or the parent of
 * --detach), the event loop, and the exit codes: 0 clean stop, 1 runtime
 * error, 2 usage error, 3 the allocation is not live, 4 the scheduler cannot
 * be reached. */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "allocation_discover.h"
#include "berth_config.h"
#include "berthd.h"
#include "leases.h"
#include "launcher_probe.h"
#include "machine_select.h"
#include "ops.h"
#include "queue.h"
#include "server.h"
#include "pidlock.h"
#include "sockdir.h"
#include "status.h"
#include "socket_path.h"
#include "text.h"

static const char usage_text[] =
"usage: berthd [options]\n"
"Keep the ledger of this batch allocation (or of this machine) and hand out\n"
"disjoint placements to `berth` clients over a Unix socket.\n"
"\n"
"  --machine NAME            machine config to use (default: detected)\n"
"  --config FILE             extra config file, layered last (repeatable)\n"
"  --compiler NAME           compiler section of the machine config\n"
"  --machine-path DIR        look for NAME.cfg in DIR before the shipped\n"
"                            machines (repeatable, in order; then the colon\n"
"                            list BERTH_MACHINE_PATH)\n"
"  --socket PATH             socket to listen on (default: per user and job,\n"
"                            $XDG_RUNTIME_DIR/berth/<job>.sock or\n"
"                            /tmp/berth-<uid>/<job>.sock)\n"
"  --state-dir DIR           journal and events log (default: beside the\n"
"                            default socket, <job>.state); created 0700\n"
"  --foreground              stay in the foreground (systemd, tests)\n"
"  --detach                  run in the background once ready (default)\n"
"                            Either way, once ready berthd prints\n"
"                            `export BERTH_SOCKET=...` for eval.\n"
"  --print-env               on failure, print a line that fails when\n"
"                            evaluated (for eval \"$(berthd --print-env)\")\n"
"  --max-connections N       open connections at once (default 1024)\n"
"  --max-leases N            connection-bound leases per connection\n"
"                            (default 1024)\n"
"  --starvation-overtakes N  hold freed resources for the head of the queue\n"
"                            once it has been overtaken N times (default 16)\n"
"  --starvation-seconds T    ... or has waited T seconds (default 600)\n"
"  --drain-timeout T         on shutdown, wait at most T seconds for leases\n"
"                            to end before ending them (default 60)\n"
"  --reclaim-grace T         after a crash, restored connection-bound leases\n"
"                            are held while their holder processes live; one\n"
"                            whose holder cannot be watched (another pid\n"
"                            namespace) is freed unless reclaimed within T\n"
"                            seconds (default 30), as are waiting requests'\n"
"                            places unless sent again\n"
"  --journal-records N       compact the journal once it holds N records and\n"
"                            4 times as many as there are leases (default 4096)\n"
"  --discard-journal         set another allocation's journal aside even while\n"
"                            holders of its leases still run (else berthd\n"
"                            refuses to start over them)\n"
"  --deadline-policy P       a request whose duration runs past the job's\n"
"                            end: refuse (default) or warn\n"
"  --output-stall T          close a connection that leaves more than 1 MiB of\n"
"                            replies unread for T seconds (default 60)\n"
"  --output-max MIB          past MIB MiB of unread output for all clients\n"
"                            together, close the one furthest behind\n"
"                            (default 128)\n"
"  --events-max MIB          past MIB MiB the events log is kept as\n"
"                            events.jsonl.1 and a new one begun (default 256;\n"
"                            0: no bound)\n"
"  --spin-us N               after reading a request, poll N microseconds for\n"
"                            the next before sleeping (default 30; 0: sleep\n"
"                            at once; never with a single CPU)\n"
"  --help, --version\n"
"\n"
"Signals: SIGTERM or SIGINT drain (no new leases, waiting requests are\n"
"answered shutting_down, leases end within --drain-timeout; a second one\n"
"forces); SIGHUP reopens the logs.\n"
"\n"
"Exit status: 0 stopped cleanly, 1 runtime error, 2 usage error, 3 the\n"
"allocation is not live, 4 the scheduler cannot be reached.\n";

/* ---- options ---- */

enum {
    OPT_MACHINE = 256, OPT_CONFIG, OPT_COMPILER, OPT_MACHINE_PATH, OPT_SOCKET, OPT_STATE_DIR,
    OPT_FOREGROUND, OPT_DETACH, OPT_PRINT_ENV, OPT_MAX_CONN, OPT_MAX_LEASES,
    OPT_OVERTAKES, OPT_STARVE_SECS, OPT_DRAIN, OPT_GRACE, OPT_JOURNAL, OPT_DISCARD,
    OPT_DEADLINE, OPT_STALL, OPT_OUTMAX, OPT_EVMAX, OPT_SPIN, OPT_HELP,
    OPT_VERSION,
};

static const struct option long_options[] = {
    { "machine", required_argument, NULL, OPT_MACHINE },
    { "config", required_argument, NULL, OPT_CONFIG },
    { "compiler", required_argument, NULL, OPT_COMPILER },
    { "machine-path", required_argument, NULL, OPT_MACHINE_PATH },
    { "socket", required_argument, NULL, OPT_SOCKET },
    { "state-dir", required_argument, NULL, OPT_STATE_DIR },
    { "foreground", no_argument, NULL, OPT_FOREGROUND },
    { "detach", no_argument, NULL, OPT_DETACH },
    { "print-env", no_argument, NULL, OPT_PRINT_ENV },
    { "max-connections", required_argument, NULL, OPT_MAX_CONN },
    { "max-leases", required_argument, NULL, OPT_MAX_LEASES },
    { "starvation-overtakes", required_argument, NULL, OPT_OVERTAKES },
    { "starvation-seconds", required_argument, NULL, OPT_STARVE_SECS },
    { "drain-timeout", required_argument, NULL, OPT_DRAIN },
    { "reclaim-grace", required_argument, NULL, OPT_GRACE },
    { "journal-records", required_argument, NULL, OPT_JOURNAL },
    { "discard-journal", no_argument, NULL, OPT_DISCARD },
    { "deadline-policy", required_argument, NULL, OPT_DEADLINE },
    { "output-stall", required_argument, NULL, OPT_STALL },
    { "output-max", required_argument, NULL, OPT_OUTMAX },
    { "events-max", required_argument, NULL, OPT_EVMAX },
    { "spin-us", required_argument, NULL, OPT_SPIN },
    { "help", no_argument, NULL, OPT_HELP },
    { "version", no_argument, NULL, OPT_VERSION },
    { NULL, 0, NULL, 0 },
};

static int parse_int (const char *opt, const char *v, int min, int max,
                      int *out, berth_error_t *err)
{
    char *end;
    errno = 0;
    long n = strtol (v, &end, 10);
    if (!*v || *end || errno || n < min || n > max)
        return errprintf (err, "--%s wants a whole number from %d to %d, got "
                          "'%s'", opt, min, max, v);
    *out = (int) n;
    return 0;
}

/* A size in MiB, into bytes. */
static int parse_mib (const char *opt, const char *v, int min, int max,
                      size_t *out, berth_error_t *err)
{
    int mib;
    if (parse_int (opt, v, min, max, &mib, err) < 0)
        return -1;
    *out = (size_t) mib << 20;
    return 0;
}

static int parse_seconds (const char *opt, const char *v, double *out,
                          berth_error_t *err)
{
    char *end;
    errno = 0;
    double n = strtod (v, &end);
    if (!*v || *end || errno || !(n >= 0) || n > PROTO_MAX_SECONDS)
        return errprintf (err, "--%s wants seconds from 0 to %.0f, got '%s'",
                          opt, PROTO_MAX_SECONDS, v);
    *out = n;
    return 0;
}

/* 1: --help or --version answered; 0: go on; -1: usage error. */
static int parse_options (int argc, char **argv, struct berthd_config *cfg,
                          berth_error_t *err)
{
    static const char *configs[64];
    static const char *mpath[33];
    int nmpath = 0;
    int nconfigs = 0, c;
    bool detach = false;
    *cfg = (struct berthd_config) {
        .max_connections = 1024, .max_leases_per_conn = 1024,
        .starvation_overtakes = WAITQUEUE_DEFAULT_OVERTAKES,
        .starvation_seconds = WAITQUEUE_DEFAULT_MAX_WAIT,
        .drain_timeout = 60, .reclaim_grace = 30, .configs = configs,
        .journal_records = 4096, .output_stall = 60, .spin_us = 30,
        .output_max = (size_t) 128 << 20, .events_max = (size_t) 256 << 20,
    };
    opterr = 0;
    while ((c = getopt_long (argc, argv, ":", long_options, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case OPT_MACHINE: cfg->machine = optarg; break;
        case OPT_CONFIG:
            if (nconfigs == 63)
                return errprintf (err, "at most 63 --config files");
            configs[nconfigs++] = optarg;
            break;
        case OPT_COMPILER: cfg->compiler = optarg; break;
        case OPT_MACHINE_PATH:
            if (nmpath == 32)
                return errprintf (err, "at most 32 --machine-path "
                                  "directories");
            mpath[nmpath++] = optarg;
            break;
        case OPT_SOCKET: cfg->socket_path = optarg; break;
        case OPT_STATE_DIR: cfg->state_dir = optarg; break;
        case OPT_FOREGROUND: cfg->foreground = true; break;
        case OPT_DETACH: detach = true; break;
        case OPT_PRINT_ENV: cfg->print_env = true; break;
        case OPT_MAX_CONN:
            rc = parse_int ("max-connections", optarg, 1, 1 << 20,
                            &cfg->max_connections, err);
            break;
        case OPT_MAX_LEASES:
            rc = parse_int ("max-leases", optarg, 1, 1 << 20,
                            &cfg->max_leases_per_conn, err);
            break;
        case OPT_OVERTAKES:
            rc = parse_int ("starvation-overtakes", optarg, 0, 1 << 20,
                            &cfg->starvation_overtakes, err);
            break;
        case OPT_STARVE_SECS:
            rc = parse_seconds ("starvation-seconds", optarg,
                                &cfg->starvation_seconds, err);
            break;
        case OPT_DRAIN:
            rc = parse_seconds ("drain-timeout", optarg, &cfg->drain_timeout,
                                err);
            break;
        case OPT_GRACE:
            rc = parse_seconds ("reclaim-grace", optarg, &cfg->reclaim_grace,
                                err);
            break;
        case OPT_STALL:
            rc = parse_seconds ("output-stall", optarg, &cfg->output_stall,
                                err);
            break;
        case OPT_OUTMAX:
            rc = parse_mib ("output-max", optarg, 1, 1 << 16, &cfg->output_max,
                            err);
            break;
        case OPT_EVMAX:
            rc = parse_mib ("events-max", optarg, 0, 1 << 20, &cfg->events_max,
                            err);
            break;
        case OPT_SPIN:
            rc = parse_int ("spin-us", optarg, 0, 10000, &cfg->spin_us, err);
            break;
        case OPT_JOURNAL:
            rc = parse_int ("journal-records", optarg, 16, 1 << 24,
                            &cfg->journal_records, err);
            break;
        case OPT_DISCARD: cfg->discard_journal = true; break;
        case OPT_DEADLINE:
            if (deadline_policy_parse (optarg, &cfg->deadline_policy, err) < 0)
                return errprefix (err, "--deadline-policy: ");
            break;
        case OPT_HELP:
            fputs (usage_text, stdout);
            return 1;
        case OPT_VERSION:
            printf ("berthd %s (protocol %d)\n", BERTH_VERSION, PROTO_VERSION);
            return 1;
        case ':':
            return errprintf (err, "option %s needs a value", argv[optind - 1]);
        default:
            return errprintf (err, "unknown option '%s'", argv[optind - 1]);
        }
        if (rc < 0)
            return -1;
    }
    if (optind < argc)
        return errprintf (err, "unexpected argument '%s' (berthd takes only "
                          "options)", argv[optind]);
    if (detach && cfg->foreground)
        return errprintf (err, "--detach and --foreground contradict each "
                          "other; give one");
    configs[nconfigs] = NULL;
    mpath[nmpath] = NULL;
    cfg->machine_path = mpath;
    return 0;
}

/* ---- start-up ---- */

/* Always in quotes: the ready line's form is fixed (tests and scripts
 * match it). NULL when out of memory. */
static char *shell_quote (const char *s)
{
    struct text_buf b = { 0 };
    text_buf_shell_word (&b, s, true);
    if (b.bad) {
        free (b.s);
        return NULL;
    }
    return b.s;
}

/* For `eval "$(berthd --print-env)"`: a failure must not evaluate to
 * nothing, or a `set -e` script runs its steps without a daemon. */
static void print_env_failure (const char *msg)
{
    char text[1200];
    snprintf (text, sizeof (text), "berthd: %s", msg);
    char *q = shell_quote (text);
    printf ("echo %s >&2; false\n", q ? q : "'berthd failed to start'");
    fflush (stdout);
    free (q);
}

/* The same line with or without --print-env: evaluated either way, it must
 * export the socket, or the berth commands the shell starts do not see it. */
static void print_ready (const char *path)
{
    char *q = shell_quote (path);
    printf ("export BERTH_SOCKET=%s\n", q ? q : path);
    fflush (stdout);
    free (q);
}

static int exit_code_for (const char *code)
{
    if (code && strcmp (code, "allocation_not_live") == 0)
        return BERTHD_EXIT_NOT_LIVE;
    if (code && strcmp (code, "scheduler_unreachable") == 0)
        return BERTHD_EXIT_UNREACHABLE;
    return BERTHD_EXIT_RUNTIME;
}

/* mkdir -p with mode 0700 for what is created. */
static int make_dirs (const char *path, berth_error_t *err)
{
    char buf[PATH_MAX];
    if (snprintf (buf, sizeof (buf), "%s", path) >= (int) sizeof (buf))
        return errprintf (err, "state directory path is too long: %s", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir (buf, 0700) < 0 && errno != EEXIST)
                return errprintf (err, "cannot create the state directory "
                                  "%s: %s", buf, strerror (errno));
            *p = saved;
            if (!saved)
                break;
        }
    }
    return 0;
}

static int setup_state_dir (struct berthd *d, berth_error_t *err)
{
    char buf[PATH_MAX];
    const char *dir = d->cfg.state_dir;
    if (!dir) {
        size_t n = strlen (d->socket_path);
        if (n > 5 && strcmp (d->socket_path + n - 5, ".sock") == 0)
            n -= 5;
        snprintf (buf, sizeof (buf), "%.*s.state", (int) n, d->socket_path);
        dir = buf;
    }
    struct stat st;
    if (make_dirs (dir, err) < 0)
        return -1;
    if (stat (dir, &st) < 0 || !S_ISDIR (st.st_mode))
        return errprintf (err, "state directory %s is not a directory", dir);
    if (st.st_uid != getuid ())
        return errprintf (err, "state directory %s belongs to uid %u, not to "
                          "you (uid %u); give --state-dir", dir,
                          (unsigned) st.st_uid, (unsigned) getuid ());
    if (!realpath (dir, d->state_dir))
        return errprintf (err, "state directory %s: %s", dir, strerror (errno));
    /* One daemon per state directory: its journal is the ledger's truth.
     * The lock lives as long as the process. */
    char lock[PATH_MAX + 16], what[PATH_MAX + 32];
    pid_t holder;
    snprintf (lock, sizeof (lock), "%s/lock", d->state_dir);
    snprintf (what, sizeof (what), "the state directory %s", d->state_dir);
    return pidlock_take (lock, what, "--state-dir", d->socket_path, &holder,
                         err) < 0 ? -1 : 0;
}

/* One daemon per socket, decided before the socket is touched: two started
 * at once on one path would otherwise both find it stale, and the one
 * that bound first would serve an unlinked path. */
static int lock_socket (struct berthd *d, berth_error_t *err)
{
    char what[sizeof (d->socket_path) + 16];
    pid_t holder;
    snprintf (d->socket_lock, sizeof (d->socket_lock), "%s" SOCKET_LOCK_SUFFIX,
              d->socket_path);
    snprintf (what, sizeof (what), "the socket %s", d->socket_path);
    int fd = pidlock_take (d->socket_lock, what, "--socket", d->state_dir,
                           &holder, err);
    if (fd < 0)
        return -1;
    d->socket_lock_fd = fd;
    d->socket_locked = true;
    return 0;
}

static void signal_cb (evutil_socket_t sig, short what, void *arg)
{
    (void) what;
    struct berthd *d = arg;
    if (sig == SIGHUP) {
        log_reopen ();
        log_msg (LOG_NOTICE, "SIGHUP: reopened the logs");
        events_reopen (d->events);
        return;
    }
    log_msg (LOG_NOTICE, "%s received", strsignal ((int) sig));
    ops_shutdown (d, d->draining);   /* a second signal forces */
}

static void raise_fd_limit (void)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit (RLIMIT_NOFILE, &rl);
    }
}

/* --max-connections within the descriptor limit: each connection is a
 * descriptor, and past the limit accept fails while the connections that
 * hold the cores wait, so that the release that would free them cannot get
 * in. Kept back: berthd's own files (journal, its compaction, events log and
 * replays, log, locks, listener, event loop, probes) and the reserve
 * connections, which may release and ask status only (server.c). */
static int fit_connections (struct berthd *d, berth_error_t *err)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    long long kept = BERTHD_OWN_FDS + BERTHD_RESERVE_CONNS;
    long long room = (long long) rl.rlim_cur - kept;
    if (room < 1)
        return errprintf (err, "the descriptor limit "
                               "(RLIMIT_NOFILE) is %llu: berthd needs more "
                               "than %lld (%d for its own files, %d reserve "
                               "connections); raise it (ulimit -n)",
                               (unsigned long long) rl.rlim_cur, kept,
                               BERTHD_OWN_FDS, BERTHD_RESERVE_CONNS);
    if (d->cfg.max_connections > room) {
        log_msg (LOG_NOTICE, "--max-connections %d fitted to %lld: the "
                 "descriptor limit (RLIMIT_NOFILE) is %llu, and berthd keeps "
                 "%d for its own files and %d for connections that may only "
                 "release or ask status; raise the limit (ulimit -n) for more",
                 d->cfg.max_connections, room,
                 (unsigned long long) rl.rlim_cur, BERTHD_OWN_FDS,
                 BERTHD_RESERVE_CONNS);
        d->cfg.max_connections = (int) room;
    }
    return 0;
}

/* Our name in the account database, for a scheduler query (which most
 * starts never make: the lookup can be slow where accounts come from LDAP). */
static const char *account_name (void)
{
    struct passwd *pw = getpwuid (getuid ());
    return pw ? pw->pw_name : NULL;
}

/* The job's end has been learnt (jobend.h): the requests that waited for it
 * are served again. */
/* The job's end is known: requests that waited for it are served again. */
static void jobend_known (void *arg)
{
    struct berthd *d = arg;
    server_end_known (d->server);
}

/* systemd's STATUS= text (notify.h), counted from the daemon's parts. */
static void notify_status (void *arg, char *buf, size_t size)
{
    struct berthd *d = arg;
    long free_cores = 0, cores = 0;
    for (int i = 0; d->ledger && i < ledger_nnodes (d->ledger); i++) {
        struct ledger_node_info ni;
        ledger_node_info (d->ledger, i, &ni);
        free_cores += ni.free_cores;
        cores += ni.cores;
    }
    double since;
    snprintf (buf, size, "%s%s%zu leases, %d waiting, %ld of %ld cores free, "
              "%d connections", d->draining ? "draining: " : "",
              queue_held (d->queue, &since) ? "grants held for want of "
                                              "space: " : "",
              lease_book_count (d->book), queue_waiting (d->queue),
              free_cores, cores, d->connections);
}

static int start (struct berthd *d, int *code, berth_error_t *err)
{
    struct machine_options mo = { d->cfg.machine, d->cfg.configs,
                                  d->cfg.compiler, d->cfg.machine_path };
    struct allocation_env aenv = { .refuse_stale = true,
                                   .user_lookup = account_name };
    *code = BERTHD_EXIT_RUNTIME;
    if (fit_connections (d, err) < 0) {
        *code = BERTHD_EXIT_USAGE;
        return -1;
    }
    if (machine_load (&mo, &d->machine, err) < 0)
        return -1;
    if (d->machine->compiler_warning)
        log_msg (LOG_WARNING, "%s", d->machine->compiler_warning);
    if (allocation_discover (&d->machine->par, d->machine->name, &aenv,
                             &d->alloc, err) < 0) {
        *code = exit_code_for (err->code);
        return -1;
    }
    for (int i = 0; i < d->alloc->nwarnings; i++)
        log_msg (LOG_WARNING, "%s", d->alloc->warnings[i]);
    /* A Slurm machine outside a job is a login node: launch as one. */
    d->machine->par.system = d->alloc->system;

    if (d->cfg.socket_path)
        snprintf (d->socket_path, sizeof (d->socket_path), "%s",
                  d->cfg.socket_path);
    else {
        char dir[sizeof (d->socket_path)];
        if (socket_default_path (getenv ("XDG_RUNTIME_DIR"), getuid (),
                                  d->alloc->job_id, d->socket_path,
                                  sizeof (d->socket_path), err) < 0)
            return -1;
        snprintf (dir, sizeof (dir), "%s", d->socket_path);
        if (sockdir_secure (dirname (dir), getuid (), 1, err) < 0)
            return -1;
    }
    if (strlen (d->cfg.socket_path ? d->cfg.socket_path : d->socket_path)
        >= sizeof (d->socket_path))
        return errprintf (err, "socket path %s is too long (at most %zu "
                          "bytes); give a shorter --socket",
                          d->cfg.socket_path, sizeof (d->socket_path) - 1);
    if (setup_state_dir (d, err) < 0)
        return -1;
    /* A daemon already serving this socket owns it: refuse before touching
     * anything (an activated socket is systemd's to manage). */
    if (!getenv ("LISTEN_FDS")
        && (lock_socket (d, err) < 0
            || sockdir_clear_stale (d->socket_path, err) < 0))
        return -1;

    /* srun --version runs while the ledger is built. */
    struct launcher_probe probe;
    launcher_probe_start (&probe, d->machine);
    int built = 0;
    if (!(d->base = event_base_new ()))
        built = errprintf (err, "cannot create the event loop");
    else if (leases_init (d, err) < 0
             || !(d->events = events_create (d->base, d->state_dir,
                                                 d->cfg.events_max, err))
             || journal_open_ledger (d->journal, d->alloc, &d->ledger,
                                     &d->empty, err) < 0)
        built = -1;
    launcher_probe_finish (&probe, &d->caps);
    if (built < 0)
        return -1;
    d->layout = d->caps.placement == PLACEMENT_SCHEDULER ? LEDGER_SCHEDULER
                                                         : LEDGER_CPU_BINDING;
    ledger_capacity (d->ledger, &d->capacity);
    d->capacity.mpi_allowed = d->alloc->mpi_allowed;
    if (!(d->queue = queue_create (d, err)))
        return -1;
    int ln = d->alloc->local_node;
    if (ln >= 0 && ln < d->alloc->nnodes && d->alloc->nodes[ln].gpus > 0)
        d->gpu_var = d->machine->par.gpu_visible_devices_var;
    static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    for (int i = 0; i < 3; i++)
        if (!(d->sig_ev[i] = evsignal_new (d->base, sigs[i], signal_cb, d))
            || evsignal_add (d->sig_ev[i], NULL) < 0)
            return errprintf (err, "cannot install signal handlers");
    if (!(d->notify = notify_create (d->base, notify_status, d, err))
        || !(d->jobend = jobend_create (d->base, d->alloc,
                                        d->cfg.deadline_policy, jobend_known,
                                        d, err)))
        return -1;
    events_allocation (d->events, d->alloc, d->machine->name);
    if (journal_restore_leases (d->journal, d->book, d->watch, err) < 0
        || ops_restore_waits (d, err) < 0
        || !(d->server = server_create (d, err)))
        return -1;
    /* events reach watchers through the connection layer */
    events_set_sink (d->events, server_broadcast, d->server);
    d->started = now_wall ();
    return 0;
}

static void teardown (struct berthd *d)
{
    server_destroy (d->server);
    d->server = NULL;
    /* the socket is gone: the next berthd may have it */
    if (d->socket_locked)
        pidlock_drop (d->socket_lock, d->socket_lock_fd);
    d->socket_locked = false;
    /* after the connections: closing them ends leases, which log events
     * and ask for a status */
    queue_destroy (d->queue);
    status_failures_free (d);
    status_memo_clear (&d->status_memo[0]);
    status_memo_clear (&d->status_memo[1]);
    json_decref (d->alloc_head);
    d->alloc_head = NULL;
    jobend_destroy (d->jobend);
    events_destroy (d->events);
    notify_destroy (d->notify);
    leases_close (d);
    ledger_destroy (d->ledger);
    ledger_destroy (d->empty);
    struct event *evs[] = { d->drain_timer, d->sig_ev[0], d->sig_ev[1],
                            d->sig_ev[2] };
    for (size_t i = 0; i < sizeof (evs) / sizeof (evs[0]); i++)
        if (evs[i])
            event_free (evs[i]);
    if (d->base)
        event_base_free (d->base);
    allocation_destroy (d->alloc);
    machine_destroy (d->machine);
}

/* The parent of --detach: wait for the child's word, then speak for it. */
static int wait_ready (int fd, pid_t child, const struct berthd_config *cfg)
{
    char buf[2048];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof (buf) - 1
           && ((r = read (fd, buf + n, sizeof (buf) - 1 - n)) > 0
               || (r < 0 && errno == EINTR)))
        if (r > 0)
            n += (size_t) r;
    buf[n] = '\0';
    close (fd);
    char *nl = strchr (buf, '\n');
    if (nl)
        *nl = '\0';
    int code = -1, off = 0;
    if (sscanf (buf, "%d %n", &code, &off) < 1) {
        int status;
        code = BERTHD_EXIT_RUNTIME;
        if (waitpid (child, &status, 0) == child && WIFEXITED (status)
            && WEXITSTATUS (status) != 0)
            code = WEXITSTATUS (status);
        snprintf (buf, sizeof (buf), "berthd exited during start-up "
                  "(see the messages above)");
        off = 0;
        if (cfg->print_env)
            print_env_failure (buf);
        return code;
    }
    if (code == 0) {
        print_ready (buf + off);
        return 0;
    }
    if (cfg->print_env)
        print_env_failure (buf + off);
    return code;
}

#define BERTHD_MMAP_THRESHOLD (1 << 20)

int main (int argc, char **argv)
{
    static struct berthd d;
    berth_error_t err;
    int code = 0, ready_fd = -1;
    signal (SIGPIPE, SIG_IGN);
    /* Replies of megabytes (a big job's status) are mapped and unmapped on
     * their own: with glibc's sliding threshold they would come from the
     * heap after the first one is freed, and stay in berthd's memory long
     * after their clients are gone. */
    mallopt (M_MMAP_THRESHOLD, BERTHD_MMAP_THRESHOLD);
    log_init ();
    bool print_env = false;           /* known even when parsing fails */
    for (int i = 1; i < argc; i++)
        if (strcmp (argv[i], "--print-env") == 0)
            print_env = true;
    int rc = parse_options (argc, argv, &d.cfg, &err);
    if (rc > 0)
        return 0;
    if (rc < 0) {
        fprintf (stderr, "berthd: %s (see berthd --help)\n", err.text);
        if (print_env)
            print_env_failure (err.text);
        return BERTHD_EXIT_USAGE;
    }
    raise_fd_limit ();
    if (!d.cfg.foreground) {
        int p[2];
        if (pipe2 (p, O_CLOEXEC) < 0) {
            fprintf (stderr, "berthd: pipe: %s\n", strerror (errno));
            return BERTHD_EXIT_RUNTIME;
        }
        fflush (NULL);
        pid_t pid = fork ();
        if (pid < 0) {
            fprintf (stderr, "berthd: fork: %s\n", strerror (errno));
            return BERTHD_EXIT_RUNTIME;
        }
        if (pid > 0) {
            close (p[1]);
            return wait_ready (p[0], pid, &d.cfg);
        }
        close (p[0]);
        ready_fd = p[1];
        setsid ();
        int null = open ("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2 (null, 0);
            dup2 (null, 1);     /* the parent's $(...) must not wait for us */
            if (null > 2)
                close (null);
        }
    }
    if (start (&d, &code, &err) < 0) {
        log_msg (LOG_ERR, "%s", err.text);
        if (ready_fd >= 0)
            dprintf (ready_fd, "%d %s\n", code, err.text);
        else if (d.cfg.print_env)
            print_env_failure (err.text);
        teardown (&d);
        return code;
    }
    log_msg (LOG_INFO, "serving %s%s (%s, %d node%s, placement %s) on %s",
             d.alloc->job_id ? "job " : "this machine",
             d.alloc->job_id ? d.alloc->job_id : "",
             berth_system_name (d.alloc->system), d.alloc->nnodes,
             d.alloc->nnodes == 1 ? "" : "s",
             placement_support_name (d.caps.placement), d.socket_path);
    notify_ready (d.notify);
    if (ready_fd >= 0) {
        char logpath[PATH_MAX + 16];
        dprintf (ready_fd, "0 %s\n", d.socket_path);
        close (ready_fd);
        /* From now on nobody reads our stderr: log beside the journal. */
        snprintf (logpath, sizeof (logpath), "%s/berthd.log", d.state_dir);
        log_to_file (logpath);
    }
    else
        print_ready (d.socket_path);
    berthd_loop (&d);
    code = d.exit_code;
    teardown (&d);
    return code;
}
