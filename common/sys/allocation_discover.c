/* SPDX-License-Identifier: MIT */
/* Allocation discovery: the system, then the
 * scheduler's part (allocation_slurm.c, allocation_pbs.c), then this node's
 * evidence (allocation_evidence.c); and the node table they share. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocation_private.h"
#include "hostlist.h"
#include "run_command.h"

extern char **environ;

#define DEFAULT_QUERY_TIMEOUT_S 20.0

/* A variable of the environment; empty counts as unset. */
const char *alloc_getvar (const struct alloc_ctx *c, const char *name)
{
    const char *v = run_command_env (c->envp, name);
    return v && *v ? v : NULL;
}

void alloc_warn (struct alloc_ctx *c, const char *fmt, ...)
{
    struct allocation *a = c->a;
    char *s;
    va_list ap;
    va_start (ap, fmt);
    int k = vasprintf (&s, fmt, ap);
    va_end (ap);
    char **v = k < 0 ? NULL
                     : realloc (a->warnings, (a->nwarnings + 1) * sizeof (char *));
    if (!v) {
        if (k >= 0)
            free (s);
        c->oom = true;
        return;
    }
    a->warnings = v;
    a->warnings[a->nwarnings++] = s;
}

/* Host names compared in their short forms (up to the first dot). */
static bool same_host (const char *x, const char *y)
{
    size_t nx = strcspn (x, "."), ny = strcspn (y, ".");
    return nx == ny && !strncmp (x, y, nx);
}

int alloc_find_host (char **names, int n, const char *host)
{
    for (int i = 0; host && i < n; i++)
        if (same_host (names[i], host))
            return i;
    return -1;
}

/* Names "<prefix>0".."<prefix>n-1" where the scheduler says how many nodes
 * but not which. */
char **alloc_numbered_names (const char *prefix, int n)
{
    char **v = calloc (n, sizeof (char *));
    for (int i = 0; v && i < n; i++)
        if (asprintf (&v[i], "%s%d", prefix, i) < 0) {
            v[i] = NULL;
            hostlist_free (v, i);
            return NULL;
        }
    return v;
}

/* Make the node table from names (taken over); counts and figures are
 * filled in later. */
int alloc_set_nodes (struct alloc_ctx *c, char **names, int n, berth_error_t *err)
{
    struct allocation *a = c->a;
    a->nodes = calloc (n, sizeof (*a->nodes));
    if (!a->nodes) {
        hostlist_free (names, n);
        return errprintf (err, "out of memory listing %d nodes", n);
    }
    for (int i = 0; i < n; i++)
        a->nodes[i] = (struct allocation_node){
            .name = names[i],
            .gpus = c->par->gpus_per_node,
            .memory_configured_mb = c->par->memory_per_node >= 0
                                        ? c->par->memory_per_node
                                        : -1,
            .memory_credited_mb = -1,
        };
    free (names);
    a->nnodes = n;
    return 0;
}

int alloc_parse_count (const char *text, int *n)
{
    char *end;
    errno = 0;
    long v = strtol (text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > MAX_NODES)
        return -1;
    *n = (int) v;
    return 0;
}

int alloc_query (struct alloc_ctx *c, const char *const *argv, char **out,
                  berth_error_t *err)
{
    struct run_output o;
    if (run_command (argv, c->envp, c->timeout, &o, NULL, err) < 0)
        return -1;
    free (o.err);
    *out = o.out;
    return 0;
}

/* ---- login -------------------------------------------------------------- */

/* This host alone: login_cores cores (never more than it has), login_gpus,
 * no memory figure, no MPI. */
