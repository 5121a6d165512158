#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_daemon.h"
#include "commands.h"
#include "sockdir.h"

berth_client_t *cli_connect (const char *cmd, const char *socket)
{
    berth_client_error_t err;
    berth_client_t *c = berth_connect (socket, &err);
    if (!c)
        cli_daemon_fail (cmd, &err);
    return c;
}

int cli_daemon_fail (const char *cmd, const berth_client_error_t *err)
{
    /* the code is for programs; people need it only when it adds something */
    if (!strcmp (err->code, BERTH_ERR_CONNECT) || !strcmp (err->code, BERTH_ERR_USAGE))
        return cli_fail (1, cmd, "%s", err->message);
    return cli_fail (1, cmd, "%s: %s", err->code, err->message);
}

void cli_shell_word (FILE *f, const char *text)
{
    if (*text && strspn (text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                               "0123456789,._-+:/=@%") == strlen (text)) {
        fputs (text, f);
        return;
    }
    fputc ('\'', f);
    for (const char *p = text; *p; p++)
        if (*p == '\'')
            fputs ("'\\''", f);
        else
            fputc (*p, f);
    fputc ('\'', f);
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
    const char *job = getenv ("SLURM_JOB_ID");
    if (!job || !*job)
        job = getenv ("PBS_JOBID");
    /* the path libberth connects to when neither is given, as here */
    if (sockdir_default_path (getenv ("XDG_RUNTIME_DIR"), getuid (), job, here,
                              sizeof (here), NULL) < 0)
        snprintf (here, sizeof (here), "(too long for a socket)");
    const char *env = getenv ("BERTH_SOCKET");
    int w = column - 3;
    fprintf (f, "  %-*s berthd's socket (default: $BERTH_SOCKET, else\n"
             "  %-*s $XDG_RUNTIME_DIR/berth/JOB.sock, or without it\n"
             "  %-*s /tmp/berth-UID/JOB.sock; JOB: $SLURM_JOB_ID,\n"
             "  %-*s $PBS_JOBID or local; here: %s)\n", w, "--socket PATH",
             w, "", w, "", w, "", env && *env ? env : here);
}
