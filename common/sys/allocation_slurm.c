/* SPDX-License-Identifier: MIT */
/* A Slurm job's allocation: is it live (local proof first, then at most
 * two squeue queries), and its nodes, cores per node and count. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocation_private.h"
#include "hostlist.h"
#include "text.h"

/* ---- Slurm liveness ----------------------------------------------------- */

/* Does <proc>/self/cgroup put this process under a path component
 * job_<id>? */
static bool in_job_cgroup (const struct alloc_ctx *c, const char *job)
{
    char path[4096], line[4096], want[128];
    snprintf (path, sizeof (path), "%s/self/cgroup",
              c->env->proc_root ? c->env->proc_root : "/proc");
    snprintf (want, sizeof (want), "job_%s", job);
    FILE *fp = fopen (path, "r");
    bool found = false;
    if (!fp)
        return false;
    while (!found && fgets (line, sizeof (line), fp)) {
        line[strcspn (line, "\n")] = '\0';
        char *p = strchr (line, ':');
        p = p ? strchr (p + 1, ':') : NULL;
        for (char *tok = p ? strtok (p + 1, "/") : NULL; tok && !found;
             tok = strtok (NULL, "/"))
            found = !strcmp (tok, want);
    }
    fclose (fp);
    return found;
}

static const char *user_name (const struct alloc_ctx *c, char *buf, size_t size)
{
    /* The account database (getpwuid) is the caller's to read, and only
     * now that a query needs it: berthd passes its lookup in; the
     * statically linked CLI never queries. */
    if (c->env->user)
        return c->env->user;
    const char *u = c->env->user_lookup ? c->env->user_lookup () : NULL;
    if (u)
        return u;
    u = alloc_getvar (c, "USER");
    if (u)
        return u;
    snprintf (buf, size, "%u", (unsigned) getuid ());
    return buf;
}

/* The job is not live: warn and become login, or (refuse_stale) fail. */
static int not_live (struct alloc_ctx *c, const char *msg, berth_error_t *err)
{
    if (c->env->refuse_stale)
        return errprintf_code (err, "allocation_not_live", "%s", msg);
    alloc_warn (c, "%s; working as a login node (no MPI)", msg);
    return alloc_become_login (c, err);
}

/* Steps 2 and 3: one squeue for the job's state; if that fails, one more to
 * tell a forgotten job from a scheduler that cannot be reached. 1: live. */
static int query_liveness (struct alloc_ctx *c, const char *job, berth_error_t *err)
{
    const char *state_argv[] = { "squeue", "--noheader", "-t", "all", "-j",
                                 job, "-o", "%T", NULL };
    char *out, state[128], msg[2048], ubuf[32];
    berth_error_t qerr, uerr;
    if (alloc_query (c, state_argv, &out, &qerr) == 0) {
        text_first_line (out, state, sizeof (state));
        free (out);
        if (!strcmp (state, "RUNNING") || !strcmp (state, "CONFIGURING")
            || !strcmp (state, "RESIZING"))
            return 1;
        snprintf (msg, sizeof (msg), "Slurm job %s is %s%s, not running: "
                  "SLURM_JOB_ID in this shell is left over from an allocation "
                  "that has ended; start a new allocation (salloc or sbatch) "
                  "or unset SLURM_JOB_ID", job, *state ? state : "gone",
                  *state ? " (squeue)" : " (squeue lists nothing)");
        return not_live (c, msg, err) < 0 ? -1 : 0;
    }
    const char *user_argv[] = { "squeue", "--noheader", "-u",
                                user_name (c, ubuf, sizeof (ubuf)), "-o", "%i",
                                NULL };
    if (alloc_query (c, user_argv, &out, &uerr) < 0)
        return errprintf_code (err, "scheduler_unreachable",
                               "cannot tell whether Slurm job %s is still "
                               "running: the scheduler cannot be reached; "
                               "check that Slurm answers (squeue), or unset "
                               "SLURM_JOB_ID to work as on a login node. %s; "
                               "then %s", job, qerr.text, uerr.text);
    free (out);
    snprintf (msg, sizeof (msg), "Slurm job %s is not known to the scheduler "
              "(%s), so its allocation has ended: SLURM_JOB_ID in this shell "
              "is left over; start a new allocation (salloc or sbatch) or "
              "unset SLURM_JOB_ID", job, qerr.text);
    return not_live (c, msg, err) < 0 ? -1 : 0;
}

/* ---- Slurm resources ---------------------------------------------------- */

/* The node list from the environment; *names NULL when none is usable. */
static void slurm_node_names (struct alloc_ctx *c, char ***names, int *n)
{
    static const char *vars[] = { "SLURM_JOB_NODELIST", "SLURM_NODELIST" };
    *names = NULL;
    *n = 0;
    for (int i = 0; i < 2; i++) {
        const char *text = alloc_getvar (c, vars[i]);
        berth_error_t e;
        if (!text)
            continue;
        if (hostlist_expand (text, names, n, &e) == 0)
            return;
        alloc_warn (c, "%s='%s' is not a host list (%s); ignoring it", vars[i], text,
              e.text);
    }
}

/* "64(x2),32" -> one figure per node; -1 when malformed. */
static int parse_cpus_per_node (const char *text, int **vals)
{
    int *v = NULL, n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long cpus = strtol (p, &end, 10), times = 1;
        if (end == p || cpus < 1 || cpus > (1 << 20))
            goto bad;
        p = end;
        if (!strncmp (p, "(x", 2)) {
            times = strtol (p + 2, &end, 10);
            if (end == p + 2 || *end != ')' || times < 1
                || times > MAX_NODES - n)
                goto bad;
            p = end + 1;
        }
        int *nv = realloc (v, (n + times) * sizeof (int));
        if (!nv)
            goto bad;
        v = nv;
        while (times--)
            v[n++] = (int) cpus;
        if (*p == ',' && p[1])
            p++;
        else if (*p)
            goto bad;
    }
    *vals = v;
    return n;
