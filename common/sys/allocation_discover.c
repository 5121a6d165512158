/* Allocation discovery: system selection, Slurm liveness, nodes, cores,
 * GPUs and memory, as 40-allocation.md says. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocation_discover.h"
#include "hostlist.h"
#include "idset.h"
#include "memory.h"
#include "run_command.h"
#include "text.h"
#include "topology.h"

extern char **environ;

#define DEFAULT_QUERY_TIMEOUT_S 20.0
#define MAX_NODES 1000000

struct ctx {
    const struct machine_parallel *par;
    const char *machine; /* for messages */
    const struct allocation_env *env;
    char *const *envp;
    char host[256];      /* short host name */
    double timeout;
    bool oom;            /* a warning could not be stored */
    struct allocation *a;
};

/* A variable of the environment; empty counts as unset. */
static const char *getvar (const struct ctx *c, const char *name)
{
    const char *v = run_command_env (c->envp, name);
    return v && *v ? v : NULL;
}

static void warn (struct ctx *c, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void warn (struct ctx *c, const char *fmt, ...)
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

static int find_host (char **names, int n, const char *host)
{
    for (int i = 0; host && i < n; i++)
        if (same_host (names[i], host))
            return i;
    return -1;
}

/* Names "<prefix>0".."<prefix>n-1" where the scheduler says how many nodes
 * but not which. */
static char **numbered_names (const char *prefix, int n)
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
static int set_nodes (struct ctx *c, char **names, int n, berth_error_t *err)
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

static int parse_count (const char *text, int *n)
{
    char *end;
    errno = 0;
    long v = strtol (text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > MAX_NODES)
        return -1;
    *n = (int) v;
    return 0;
}

static int query (struct ctx *c, const char *const *argv, char **out,
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
static int become_login (struct ctx *c, berth_error_t *err)
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
    if (!(a->liveness = strdup ("none")) || set_nodes (c, names, 1, err) < 0)
        return errprintf (err, "out of memory");
    a->nodes[0].gpus = c->par->login_gpus;
    a->nodes[0].memory_configured_mb = -1;
    a->nodes[0].ncores = c->par->login_cores;
    return 0;
}

/* ---- Slurm liveness ----------------------------------------------------- */

/* Does <proc>/self/cgroup put this process under a path component
 * job_<id>? */
static bool in_job_cgroup (const struct ctx *c, const char *job)
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

static const char *user_name (const struct ctx *c, char *buf, size_t size)
{
    /* The account database (getpwuid) is the caller's to read, and only
     * now that a query needs it: berthd passes its lookup in; the
     * statically linked CLI never queries. */
    if (c->env->user)
        return c->env->user;
    const char *u = c->env->user_lookup ? c->env->user_lookup () : NULL;
    if (u)
        return u;
    u = getvar (c, "USER");
    if (u)
        return u;
    snprintf (buf, size, "%u", (unsigned) getuid ());
    return buf;
}

/* The job is not live: warn and become login, or (refuse_stale) fail. */
static int not_live (struct ctx *c, const char *msg, berth_error_t *err)
{
    if (c->env->refuse_stale)
        return errprintf_code (err, "allocation_not_live", "%s", msg);
    warn (c, "%s; working as a login node (no MPI)", msg);
    return become_login (c, err);
}

/* Steps 2 and 3: one squeue for the job's state; if that fails, one more to
 * tell a forgotten job from a scheduler that cannot be reached. 1: live. */
static int query_liveness (struct ctx *c, const char *job, berth_error_t *err)
{
    const char *state_argv[] = { "squeue", "--noheader", "-t", "all", "-j",
                                 job, "-o", "%T", NULL };
    char *out, state[128], msg[2048], ubuf[32];
    berth_error_t qerr, uerr;
    if (query (c, state_argv, &out, &qerr) == 0) {
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
    if (query (c, user_argv, &out, &uerr) < 0)
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
static void slurm_node_names (struct ctx *c, char ***names, int *n)
{
    static const char *vars[] = { "SLURM_JOB_NODELIST", "SLURM_NODELIST" };
    *names = NULL;
    *n = 0;
    for (int i = 0; i < 2; i++) {
        const char *text = getvar (c, vars[i]);
        berth_error_t e;
        if (!text)
            continue;
        if (hostlist_expand (text, names, n, &e) == 0)
            return;
        warn (c, "%s='%s' is not a host list (%s); ignoring it", vars[i], text,
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
static void slurm_cores (struct ctx *c)
{
    struct allocation *a = c->a;
    int cfg = c->par->cores_per_node, *vals, fewer = 0;
    for (int i = 0; i < a->nnodes; i++)
        a->nodes[i].ncores = cfg;
    const char *text = getvar (c, "SLURM_JOB_CPUS_PER_NODE");
    if (!text)
        return;
    int n = parse_cpus_per_node (text, &vals);
    if (n < 0) {
        warn (c, "SLURM_JOB_CPUS_PER_NODE='%s' is not a list such as "
              "'64(x2),32'; ignoring it", text);
        return;
    }
    if (n != a->nnodes) {
        warn (c, "SLURM_JOB_CPUS_PER_NODE='%s' describes %d nodes, the "
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
        warn (c, "SLURM_JOB_CPUS_PER_NODE=%s gives fewer cores than "
              "cores_per_node = %d of machine %s on %d of %d nodes (a "
              "partial-node allocation); using the environment's figures",
              text, cfg, c->machine, fewer, n);
}

/* Only when the environment tells nothing: one `squeue -o %D`. */
static int squeue_node_count (struct ctx *c, const char *job, int *count,
                              berth_error_t *err)
{
    const char *argv[] = { "squeue", "--noheader", "-j", job, "-o", "%D",
                           NULL };
    char *out, line[64];
    if (query (c, argv, &out, err) < 0)
        return errprefix (err, "cannot tell how many nodes Slurm job %s has "
                          "(no SLURM_JOB_NUM_NODES, SLURM_NNODES or node list "
                          "in the environment): ", job);
    text_first_line (out, line, sizeof (line));
    free (out);
    if (parse_count (line, count) < 0)
        return errprintf (err, "cannot tell how many nodes Slurm job %s has: "
                          "`squeue -j %s -o %%D` printed '%s', not a count",
                          job, job, line);
    return 0;
}

/* Returns the local node index (-1 none) through *local. */
static int discover_slurm (struct ctx *c, const char *job, int *local,
                           berth_error_t *err)
{
    struct allocation *a = c->a;
    char **names, proof[160];
    int nnames, count = 0;
    slurm_node_names (c, &names, &nnames);

    /* Step 1: local proof, no query. */
    const char *sd = getvar (c, "SLURMD_NODENAME");
    proof[0] = '\0';
    if (sd && !strcmp (sd, c->host))
        snprintf (proof, sizeof (proof), "local proof: SLURMD_NODENAME");
    else if (find_host (names, nnames, c->host) >= 0)
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
        const char *text = getvar (c, count_vars[i]);
        if (text && parse_count (text, &count) < 0)
            warn (c, "%s='%s' is not a node count; ignoring it", count_vars[i],
                  text);
    }
    if (names && count && count != nnames)
        warn (c, "SLURM_JOB_NUM_NODES or SLURM_NNODES says %d nodes but the "
              "node list names %d; using the names", count, nnames);
    if (!names) {
        if (!count && squeue_node_count (c, job, &count, err) < 0)
            return -1;
        if (!(names = numbered_names ("slurm-node-", count)))
            return errprintf (err, "out of memory");
        nnames = count;
        warn (c, "no usable SLURM_JOB_NODELIST or SLURM_NODELIST: the %d "
              "nodes are called slurm-node-0..%d here", count, count - 1);
    }
    /* The node this process runs on: by name, else (proof without a name
     * match, e.g. several slurmd on one host) the first, where the batch
     * script runs. */
    int idx = sd ? find_host (names, nnames, sd) : -1;
    if (idx < 0)
        idx = find_host (names, nnames, c->host);
    if (idx < 0 && strncmp (proof, "local", 5) == 0)
        idx = 0;
    *local = idx;
    if (set_nodes (c, names, nnames, err) < 0)
        return -1;
    slurm_cores (c);
    return 1;
}

/* ---- PBS ---------------------------------------------------------------- */

/* PBS_NODEFILE: one line per slot; stripped, short names, empties and
 * repeats dropped, order kept. */
static int read_nodefile (const char *path, char ***names, int *n,
                          berth_error_t *err)
{
    FILE *fp = fopen (path, "r");
    char line[1024], **v = NULL;
    int k = 0;
    if (!fp)
        return errprintf (err, "PBS_NODEFILE=%s cannot be read: %s", path,
                          strerror (errno));
    while (fgets (line, sizeof (line), fp)) {
        char *s = line + strspn (line, " \t\r\n");
        s[strcspn (s, " \t\r\n.")] = '\0';
        if (!*s || find_host (v, k, s) >= 0)
            continue;
        char **nv = realloc (v, (k + 1) * sizeof (char *));
        if (nv)
            v = nv;
        if (!nv || !(v[k] = strdup (s))) {
            fclose (fp);
            hostlist_free (v, k);
            return errprintf (err, "out of memory reading %s", path);
        }
        k++;
    }
    fclose (fp);
    *names = v;
    *n = k;
    return 0;
}

/* Leading count of a qstat -f value ("2:ncpus=64" -> 2); -1 when none. */
static int leading_count (const char *v)
{
    int n;
    char buf[32];
    snprintf (buf, sizeof (buf), "%.*s", (int) strspn (v, "0123456789"), v);
    return parse_count (buf, &n) == 0 ? n : -1;
}

/* Node count of a PBS job without a node file, from `qstat -f`. */
static int qstat_node_count (struct ctx *c, const char *job, int *count,
                             berth_error_t *err)
{
    static const char *keys[] = { "Resource_List.nodect",
                                  "Resource_List.select",
                                  "Resource_List.nodes" };
    const char *argv[] = { "qstat", "-f", job, NULL };
    int found[3] = { -1, -1, -1 };
    char *out;
    if (query (c, argv, &out, err) < 0)
        return errprefix (err, "PBS job %s has no PBS_NODEFILE, and asking "
                          "qstat failed: ", job);
    for (char *line = strtok (out, "\n"); line; line = strtok (NULL, "\n")) {
        line += strspn (line, " \t");
        for (int i = 0; i < 3; i++) {
            size_t kl = strlen (keys[i]);
            if (strncmp (line, keys[i], kl) || !strchr (" =", line[kl]))
                continue;
            const char *v = line + kl + strspn (line + kl, " =");
            found[i] = leading_count (v);
        }
    }
    free (out);
    for (int i = 0; i < 3; i++)
        if (found[i] > 0) {
            *count = found[i];
            return 0;
        }
    return errprintf (err, "cannot tell the nodes of PBS job %s: no "
                      "PBS_NODEFILE, and `qstat -f %s` shows no node count "
                      "(Resource_List.nodect, select or nodes)", job, job);
}

static int discover_pbs (struct ctx *c, const char *job, int *local,
                         berth_error_t *err)
{
    struct allocation *a = c->a;
    char **names = NULL;
    int n = 0;
    const char *nodefile = getvar (c, "PBS_NODEFILE");
    if (!(a->job_id = strdup (job)) || !(a->liveness = strdup ("none")))
        return errprintf (err, "out of memory");
    if (nodefile && read_nodefile (nodefile, &names, &n, err) < 0)
        return -1;
    *local = find_host (names, n, c->host);
    if (n == 0) {
        free (names);
        if (qstat_node_count (c, job, &n, err) < 0)
            return -1;
        /* A PBS job's shell runs on its first node. */
        if (!(names = numbered_names ("pbs-node-", n)))
            return errprintf (err, "out of memory");
        free (names[0]);
        if (!(names[0] = strdup (c->host))) {
            hostlist_free (names, n);
            return errprintf (err, "out of memory");
        }
        *local = 0;
        warn (c, "PBS job %s has no PBS_NODEFILE: %d nodes from qstat, "
              "named after this host and pbs-node-1..", job, n);
    }
    if (set_nodes (c, names, n, err) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        a->nodes[i].ncores = c->par->cores_per_node;
    return 0;
}

/* ---- this node's evidence: cores and memory ----------------------------- */

/* Usable core ids for every node from this node's topology (on
 * homogeneous machines the best evidence there is), or 0..n-1 when this
 * process runs on none of the nodes. ncores holds the wanted count on entry
 * (0: unknown). */
static int assign_cores (struct ctx *c, int local, berth_error_t *err)
{
    struct allocation *a = c->a;
    int *aff = NULL, naff = 0, *phys = NULL, nphys = 0, rc = -1;
    int prev_want = -1;
    if (local >= 0) {
        if (c->env->affinity_ids) {
            naff = c->env->naffinity;
        } else if (topology_affinity_ids (&aff, &naff, err) < 0)
            return -1;
        if (topology_physical_cores (c->env->sysfs_root,
                                     aff ? aff : c->env->affinity_ids, naff,
                                     &phys, &nphys, err) < 0)
            goto done;
        /* On this host itself the host is the truth: never more cores than
         * it gives, never renumbered. */
        if (a->system == BERTH_SYSTEM_SINGLE_NODE
            || a->system == BERTH_SYSTEM_LOGIN) {
            int want = a->nodes[local].ncores;
            a->nodes[local].ncores = want > 0 && want < nphys ? want : nphys;
        }
    }
    for (int i = 0; i < a->nnodes; i++) {
        struct allocation_node *nd = &a->nodes[i];
        char w[512];
        if (local < 0) {
            if (nd->ncores <= 0) {
                errprintf (err, "machine %s sets no cores_per_node and "
                           "nothing tells the cores of node %s; set "
                           "cores_per_node", c->machine, nd->name);
                goto done;
            }
            if (!(nd->core_ids = malloc (nd->ncores * sizeof (int)))) {
                errprintf (err, "out of memory");
                goto done;
            }
            for (int k = 0; k < nd->ncores; k++)
                nd->core_ids[k] = k;
            continue;
        }
        /* Every node gets what this node's topology gives for its count:
         * the same as the node before when the counts are (10,000 nodes
         * need not be worked out 10,000 times). */
        const struct allocation_node *prev = i > 0 ? &a->nodes[i - 1] : NULL;
        if (prev && i - 1 != local && i != local && prev->core_ids
            && prev_want == nd->ncores) {
            if (!(nd->core_ids = malloc (prev->ncores * sizeof (int)))) {
                errprintf (err, "out of memory");
                goto done;
            }
            memcpy (nd->core_ids, prev->core_ids, prev->ncores * sizeof (int));
            nd->ncores = prev->ncores;
            continue;
        }
        prev_want = nd->ncores;
        if (topology_usable_core_ids (phys, nphys, nd->ncores, &nd->core_ids,
                                      &nd->ncores, w, sizeof (w), err) < 0) {
            nd->ncores = 0;
            errprefix (err, "node %s: ", nd->name);
            goto done;
        }
        if (i == local && *w)
            warn (c, "node %s: %s", nd->name, w);
    }
    rc = 0;
done:
    free (aff);
    free (phys);
    return rc;
}

/* Credit nodes with what this node can really give: min(cgroup limit,
 * MemAvailable) where it is below the configured figure. */
static void credit_memory (struct ctx *c, int local)
{
    struct allocation *a = c->a;
    int64_t got = -1, cfg = c->par->memory_per_node;
    if (cfg < 0)
        cfg = -1;
    if (local >= 0 && a->system != BERTH_SYSTEM_LOGIN) {
        struct memory_facts mf = { -1, -1, -1, -1 };
        berth_error_t e;
        if (memory_read_facts (c->env->proc_root, c->env->cgroup_root, &mf, &e)
            < 0)
            warn (c, "cannot read this node's memory (%s); accounting with "
                  "the configured memory_per_node", e.text);
        else
            got = mf.credited_mb;
        if (got >= 0 && cfg >= 0 && got < cfg) {
            char lim[32] = "none", avail[32] = "unknown";
            if (mf.cgroup_limit_mb >= 0)
                snprintf (lim, sizeof (lim), "%" PRId64 " MB",
                          mf.cgroup_limit_mb);
            if (mf.mem_available_mb >= 0)
                snprintf (avail, sizeof (avail), "%" PRId64 " MB",
                          mf.mem_available_mb);
            warn (c, "node %s can give %" PRId64 " MB (cgroup limit %s, "
                  "MemAvailable %s), less than memory_per_node = %" PRId64
                  " MB of machine %s; accounting with %" PRId64 " MB per node",
                  a->nodes[local].name, got, lim, avail, cfg, c->machine, got);
        }
    }
    for (int i = 0; i < a->nnodes; i++) {
        struct allocation_node *nd = &a->nodes[i];
        if (a->system == BERTH_SYSTEM_LOGIN)
            nd->memory_credited_mb = -1;
        else
            nd->memory_credited_mb = got < 0 ? cfg : cfg < 0 ? got
                                   : got < cfg ? got : cfg;
    }
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
    struct ctx c = {
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
        const char *job = getvar (&c, slurm ? "SLURM_JOB_ID" : "PBS_JOBID");
        if (!job)
            rc = become_login (&c, err);
        else if (slurm)
            rc = discover_slurm (&c, job, &local, err) < 0 ? -1 : 0;
        else
            rc = discover_pbs (&c, job, &local, err);
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
        rc = set_nodes (&c, names, 1, err);
        if (rc == 0)
            a->nodes[0].ncores = par->cores_per_node;
        local = 0;
        break;
    fail_oom_names:
        hostlist_free (names, 1);
        goto fail_oom;
    }
    case BERTH_SYSTEM_LOGIN:
        rc = become_login (&c, err);
        local = 0;
        break;
    default:
        errprintf (err, "machine %s: system %d is not slurm, pbs, single_node "
                   "or login", c.machine, (int) par->system);
        break;
    }
    if (rc < 0 || assign_cores (&c, local, err) < 0)
        goto fail;
    credit_memory (&c, local);
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