int alloc_become_login (struct alloc_ctx *c, berth_error_t *err)
{
    struct allocation *a = c->a;
    char **names = calloc (1, sizeof (char *));
    if (!names || !(names[0] = strdup (c->host))) {
        free (names);
        return errprintf (err, "out of memory");
    }
    free (a->job_id);
    free (a->liveness);
    a->job_id = NULL;
    a->system = BERTH_SYSTEM_LOGIN;
    a->mpi_allowed = false;
    a->local_node = 0;
    if (!(a->liveness = strdup ("none")) || alloc_set_nodes (c, names, 1, err) < 0)
        return errprintf (err, "out of memory");
    a->nodes[0].gpus = c->par->login_gpus;
    a->nodes[0].memory_configured_mb = -1;
    a->nodes[0].ncores = c->par->login_cores;
    return 0;
}

/* ---- the whole -------------------------------------------------------- */

static void short_hostname (const struct allocation_env *env, char *buf,
                            size_t size)
{
    if (env->hostname)
        snprintf (buf, size, "%s", env->hostname);
    else if (gethostname (buf, size) < 0)
        snprintf (buf, size, "localhost");
    buf[size - 1] = '\0';
    buf[strcspn (buf, ".")] = '\0';
}

int allocation_discover (const struct machine_parallel *par,
                         const char *machine_name,
                         const struct allocation_env *env,
                         struct allocation **out, berth_error_t *err)
{
    static const struct allocation_env real = { 0 };
    struct allocation *a = calloc (1, sizeof (*a));
    struct alloc_ctx c = {
        .par = par,
        .machine = machine_name ? machine_name : "(unnamed)",
        .env = env ? env : &real,
        .a = a,
    };
    int local = -1, rc = -1;
    if (!a)
        return errprintf (err, "out of memory");
    c.envp = c.env->envp ? c.env->envp : environ;
    c.timeout = c.env->query_timeout_s > 0 ? c.env->query_timeout_s
                                           : DEFAULT_QUERY_TIMEOUT_S;
    short_hostname (c.env, c.host, sizeof (c.host));
    if (machine_name && !(a->machine = strdup (machine_name)))
        goto fail_oom;
    a->system = par->system;
    a->mpi_allowed = true;
    switch (par->system) {
    case BERTH_SYSTEM_SLURM:
    case BERTH_SYSTEM_PBS: {
        bool slurm = par->system == BERTH_SYSTEM_SLURM;
        const char *job = alloc_getvar (&c, slurm ? "SLURM_JOB_ID" : "PBS_JOBID");
        if (!job)
            rc = alloc_become_login (&c, err);
        else if (slurm)
            rc = alloc_discover_slurm (&c, job, &local, err) < 0 ? -1 : 0;
        else
            rc = alloc_discover_pbs (&c, job, &local, err);
        if (rc == 0 && a->system == BERTH_SYSTEM_LOGIN)
            local = 0;
        break;
    }
    case BERTH_SYSTEM_SINGLE_NODE: {
        char **names = calloc (1, sizeof (char *));
        if (!names || !(names[0] = strdup (c.host))) {
            free (names);
            goto fail_oom;
        }
        if (!(a->liveness = strdup ("none")))
            goto fail_oom_names;
        rc = alloc_set_nodes (&c, names, 1, err);
        if (rc == 0)
            a->nodes[0].ncores = par->cores_per_node;
        local = 0;
        break;
    fail_oom_names:
        hostlist_free (names, 1);
        goto fail_oom;
    }
    case BERTH_SYSTEM_LOGIN:
        rc = alloc_become_login (&c, err);
        local = 0;
        break;
    default:
        errprintf (err, "machine %s: system %d is not slurm, pbs, single_node "
                   "or login", c.machine, (int) par->system);
        break;
    }
    if (rc < 0 || alloc_assign_cores (&c, local, err) < 0)
        goto fail;
    alloc_credit_memory (&c, local);
    a->local_node = local;
    a->mpi_allowed = a->system != BERTH_SYSTEM_LOGIN;
    if (c.oom)
        goto fail_oom;
    *out = a;
    return 0;
fail_oom:
    errprintf (err, "out of memory discovering the allocation");
fail:
    allocation_destroy (a);
    return -1;
}
