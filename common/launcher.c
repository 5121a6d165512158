/* What the installed launcher can do: parsed from version text (pure) or
 * detected by running the launcher once per process (the I/O edge). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher.h"

extern char **environ;

#define PROBE_TIMEOUT_MS 5000

const char *placement_support_name (enum placement_support s)
{
    switch (s) {
    case PLACEMENT_CPU_BINDING: return "CPU_BINDING";
    case PLACEMENT_SCHEDULER: return "SCHEDULER";
    default: return "NONE";
    }
}

const char *memcap_support_name (enum memcap_support s)
{
    return s == MEMCAP_ENFORCED ? "ENFORCED" : "NONE";
}

static void caps_none (struct launcher_caps *caps, const char *desc)
{
    memset (caps, 0, sizeof (*caps));
    caps->placement = PLACEMENT_NONE;
    caps->memcap = MEMCAP_NONE;
    caps->slurm_major = caps->slurm_minor = caps->slurm_micro = -1;
    snprintf (caps->desc, sizeof (caps->desc), "%s", desc);
}

void launcher_caps_from_slurm (int major, int minor, int micro,
                               struct launcher_caps *caps)
{
    if (major < 0 || minor < 0) {
        caps_none (caps, "no usable srun");
        return;
    }
    caps_none (caps, "");
    caps->slurm_major = major;
    caps->slurm_minor = minor;
    caps->slurm_micro = micro;
    if (micro >= 0)
        snprintf (caps->desc, sizeof (caps->desc), "slurm %d.%02d.%d", major, minor,
                  micro);
    else
        snprintf (caps->desc, sizeof (caps->desc), "slurm %d.%02d", major, minor);
    long v = major * 100L + minor;
    if (v < 2011)
        caps->placement = PLACEMENT_CPU_BINDING;    /* no --exact, no step --mem */
    else {
        caps->memcap = MEMCAP_ENFORCED;
        /* --exact arrived in 20.11.3; an unknown micro of 20.11 may predate it */
        caps->placement = v == 2011 && micro < 3 ? PLACEMENT_CPU_BINDING
                                                 : PLACEMENT_SCHEDULER;
    }
}

int launcher_parse_srun_version (const char *text, int *major, int *minor,
                                 int *micro)
{
    for (const char *p = text; p && *p; p++) {
        if (!isdigit ((unsigned char)*p) || (p > text && isdigit ((unsigned char)p[-1])))
            continue;
        char *end;
        long a = strtol (p, &end, 10);
        if (*end != '.' || !isdigit ((unsigned char)end[1]))
            continue;
        long b = strtol (end + 1, &end, 10), c = -1;
        if (*end == '.' && isdigit ((unsigned char)end[1]))
            c = strtol (end + 1, &end, 10);
        if (a > 9999 || b > 99 || c > 9999)
            return -1;
        *major = (int)a;
        *minor = (int)b;
        *micro = (int)c;
        return 0;
    }
    return -1;
}

bool launcher_output_is_pals (const char *text)
{
    static const char key[] = "mpiexec version ";
    for (const char *line = text; line && *line;) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp (p, key, sizeof (key) - 1) == 0
            && isdigit ((unsigned char)p[sizeof (key) - 1]))
            return true;
        line = strchr (line, '\n');
        if (line)
            line++;
    }
    return false;
}

/* Exactly MAJOR.MINOR or MAJOR.MINOR.MICRO (micro -1 when absent). */
static int parse_version_exact (const char *v, int *major, int *minor, int *micro)
{
    long part[3] = { -1, -1, -1 };
    int n = 0;
    for (;;) {
        if (!isdigit ((unsigned char)*v) || n == 3)
            return -1;
        char *end;
        part[n++] = strtol (v, &end, 10);
        if (part[n - 1] > 9999)
            return -1;
        if (*end == '\0')
            break;
        if (*end != '.')
            return -1;
        v = end + 1;
    }
    if (n < 2)
        return -1;
    *major = (int)part[0];
    *minor = (int)part[1];
    *micro = (int)part[2];
    return 0;
}

