/* SPDX-License-Identifier: MIT */
/* The request options of berth acquire and berth run: each option's value
 * checked here (so a typo is a usage error naming the option) and set on
 * the libberth request under its protocol name. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli_common.h"
#include "cli_daemon.h"
#include "commands.h"
#include "request_options.h"

void request_options_help (FILE *f)
{
    fprintf (f,
"What the step asks for:\n"
"  -n, --ntasks N           MPI ranks\n"
"  -c, --cpus-per-task N    cores per rank\n"
"  --cores N                cores of a non-MPI step\n"
"  --gpus N                 GPUs, the total for the step (default 0)\n"
"  --memory MB              declared memory per node, the launch's cap\n"
"                           (8000, 8000M, 8G, 1T)\n"
"  --min-tasks N, --min-cpus-per-task N, --min-cores N, --min-gpus N,\n"
"  --min-memory MB          how far berthd may cut the step to fit the\n"
"                           allocation (once, against the empty allocation)\n"
"  --may-span-nodes         cores and GPUs may come from several nodes\n"
"  --no-span                one node only (default: spans when ntasks > 1)\n"
"  --label NAME             the step's name in status and events\n"
"  --priority N             higher is served first (default 0)\n"
"  --timeout SECONDS        give up waiting after this long (default: wait)\n"
"  --duration SECONDS       how long the step runs; berthd refuses (or warns\n"
"                           about) a step that would outlast the job, and may\n"
"                           start it early on nodes held for a wide step\n"
"  --gpus-per-task N        deprecated: use --gpus with the total\n");
    cli_socket_help (f, 27);
}

int request_parse_memory (const char *text, long long *mb)
{
    char *end;
    errno = 0;
    if (!text || !isdigit ((unsigned char) text[0]))
        return -1;
    long long v = strtoll (text, &end, 10);
    long long unit = 1;
    if (errno)
        return -1;
    if (!strcasecmp (end, "g") || !strcasecmp (end, "gb"))
        unit = 1024;
    else if (!strcasecmp (end, "t") || !strcasecmp (end, "tb"))
        unit = 1024 * 1024;
    else if (*end && strcasecmp (end, "m") && strcasecmp (end, "mb"))
        return -1;
    if (v > (1LL << 40) / unit)
        return -1;
    *mb = v * unit;
    return 0;
}

/* Set an integer field, printing the library's complaint under the option's
 * name. */
static int set_int (berth_request_t *r, const char *field, long long v,
                    const char *option, const char *arg, const char *cmd)
{
    berth_client_error_t err;
    if (berth_request_set_int (r, field, v, &err) < 0)
        return cli_fail (2, cmd, "%s %s: %s", option, arg, err.message), -1;
    return 1;
}

static int count (berth_request_t *r, const char *field, const char *option,
                  const char *arg, int min, const char *cmd)
{
    long long v;
    if (cli_llong (arg, &v) < 0 || v < min)
        return cli_fail (2, cmd, "%s wants %s, got '%s'", option,
                         min ? "a positive integer" : "an integer >= 0", arg), -1;
    return set_int (r, field, v, option, arg, cmd);
}

static int memory (berth_request_t *r, const char *field, const char *option,
                   const char *arg, const char *cmd)
{
    long long mb;
    if (request_parse_memory (arg, &mb) < 0 || mb < 1)
        return cli_fail (2, cmd, "%s wants a size in MB (8000, 8000M, 8G), got '%s'",
                         option, arg), -1;
    return set_int (r, field, mb, option, arg, cmd);
}

/* --may-span-nodes or --no-span as given for the request being parsed (-1:
 * neither): a berth command parses one request. */
static const berth_request_t *span_request;
static int span_given = -1;

int request_option_span (const berth_request_t *r)
{
    return r == span_request ? span_given : -1;
}

int request_option (berth_request_t *r, const char **socket, int c, const char *arg,
                    const char *cmd)
{
    berth_client_error_t err;
    long long v;
    char *end;
    double s;

    switch (c) {
    case 'n':
        return count (r, "ntasks", "--ntasks", arg, 1, cmd);
    case 'c':
        return count (r, "cpus_per_task", "--cpus-per-task", arg, 1, cmd);
    case REQ_OPT_CORES:
        return count (r, "cores", "--cores", arg, 1, cmd);
    case REQ_OPT_GPUS:
        return count (r, "gpus", "--gpus", arg, 0, cmd);
    case REQ_OPT_MEMORY:
        return memory (r, "memory", "--memory", arg, cmd);
    case REQ_OPT_MIN_TASKS:
        return count (r, "min_tasks", "--min-tasks", arg, 1, cmd);
    case REQ_OPT_MIN_CPT:
        return count (r, "min_cpus_per_task", "--min-cpus-per-task", arg, 1, cmd);
    case REQ_OPT_MIN_CORES:
        return count (r, "min_cores", "--min-cores", arg, 1, cmd);
    case REQ_OPT_MIN_GPUS:
        return count (r, "min_gpus", "--min-gpus", arg, 0, cmd);
    case REQ_OPT_MIN_MEMORY:
        return memory (r, "min_memory", "--min-memory", arg, cmd);
    case REQ_OPT_SPAN:
    case REQ_OPT_NO_SPAN:
        if (request_option_span (r) == (c != REQ_OPT_SPAN))
            return cli_fail (2, cmd, "--may-span-nodes and --no-span contradict "
                             "each other; give one"), -1;
        span_request = r;
        span_given = c == REQ_OPT_SPAN;
        berth_request_set_bool (r, "may_span_nodes", c == REQ_OPT_SPAN, NULL);
        return 1;
    case REQ_OPT_LABEL:
        if (berth_request_set_string (r, "label", arg, &err) < 0)
            return cli_fail (2, cmd, "--label: %s", err.message), -1;
        return 1;
    case REQ_OPT_PRIORITY:
        if (cli_llong (arg, &v) < 0)
            return cli_fail (2, cmd, "--priority wants an integer, got '%s'", arg), -1;
        return set_int (r, "priority", v, "--priority", arg, cmd);
    case REQ_OPT_TIMEOUT:
    case REQ_OPT_DURATION: {
        const char *name = c == REQ_OPT_TIMEOUT ? "timeout" : "duration";
        errno = 0;
        s = strtod (arg, &end);
        if (errno || end == arg || *end || !isfinite (s) || s < 0)
            return cli_fail (2, cmd, "--%s wants a number of seconds >= 0, got '%s'",
                             name, arg), -1;
        if (berth_request_set_seconds (r, name, s, &err) < 0)
            return cli_fail (2, cmd, "--%s %s: %s", name, arg, err.message), -1;
        return 1;
    }
    case REQ_OPT_GPT:
        fprintf (stderr, "berth %s: --gpus-per-task is deprecated; give the step's "
                 "total with --gpus (berthd converts it to ntasks x %s)\n", cmd, arg);
        return count (r, "gpus_per_task", "--gpus-per-task", arg, 0, cmd);
    case REQ_OPT_SOCKET:
        *socket = arg;
        return 1;
    }
    return 0;
}
