/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_daemon.h"
#include "commands.h"
#include "libberth_private.h"
#include "text.h"

berth_client_t *cli_connect (const char *cmd, const char *socket)
{
    berth_client_error_t err;
    berth_client_t *c = berth_connect (socket, &err);
    if (!c)
        cli_daemon_fail (cmd, &err);
    return c;
}

/* berthd's messages name the protocol's fields; a person at the command line
 * gives options. Longer names first, so that min_cpus_per_task is not read as
 * min_ + cpus_per_task. */
static const char *const words[][2] = {
    { "min_cpus_per_task", "--min-cpus-per-task" },
    { "min_gpus_per_task", "--gpus-per-task" },
    { "may_span_nodes", "--may-span-nodes" },
    { "cpus_per_task", "--cpus-per-task" },
    { "gpus_per_task", "--gpus-per-task" },
    { "min_memory", "--min-memory" },
    { "min_tasks", "--min-tasks" },
    { "min_cores", "--min-cores" },
    { "min_gpus", "--min-gpus" },
    { "owner_pid", "--owner-pid" },
    { "ntasks", "--ntasks" },
    { "\"wait\" is false", "--no-wait was given" },
    { "with \"detach\": true", "with berth acquire (a detached lease)" },
    { "drop local or", "drop --local or" },
    { "run it as a local step, or acquire without argv",
      "run it with --local, or take a lease with berth acquire" },
    { "a smaller duration", "a smaller --duration" },
};

static bool word_char (char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'
           || ch == '-';
}

void cli_option_words (const char *in, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < size;) {
        const char *to = NULL;
        size_t len = 0;
        if (p == in || !word_char (p[-1]))
            for (size_t i = 0; !to && i < sizeof (words) / sizeof (words[0]); i++) {
                len = strlen (words[i][0]);
                if (!strncmp (p, words[i][0], len) && !word_char (p[len]))
                    to = words[i][1];
            }
        if (to) {
            n += (size_t) snprintf (out + n, size - n, "%s", to);
            if (n >= size)
                n = size - 1;
            p += len;
        } else {
            out[n++] = *p++;
        }
    }
    out[n < size ? n : size - 1] = '\0';
}

int cli_daemon_fail (const char *cmd, const berth_client_error_t *err)
{
    char msg[2 * sizeof (err->message)];
    cli_option_words (err->message, msg, sizeof (msg));
    /* the code is for programs; people need it only when it adds something */
    if (!strcmp (err->code, BERTH_ERR_CONNECT) || !strcmp (err->code, BERTH_ERR_USAGE))
        return cli_fail (1, cmd, "%s", msg);
    return cli_fail (1, cmd, "%s: %s", err->code, msg);
}

void cli_shell_word (FILE *f, const char *text)
{
    struct text_buf b = { 0 };
    text_buf_shell_word (&b, text, false);
    fputs (b.bad ? "''" : b.s, f);
    free (b.s);
}

void cli_lease_warning (const char *cmd, const berth_lease_t *l)
{
    const char *w = berth_lease_warning (l);
    if (w)
        fprintf (stderr, "berth %s: warning: %s\n", cmd, w);
}

void cli_socket_help (FILE *f, int column)
{
    char here[256] = "";
    berth_client_error_t err;
    /* the path libberth connects to when neither is given */
    if (client_default_socket (here, sizeof (here), &err) < 0)
        snprintf (here, sizeof (here), "none: %.200s", err.message);
    const char *env = getenv ("BERTH_SOCKET");
    int w = column - 3;
    fprintf (f, "  %-*s berthd's socket (default: $BERTH_SOCKET, else\n"
             "  %-*s $XDG_RUNTIME_DIR/berth/JOB.sock, or without it\n"
             "  %-*s /tmp/berth-UID/JOB.sock; JOB: $SLURM_JOB_ID,\n"
             "  %-*s $PBS_JOBID or local; here: %s)\n", w, "--socket PATH",
             w, "", w, "", w, "", env && *env ? env : here);
}