int launcher_caps_parse (const char *spec, enum berth_system system,
                         struct launcher_caps *caps, berth_error_t *err)
{
    static const char *sys_names[] = { "slurm", "pbs", "single_node", "login" };
    const char *sys = (unsigned)system < 4 ? sys_names[system] : "unknown";
    const char *fits = system == BERTH_SYSTEM_SLURM ? "slurm:MAJOR.MINOR[.MICRO] or none"
                     : system == BERTH_SYSTEM_PBS ? "pals or none"
                     : system == BERTH_SYSTEM_SINGLE_NODE ? "taskset or none"
                     : "none";
    struct launcher_caps c;

    if (!spec)
        spec = "";
    if (strncmp (spec, "slurm:", 6) == 0) {
        int a, b, m;
        if (parse_version_exact (spec + 6, &a, &b, &m) < 0)
            return errprintf_code (err, "launcher",
                                   "launcher version \"%s\": expected slurm:MAJOR.MINOR"
                                   "[.MICRO], e.g. slurm:22.05 or slurm:20.11.2", spec);
        if (system != BERTH_SYSTEM_SLURM && system != BERTH_SYSTEM_LOGIN)
            goto misfit;
        launcher_caps_from_slurm (a, b, m, &c);
    }
    else if (strcmp (spec, "pals") == 0) {
        if (system != BERTH_SYSTEM_PBS && system != BERTH_SYSTEM_LOGIN)
            goto misfit;
        caps_none (&c, "pals");
        c.pals = true;
        c.placement = PLACEMENT_CPU_BINDING;
    }
    else if (strcmp (spec, "taskset") == 0) {
        if (system != BERTH_SYSTEM_SINGLE_NODE && system != BERTH_SYSTEM_LOGIN)
            goto misfit;
        caps_none (&c, "taskset");
        c.taskset = true;
        c.placement = PLACEMENT_CPU_BINDING;
    }
    else if (strcmp (spec, "none") == 0)
        caps_none (&c, system == BERTH_SYSTEM_SLURM ? "no srun" : "none");
    else
        return errprintf_code (err, "launcher",
                               "launcher version \"%s\" is not known; for a %s machine "
                               "give %s", spec, sys, fits);
    if (system == BERTH_SYSTEM_LOGIN) {
        /* a login node launches nothing in parallel, whatever is installed */
        c.placement = PLACEMENT_NONE;
        c.memcap = MEMCAP_NONE;
    }
    *caps = c;
    return 0;
misfit:
    return errprintf_code (err, "launcher",
                           "launcher version \"%s\" does not fit a %s machine; give %s",
                           spec, sys, fits);
}

/* ---- Running a probe: a small stand-in for the general run_command
 * module, to be replaced by it. No shell; stdout and stderr captured
 * together; the whole process group killed after the timeout. */

static long now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Run argv (looked up on PATH); collect up to size-1 bytes of output in out.
 * Returns 0 with *status as from waitpid, or -1 when it could not run or
 * ran past timeout_ms (then it is killed). */
