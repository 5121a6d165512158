#include <stdio.h>
#include <string.h>

#include "cli_daemon.h"
#include "commands.h"

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
