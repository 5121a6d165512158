/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "machine_select.h"
#include "text.h"

bool machine_args_option (struct machine_args *a, int c, const char *arg)
{
    switch (c) {
    case CLI_OPT_MACHINE:
        a->name = arg;
        return true;
    case CLI_OPT_CONFIG:
        if (a->nconfigs < CLI_MAX_CONFIGS)
            a->configs[a->nconfigs++] = arg;
        else
            a->too_many_configs = true;
        return true;
    case CLI_OPT_COMPILER:
        a->compiler = arg;
        return true;
    case CLI_OPT_MACHINE_PATH:
        if (a->nmachine_path < CLI_MAX_CONFIGS)
            a->machine_path[a->nmachine_path++] = arg;
        else
            a->too_many_paths = true;
        return true;
    }
    return false;
}

int machine_args_load (const struct machine_args *a, struct machine **m,
                       berth_error_t *err)
{
    if (a->too_many_configs)
        return errprintf (err, "too many --config files (at most %d)", CLI_MAX_CONFIGS);
    if (a->too_many_paths)
        return errprintf (err, "too many --machine-path directories (at most "
                          "%d)", CLI_MAX_CONFIGS);
    struct machine_options opts = {
        .name = a->name,
        .configs = a->nconfigs ? a->configs : NULL,
        .compiler = a->compiler,
        .machine_path = a->nmachine_path ? a->machine_path : NULL,
    };
    if (machine_load (&opts, m, err) < 0)
        return -1;
    if ((*m)->compiler_warning)
        fprintf (stderr, "berth: warning: %s\n", (*m)->compiler_warning);
    return 0;
}

static int env_int (const char *name)
{
    const char *v = getenv (name);
    int n;
    return v && cli_int (v, 1, 1 << 24, &n) == 0 ? n : 0;
}

static int nodefile_hosts (const char *path)
{
    FILE *f = path ? fopen (path, "r") : NULL;
    if (!f)
        return 0;
    char line[1024], seen[256][128];
    int n = 0;
    while (fgets (line, sizeof (line), f) && n < 256) {
        line[strcspn (line, " \t\r\n.")] = '\0';    /* short names */
        if (!line[0])
            continue;
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = !strcmp (seen[i], line);
        if (!dup)
            snprintf (seen[n++], sizeof (seen[0]), "%.127s", line);
    }
    fclose (f);
    return n;
}

int cli_allocation_nodes (struct machine_parallel *par, int nodes_option)
{
    if (nodes_option > 0)
        return nodes_option;
    int n = 0;
    switch (par->system) {
    case BERTH_SYSTEM_SLURM:
        if (!getenv ("SLURM_JOB_ID")) {
            par->system = BERTH_SYSTEM_LOGIN;
            return 1;
        }
        n = env_int ("SLURM_JOB_NUM_NODES");
        if (!n)
            n = env_int ("SLURM_NNODES");
        break;
    case BERTH_SYSTEM_PBS:
        if (!getenv ("PBS_JOBID")) {
            par->system = BERTH_SYSTEM_LOGIN;
            return 1;
        }
        n = nodefile_hosts (getenv ("PBS_NODEFILE"));
        break;
    default:
        break;
    }
    return n > 0 ? n : 1;
}

int cli_int (const char *text, int min, int max, int *out)
{
    long long v;
    if (cli_llong (text, &v) < 0 || v < min || v > max)
        return -1;
    *out = (int) v;
    return 0;
}

int cli_llong (const char *text, long long *out)
{
    char *end;
    errno = 0;
    if (!text || !*text || isspace ((unsigned char) *text))
        return -1;
    long long v = strtoll (text, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

void cli_strv_free (char **items, int count)
{
    for (int i = 0; items && i < count; i++)
        free (items[i]);
    free (items);
}

int cli_split (const char *text, char sep, char ***items, int *count,
               berth_error_t *err)
{
    char **v = NULL;
    int n = 0;
    const char *p = text;
    for (;;) {
        const char *e = strchr (p, sep);
        size_t len = e ? (size_t) (e - p) : strlen (p);
        const char *item_start = p;
        text_trim_span (&item_start, &len);
        if (len == 0) {
            cli_strv_free (v, n);
            return errprintf (err, "'%s' has an empty item (separator '%c')", text, sep);
        }
        char **nv = realloc (v, (size_t) (n + 1) * sizeof (*v));
        char *item = strndup (item_start, len);
        if (!nv || !item) {
            free (item);
            cli_strv_free (nv ? nv : v, n);
            return errprintf (err, "out of memory");
        }
        v = nv;
        v[n++] = item;
        if (!e)
            break;
        p = e + 1;
    }
    *items = v;
    *count = n;
    return 0;
}

void cli_print_json (json_t *o)
{
    if (!o)
        return;
    json_dumpf (o, stdout, JSON_INDENT (2) | JSON_PRESERVE_ORDER);
    fputc ('\n', stdout);
    fflush (stdout);
}
