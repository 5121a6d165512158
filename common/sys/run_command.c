/* SPDX-License-Identifier: MIT */
/* The one place that starts external programs (scheduler queries). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "run_command.h"

extern char **environ;

#define OUTPUT_MAX (4 << 20) /* bytes kept per stream; the rest is drained */

struct buf {
    char *data;
    size_t len, cap;
};

const char *run_command_env (char *const *envp, const char *name)
{
    size_t n = strlen (name);
    for (; envp && *envp; envp++)
        if (!strncmp (*envp, name, n) && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

char *run_command_find (const char *prog, const char *path)
{
    if (strchr (prog, '/'))
        return strdup (prog);
    for (const char *p = path; p && *p;) {
        const char *colon = strchr (p, ':');
        size_t dlen = colon ? (size_t) (colon - p) : strlen (p);
        char *full;
        struct stat st;
        if (asprintf (&full, "%.*s/%s", (int) dlen, dlen ? p : ".", prog) < 0)
            return NULL;
        if (stat (full, &st) == 0 && S_ISREG (st.st_mode)
            && access (full, X_OK) == 0)
            return full;
        free (full);
        if (!colon)
            break;
        p = colon + 1;
    }
    return NULL;
}

/* "prog arg ..." for messages, truncated to fit. */
static void command_text (const char *const *argv, char *text, size_t size)
{
    size_t len = 0;
    text[0] = '\0';
    for (int i = 0; argv[i] && len < size; i++)
        len += snprintf (text + len, size - len, "%s%s", i ? " " : "", argv[i]);
}

static int buf_read (int fd, struct buf *b)
{
    char chunk[8192];
    ssize_t k = read (fd, chunk, sizeof (chunk));
    if (k <= 0)
        return k < 0 && (errno == EINTR || errno == EAGAIN) ? 1 : 0;
    size_t keep = b->len + k > OUTPUT_MAX ? OUTPUT_MAX - b->len : (size_t) k;
    if (b->len + keep + 1 > b->cap) {
        size_t cap = (b->len + keep + 1) * 2;
        char *d = realloc (b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy (b->data + b->len, chunk, keep);
    b->len += keep;
    b->data[b->len] = '\0';
    return 1;
}

/* Collect both streams until EOF on both or the deadline. Returns 1 when the
 * deadline passed, 0 at EOF, -1 when out of memory. */
static int collect (int outfd, int errfd, struct buf *out, struct buf *errb,
                    double deadline)
{
    struct pollfd fds[2] = { { outfd, POLLIN, 0 }, { errfd, POLLIN, 0 } };
    struct buf *bufs[2] = { out, errb };
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        double left = deadline - now_mono ();
        if (left <= 0)
            return 1;
        int k = poll (fds, 2, (int) (left * 1000) + 1);
        if (k < 0 && errno != EINTR)
            return -1;
        for (int i = 0; k > 0 && i < 2; i++) {
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            int r = buf_read (fds[i].fd, bufs[i]);
            if (r < 0)
                return -1;
            if (r == 0)
                fds[i].fd = -1;
        }
    }
    return 0;
}

static char *buf_take (struct buf *b)
{
    char *s = b->data ? b->data : strdup ("");
    b->data = NULL;
    return s;
}

/* stderr for a message: trailing white space cut, lines joined by "; ". */
static void stderr_text (const struct buf *b, char *text, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; b->data && i < b->len && n + 3 < size; i++) {
        char c = b->data[i];
        if (c == '\n') {
            size_t j = i;
            while (j < b->len && (b->data[j] == '\n' || b->data[j] == ' '))
                j++;
            if (j == b->len)
                break;
            text[n++] = ';';
            text[n++] = ' ';
            i = j - 1;
        } else
            text[n++] = c;
    }
    text[n] = '\0';
}

int run_command (const char *const *argv, char *const *envp, double timeout_s,
                 struct run_output *res, int *status, berth_error_t *err)
{
    char cmd[256], errtext[320];
    int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, rc = -1;
    struct buf out = { 0 }, errb = { 0 };
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, dfl;
    pid_t pid;

    if (!envp)
        envp = environ;
    command_text (argv, cmd, sizeof (cmd));
    const char *path = run_command_env (envp, "PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char *prog = run_command_find (argv[0], path);
    if (!prog)
        return errprintf_code (err, "command_not_found",
                               "`%s`: %s not found on PATH (%s)", cmd, argv[0],
                               path);
    if (pipe2 (outp, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0) {
        errprintf (err, "`%s`: cannot create pipes: %s", cmd, strerror (errno));
        goto close_pipes;
    }
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2 (&fa, outp[1], 1);
    posix_spawn_file_actions_adddup2 (&fa, errp[1], 2);
    posix_spawnattr_init (&attr);
    /* Own process group, so that a timeout also kills what it started;
     * default signal handling and an empty mask, whatever ours are. */
    sigemptyset (&none);
    sigemptyset (&dfl);
    sigaddset (&dfl, SIGPIPE);
    posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP
                                         | POSIX_SPAWN_SETSIGMASK
                                         | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup (&attr, 0);
    posix_spawnattr_setsigmask (&attr, &none);
    posix_spawnattr_setsigdefault (&attr, &dfl);
    int e = posix_spawn (&pid, prog, &fa, &attr, (char *const *) argv, envp);
    posix_spawn_file_actions_destroy (&fa);
    posix_spawnattr_destroy (&attr);
    close (outp[1]);
    close (errp[1]);
    outp[1] = errp[1] = -1;
    if (e != 0) {
        errprintf_code (err, e == ENOENT || e == EACCES ? "command_not_found"
                                                        : "error",
                        "`%s`: cannot start %s: %s", cmd, prog, strerror (e));
        goto close_pipes;
    }
    int late = collect (outp[0], errp[0], &out, &errb, now_mono () + timeout_s);
    if (late != 0) {
        kill (-pid, SIGKILL);
        kill (pid, SIGKILL);
    }
    int wst;
    while (waitpid (pid, &wst, 0) < 0 && errno == EINTR)
        ;
    int code = WIFEXITED (wst) ? WEXITSTATUS (wst) : 128 + WTERMSIG (wst);
    stderr_text (&errb, errtext, sizeof (errtext));
    if (late > 0)
        errprintf_code (err, "command_timeout",
                        "`%s` did not finish within %g s and was killed%s%s",
                        cmd, timeout_s, *errtext ? "; it said: " : "", errtext);
    else if (late < 0)
        errprintf (err, "`%s`: out of memory reading its output", cmd);
    else if (code != 0) {
        if (status)
            *status = code;
        if (WIFEXITED (wst))
            errprintf_code (err, "command_failed", "`%s` exited with status "
                            "%d%s%s", cmd, code, *errtext ? ": " : "", errtext);
        else
            errprintf_code (err, "command_failed", "`%s` was killed by signal "
                            "%d%s%s", cmd, WTERMSIG (wst),
                            *errtext ? ": " : "", errtext);
    } else {
        res->out = buf_take (&out);
        res->err = buf_take (&errb);
        if (!res->out || !res->err) {
            run_output_free (res);
            errprintf (err, "`%s`: out of memory reading its output", cmd);
        } else
            rc = 0;
        if (status)
            *status = 0;
    }
close_pipes:
    for (int i = 0; i < 2; i++) {
        if (outp[i] >= 0)
            close (outp[i]);
        if (errp[i] >= 0)
            close (errp[i]);
    }
    free (out.data);
    free (errb.data);
    free (prog);
    return rc;
}

void run_output_free (struct run_output *res)
{
    if (res) {
        free (res->out);
        free (res->err);
        res->out = res->err = NULL;
    }
}