static int probe_run_capture (char *const argv[], char *out, size_t size,
                              int timeout_ms, int *status)
{
    int fds[2];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    pid_t pid;
    size_t len = 0;
    int rc = -1;

    out[0] = '\0';
    if (pipe2 (fds, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2 (&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2 (&fa, fds[1], 2);
    posix_spawnattr_init (&attr);
    /* its own process group, so that a hung probe's children die with it */
    posix_spawnattr_setpgroup (&attr, 0);
    posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP);
    int e = posix_spawnp (&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy (&fa);
    posix_spawnattr_destroy (&attr);
    close (fds[1]);
    if (e != 0) {
        close (fds[0]);
        return -1;
    }
    long deadline = now_ms () + timeout_ms;
    bool eof = false, timed_out = false;
    while (!eof) {
        long left = deadline - now_ms ();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
        int k = poll (&pfd, 1, (int)left);
        if (k < 0 && errno != EINTR)
            break;
        if (k <= 0)
            continue;
        char tmp[512];
        ssize_t r = read (fds[0], tmp, sizeof (tmp));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            eof = true;
            break;
        }
        size_t keep = (size_t)r < size - 1 - len ? (size_t)r : size - 1 - len;
        memcpy (out + len, tmp, keep);
        len += keep;
        out[len] = '\0';
    }
    close (fds[0]);
    /* output closed (or gave up): wait for the exit, still within the deadline */
    for (;;) {
        pid_t w = waitpid (pid, status, WNOHANG);
        if (w == pid) {
            rc = timed_out ? -1 : 0;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
        if (timed_out || now_ms () >= deadline) {
            kill (-pid, SIGKILL);
            while (waitpid (pid, status, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        nanosleep (&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
    }
    return rc;
}

static bool on_path (const char *prog)
{
    const char *path = getenv ("PATH");
    if (!path || !*path)
        return false;
    char *copy = strdup (path), *save = NULL;
    bool found = false;
    for (char *dir = copy ? strtok_r (copy, ":", &save) : NULL; dir && !found;
         dir = strtok_r (NULL, ":", &save)) {
        char full[4096];
        if (snprintf (full, sizeof (full), "%s/%s", dir, prog) < (int)sizeof (full))
            found = access (full, X_OK) == 0;
    }
    free (copy);
    return found;
}

static void detect_slurm (struct launcher_caps *caps)
{
    char out[1024];
    char *argv[] = { "srun", "--version", NULL };
    int status, a, b, c;
    if (probe_run_capture (argv, out, sizeof (out), PROBE_TIMEOUT_MS, &status) < 0
        || !WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        caps_none (caps, "no usable srun");
        return;
    }
    if (launcher_parse_srun_version (out, &a, &b, &c) < 0) {
        caps_none (caps, "srun version unparsable");
        return;
    }
    launcher_caps_from_slurm (a, b, c, caps);
}

static void detect_pals (const char *exe, struct launcher_caps *caps)
{
    char out[2048], word[256];
    size_t n = exe ? strcspn (exe, " ") : 0;
    int status;
    caps_none (caps, "not pals");
    if (n == 0 || n >= sizeof (word))
        return;
    memcpy (word, exe, n);
    word[n] = '\0';
    char *argv[] = { word, "--version", NULL };
    if (probe_run_capture (argv, out, sizeof (out), PROBE_TIMEOUT_MS, &status) == 0
        && launcher_output_is_pals (out)) {
        caps_none (caps, "pals");
        caps->pals = true;
        caps->placement = PLACEMENT_CPU_BINDING;
    }
}

/* One detection per process and launcher; not thread-safe (callers detect
 * once at start-up). */
static struct {
    bool valid;
    enum berth_system system;
    char exe[256];
    struct launcher_caps caps;
} cache;

void launcher_detect_forget (void)
{
    cache.valid = false;
}

void launcher_detect (const struct machine *m, struct launcher_caps *caps)
{
    enum berth_system sys = m->par.system;
    const char *exe = m->par.parallel_executable ? m->par.parallel_executable : "";

    if (cache.valid && cache.system == sys && strcmp (cache.exe, exe) == 0) {
        *caps = cache.caps;
        return;
    }
    switch (sys) {
    case BERTH_SYSTEM_SLURM:
        detect_slurm (caps);
        break;
    case BERTH_SYSTEM_PBS:
        detect_pals (exe, caps);
        break;
    case BERTH_SYSTEM_SINGLE_NODE:
        if (on_path ("taskset")) {
            caps_none (caps, "taskset");
            caps->taskset = true;
            caps->placement = PLACEMENT_CPU_BINDING;
        }
        else
            caps_none (caps, "no taskset");
        break;
    default:
        caps_none (caps, "login node");
        break;
    }
    cache.valid = true;
    cache.system = sys;
    snprintf (cache.exe, sizeof (cache.exe), "%s", exe);
    cache.caps = *caps;
}