bad:
    free (v);
    return -1;
}

/* Believe SLURM_JOB_CPUS_PER_NODE where it says less than the config (a
 * partial-node allocation), or where the config says nothing. */
static void slurm_cores (struct alloc_ctx *c)
{
    struct allocation *a = c->a;
    int cfg = c->par->cores_per_node, *vals, fewer = 0;
    for (int i = 0; i < a->nnodes; i++)
        a->nodes[i].ncores = cfg;
    const char *text = alloc_getvar (c, "SLURM_JOB_CPUS_PER_NODE");
    if (!text)
        return;
    int n = parse_cpus_per_node (text, &vals);
    if (n < 0) {
        alloc_warn (c, "SLURM_JOB_CPUS_PER_NODE='%s' is not a list such as "
              "'64(x2),32'; ignoring it", text);
        return;
    }
    if (n != a->nnodes) {
        alloc_warn (c, "SLURM_JOB_CPUS_PER_NODE='%s' describes %d nodes, the "
              "allocation has %d; ignoring it", text, n, a->nnodes);
        free (vals);
        return;
    }
    for (int i = 0; i < n; i++)
        if (cfg <= 0 || vals[i] < cfg) {
            fewer += cfg > 0;
            a->nodes[i].ncores = vals[i];
        }
    free (vals);
    if (fewer)
        alloc_warn (c, "SLURM_JOB_CPUS_PER_NODE=%s gives fewer cores than "
              "cores_per_node = %d of machine %s on %d of %d nodes (a "
              "partial-node allocation); using the environment's figures",
              text, cfg, c->machine, fewer, n);
}

/* Only when the environment tells nothing: one `squeue -o %D`. */
static int squeue_node_count (struct alloc_ctx *c, const char *job, int *count,
                              berth_error_t *err)
{
    const char *argv[] = { "squeue", "--noheader", "-j", job, "-o", "%D",
                           NULL };
    char *out, line[64];
    if (alloc_query (c, argv, &out, err) < 0)
        return errprefix (err, "cannot tell how many nodes Slurm job %s has "
                          "(no SLURM_JOB_NUM_NODES, SLURM_NNODES or node list "
                          "in the environment): ", job);
    text_first_line (out, line, sizeof (line));
    free (out);
    if (alloc_parse_count (line, count) < 0)
        return errprintf (err, "cannot tell how many nodes Slurm job %s has: "
                          "`squeue -j %s -o %%D` printed '%s', not a count",
                          job, job, line);
    return 0;
}

/* Returns the local node index (-1 none) through *local. */
int alloc_discover_slurm (struct alloc_ctx *c, const char *job, int *local,
                           berth_error_t *err)
{
    struct allocation *a = c->a;
    char **names, proof[160];
    int nnames, count = 0;
    slurm_node_names (c, &names, &nnames);

    /* Step 1: local proof, no query. */
    const char *sd = alloc_getvar (c, "SLURMD_NODENAME");
    proof[0] = '\0';
    if (sd && !strcmp (sd, c->host))
        snprintf (proof, sizeof (proof), "local proof: SLURMD_NODENAME");
    else if (alloc_find_host (names, nnames, c->host) >= 0)
        snprintf (proof, sizeof (proof), "local proof: host in node list");
    else if (in_job_cgroup (c, job))
        snprintf (proof, sizeof (proof), "local proof: cgroup job_%s", job);
    else {
        int live = query_liveness (c, job, err);
        if (live <= 0) {
            hostlist_free (names, nnames);
            *local = live < 0 ? -1 : 0;
            return live;
        }
        snprintf (proof, sizeof (proof), "one query");
    }
    if (!(a->job_id = strdup (job)) || !(a->liveness = strdup (proof))) {
        hostlist_free (names, nnames);
        return errprintf (err, "out of memory");
    }

    static const char *count_vars[] = { "SLURM_JOB_NUM_NODES", "SLURM_NNODES" };
    for (int i = 0; i < 2 && !count; i++) {
        const char *text = alloc_getvar (c, count_vars[i]);
        if (text && alloc_parse_count (text, &count) < 0)
            alloc_warn (c, "%s='%s' is not a node count; ignoring it", count_vars[i],
                  text);
    }
    if (names && count && count != nnames)
        alloc_warn (c, "SLURM_JOB_NUM_NODES or SLURM_NNODES says %d nodes but the "
              "node list names %d; using the names", count, nnames);
    if (!names) {
        if (!count && squeue_node_count (c, job, &count, err) < 0)
            return -1;
        if (!(names = alloc_numbered_names ("slurm-node-", count)))
            return errprintf (err, "out of memory");
        nnames = count;
        alloc_warn (c, "no usable SLURM_JOB_NODELIST or SLURM_NODELIST: the %d "
              "nodes are called slurm-node-0..%d here", count, count - 1);
    }
    /* The node this process runs on: by name, else (proof without a name
     * match, e.g. several slurmd on one host) the first, where the batch
     * script runs. */
    int idx = sd ? alloc_find_host (names, nnames, sd) : -1;
    if (idx < 0)
        idx = alloc_find_host (names, nnames, c->host);
    if (idx < 0 && strncmp (proof, "local", 5) == 0)
        idx = 0;
    *local = idx;
    if (alloc_set_nodes (c, names, nnames, err) < 0)
        return -1;
    slurm_cores (c);
    return 1;
}
