/* SPDX-License-Identifier: MIT */
/* Which machine to load when none is named, and the generic machines built
 * from a Slurm or PBS job's environment (the figures detected on this host
 * are machine_facts.c's).
 * Everything the choice depends on comes through struct machine_env so tests
 * can feed it. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_file.h"
#include "machine_search.h"
#include "machine_select.h"

struct select_ctx {
    const struct machine_env *env;
    struct machine_search search;
    struct machine_facts facts;
    bool have_facts;
};

static const char *ctx_getenv (struct select_ctx *c, const char *name)
{
    const char *v = c->env->getenv ? c->env->getenv (c->env->arg, name)
                                   : getenv (name);
    return v && *v ? v : NULL;
}

static int ctx_facts (struct select_ctx *c, const struct machine_facts **f,
                      berth_error_t *err)
{
    if (!c->have_facts) {
        memset (&c->facts, 0, sizeof (c->facts));
        c->facts.memory_mb = -1;
        int rc = c->env->detect ? c->env->detect (c->env->arg, &c->facts, err)
                                : machine_detect_facts (NULL, &c->facts, err);
        if (rc < 0)
            return -1;
        c->have_facts = true;
    }
    *f = &c->facts;
    return 0;
}

/* The integer that the digits at the start of s spell ("64(x2),32" gives
 * 64), or -1 when s does not start with a digit or overflows. */
static long long leading_int (const char *s)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    long long x = strtoll (s, NULL, 10);
    return errno ? -1 : x;
}

/* s as a whole non-negative integer, else -1. */
static long long whole_int (const char *s)
{
    return s && strspn (s, "0123456789") == strlen (s) ? leading_int (s) : -1;
}

static int set_num (struct machine *m, const char *key, long long x,
                    const char *origin, berth_error_t *err)
{
    char buf[32];
    snprintf (buf, sizeof (buf), "%lld", x);
    return machine_effective_set (m, key, buf, origin, err);
}

/* localhost (and any single_node machine): fill what the files left empty
 * from this host, marked "detected" so `berth machine` shows where it came
 * from. */
static int fill_detected (struct select_ctx *c, struct machine *m,
                          berth_error_t *err)
{
    static const char *const keys[] = {
        "parallel_executable", "cores_per_node", "gpus_per_node",
        "memory_per_node", "max_mpi_tasks_per_node",
    };
    const char *v;
    const struct machine_facts *f;
    bool need = false;
    for (size_t i = 0; i < sizeof (keys) / sizeof (keys[0]); i++) {
        if (machine_effective_get (m, keys[i], &v, err) < 0)
            return -1;
        need |= !v;
    }
    if (!need)
        return 0;
    if (ctx_facts (c, &f, err) < 0)
        return errprefix (err, "machine %s: detecting this host: ", m->name);

    if (machine_effective_get (m, "parallel_executable", &v, err) < 0
        || (!v && machine_effective_set (m, "parallel_executable",
                                         f->launcher[0] ? f->launcher
                                                        : "mpirun",
                                         "detected", err) < 0))
        return -1;
    if (machine_effective_get (m, "cores_per_node", &v, err) < 0
        || (!v && f->cores > 0
            && set_num (m, "cores_per_node", f->cores, "detected", err) < 0))
        return -1;
    if (machine_effective_get (m, "gpus_per_node", &v, err) < 0)
        return -1;
    if (!v) {
        if (set_num (m, "gpus_per_node", f->gpus, "detected", err) < 0)
            return -1;
        if (f->gpus > 0 && f->gpu_visible_devices_var
            && (machine_effective_get (m, "gpu_visible_devices_var", &v, err)
                    < 0
                || (!v && machine_effective_set (m, "gpu_visible_devices_var",
                                                 f->gpu_visible_devices_var,
                                                 "detected", err) < 0)))
            return -1;
    }
    if (machine_effective_get (m, "memory_per_node", &v, err) < 0
        || (!v && f->memory_mb > 0
            && set_num (m, "memory_per_node", f->memory_mb, "detected", err)
                   < 0))
        return -1;
    /* One task per core: the cores figure in force, given or detected. */
    const char *cores;
    if (machine_effective_get (m, "max_mpi_tasks_per_node", &v, err) < 0
        || machine_effective_get (m, "cores_per_node", &cores, err) < 0
        || (!v && cores && machine_effective_set (m, "max_mpi_tasks_per_node",
                                                  cores, "detected", err) < 0))
        return -1;
    return 0;
}

static int finish (struct select_ctx *c, struct machine *m,
                   const char *compiler, berth_error_t *err)
{
    const char *system;
    if (machine_set_compiler (m, compiler, err) < 0
        || machine_effective_get (m, "system", &system, err) < 0)
        return -1;
    if (system && strcmp (system, "single_node") == 0
        && fill_detected (c, m, err) < 0)
        return -1;
    return machine_parse_parallel (m, err);
}

enum fact { FACT_CORES, FACT_MEMORY };

/* A figure the job's environment gave (*value > 0) stands; else this host's
 * detected one, with *src saying so. The host is only looked at when a
 * figure is missing, since detection reads much of /proc and /sys. */
static int or_detected (struct select_ctx *c, long long *value,
                        const char **src, enum fact which, berth_error_t *err)
{
    const struct machine_facts *f;
    if (*value > 0)
        return 0;
    if (ctx_facts (c, &f, err) < 0)
        return -1;
    *value = which == FACT_CORES ? f->cores : f->memory_mb;
    *src = "detected";
    return 0;
}

/* The generic machine for a Slurm job: srun, and the figures the job's
 * environment gives, this host's where it gives none. No targets. */
static int build_slurm (struct select_ctx *c, struct machine *m,
                        berth_error_t *err)
{
    static const char origin[] = "generic slurm machine";
    const char *src = "SLURM_JOB_CPUS_PER_NODE";
    long long cores = leading_int (ctx_getenv (c, src));
    if (cores <= 0)
        cores = leading_int (ctx_getenv (c, src = "SLURM_CPUS_ON_NODE"));
    const char *msrc = "SLURM_MEM_PER_NODE";
    long long mem = whole_int (ctx_getenv (c, msrc));
    if (or_detected (c, &cores, &src, FACT_CORES, err) < 0
        || or_detected (c, &mem, &msrc, FACT_MEMORY, err) < 0)
        return -1;
    const char *gsrc = "SLURM_GPUS_ON_NODE";
    long long gpus = whole_int (ctx_getenv (c, gsrc));
    if (gpus < 0 && ctx_getenv (c, "SLURM_JOB_GPUS")) {
        char **items;
        int n;
        if (machine_split_list (ctx_getenv (c, "SLURM_JOB_GPUS"), &items, &n,
                                err) < 0)
            return -1;
        machine_free_list (items);
        gpus = n;
        gsrc = "SLURM_JOB_GPUS";
    }
    if (gpus < 0) {
        gpus = 0;
        gsrc = origin;
    }
    if (config_set (m->cfg, "parallel", "system", "slurm", origin, err) < 0
        || config_set (m->cfg, "parallel", "parallel_executable", "srun",
                       origin, err) < 0
        || (cores > 0 && (set_num (m, "cores_per_node", cores, src, err) < 0
                          || set_num (m, "max_mpi_tasks_per_node", cores, src,
                                      err) < 0))
        || (mem > 0 && set_num (m, "memory_per_node", mem, msrc, err) < 0)
        || set_num (m, "gpus_per_node", gpus, gsrc, err) < 0)
        return -1;
    return 0;
}

/* The generic machine for a PBS job: mpiexec, and this host's figures. */
static int build_pbs (struct select_ctx *c, struct machine *m,
                      berth_error_t *err)
{
    static const char origin[] = "generic pbs machine";
    const struct machine_facts *f;
    if (ctx_facts (c, &f, err) < 0
        || config_set (m->cfg, "parallel", "system", "pbs", origin, err) < 0
        || config_set (m->cfg, "parallel", "parallel_executable", "mpiexec",
                       origin, err) < 0
        || (f->cores > 0
            && (set_num (m, "cores_per_node", f->cores, "detected", err) < 0
                || set_num (m, "max_mpi_tasks_per_node", f->cores, "detected",
                            err) < 0))
        || (f->memory_mb > 0
            && set_num (m, "memory_per_node", f->memory_mb, "detected", err)
                   < 0)
        || set_num (m, "gpus_per_node", f->gpus, "detected", err) < 0
        || (f->gpus > 0 && f->gpu_visible_devices_var
            && config_set (m->cfg, "parallel", "gpu_visible_devices_var",
                           f->gpu_visible_devices_var, "detected", err) < 0))
        return -1;
    return 0;
}

/* The first shipped machine whose [discovery] hostnames match host (or its
 * short name). *name is NULL when none does. */
static int discover (struct select_ctx *c, const char *host,
                     const char **name, char *why, size_t whysize,
                     berth_error_t *err)
{
    char shorthost[256];
    snprintf (shorthost, sizeof (shorthost), "%.*s",
              (int)strcspn (host, "."), host);
    *name = NULL;
    for (const char *const *n = machine_shipped_names (); *n && !*name; n++) {
        struct config *cfg = config_create ();
        const char *globs;
        char **items = NULL;
        int count = 0;
        bool found;
        if (!cfg)
            return errprintf (err, "out of memory");
        if (machine_layer_named (cfg, *n, &c->search, &found, NULL, NULL,
                                 err) < 0
            || config_get (cfg, "discovery", "hostnames", &globs, err) < 0
            || machine_split_list (globs, &items, &count, err) < 0) {
            config_destroy (cfg);
            return -1;
        }
        for (int i = 0; i < count && !*name; i++) {
            if (fnmatch (items[i], host, 0) == 0
                || fnmatch (items[i], shorthost, 0) == 0) {
                *name = *n;
                snprintf (why, whysize, "host %s matches %s [discovery] "
                          "hostnames (%s)", host, *n, items[i]);
            }
        }
        machine_free_list (items);
        config_destroy (cfg);
    }
    return 0;
}

/* Whether any of the files sets [parallel] system: then they describe a
 * machine of their own; otherwise they only adjust the machine chosen. */
static int configs_name_system (const char *const *configs, bool *names,
                                berth_error_t *err)
{
    struct config *cfg = config_create ();
    *names = false;
    if (!cfg)
        return errprintf (err, "out of memory");
    for (size_t i = 0; configs[i]; i++) {
        if (config_load_file (cfg, configs[i], err) < 0) {
            config_destroy (cfg);
            return -1;
        }
    }
    const char *raw = config_get_raw (cfg, "parallel", "system");
    while (raw && (*raw == ' ' || *raw == '\t'))
        raw++;
    *names = raw && *raw;
    config_destroy (cfg);
    return 0;
}

/* "--config A, --config B" into buf. */
static void configs_text (const char *const *configs, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; configs && configs[i] && len < size; i++) {
        int w = snprintf (buf + len, size - len, "%s--config %s",
                          i ? ", " : "", configs[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

static int load_env (struct select_ctx *c, const struct machine_options *o,
                     struct machine **mp, berth_error_t *err)
{
    const char *const *configs = o->configs;
    bool have_configs = configs && configs[0], own = false;
    char why[512], derived[256], hostbuf[256], cfgs[1024];
    const char *name = o->name, *v, *host = c->env->hostname;
    enum { NAMED, OWN, SLURM, PBS } kind = NAMED;

    configs_text (configs, cfgs, sizeof (cfgs));
    if (!name && have_configs && configs_name_system (configs, &own, err) < 0)
        return -1;
    if (own) {
        /* --config alone, naming a system: a machine named after its
         * (first) file. */
        const char *base = strrchr (configs[0], '/');
        base = base ? base + 1 : configs[0];
        size_t len = strlen (base);
        if (len > 4 && strcmp (base + len - 4, ".cfg") == 0)
            len -= 4;
        snprintf (derived, sizeof (derived), "%.*s", (int)len, base);
        name = derived;
        kind = OWN;
        snprintf (why, sizeof (why), "--config %s sets [parallel] system",
                  configs[0]);
    }
    else if (name)
        snprintf (why, sizeof (why), "--machine %s", name);
    else if ((v = ctx_getenv (c, "BERTH_MACHINE"))) {
        name = v;
        snprintf (why, sizeof (why), "BERTH_MACHINE=%s", v);
    }
    else {
        if (!host) {
            if (gethostname (hostbuf, sizeof (hostbuf)) < 0)
                hostbuf[0] = '\0';
            hostbuf[sizeof (hostbuf) - 1] = '\0';
            host = hostbuf;
        }
        if (*host && discover (c, host, &name, why, sizeof (why), err) < 0)
            return -1;
        if (name)
            ;
        else if ((v = ctx_getenv (c, "SLURM_JOB_ID"))) {
            kind = SLURM;
            name = "slurm";
            snprintf (why, sizeof (why), "inside Slurm job %s: generic slurm "
                      "machine", v);
        }
        else if ((v = ctx_getenv (c, "PBS_JOBID"))) {
            kind = PBS;
            name = "pbs";
            snprintf (why, sizeof (why), "inside PBS job %s: generic pbs "
                      "machine", v);
        }
        else {
            name = "localhost";
            snprintf (why, sizeof (why), "no machine named: localhost "
                      "default");
        }
    }
    /* Files that set no system adjust the machine chosen without them. */
    if (kind != OWN && have_configs) {
        size_t len = strlen (why);
        snprintf (why + len, sizeof (why) - len, ", with %s", cfgs);
    }

    struct machine *m = machine_new (name, why, &c->search, err);
    bool found = true;
    if (!m)
        return -1;
    int rc = 0;
    if (kind == SLURM)
        rc = build_slurm (c, m, err);
    else if (kind == PBS)
        rc = build_pbs (c, m, err);
    else if (kind == NAMED)
        rc = machine_layer_named (m->cfg, name, &c->search, &found, &m->file,
                                  &m->file_why, err);
    else if (!(m->file = strdup (configs[0]))
             || !(m->file_why = strdup ("--config")))
        rc = errprintf (err, "out of memory");
    if (rc < 0)
        goto fail;
    if (!found) {
        machine_unknown_error (name, &c->search, err);
        goto fail;
    }
    for (size_t i = 0; configs && configs[i]; i++)
        if (config_load_file (m->cfg, configs[i], err) < 0)
            goto fail;
    if (finish (c, m, o->compiler, err) < 0)
        goto fail;
    *mp = m;
    return 0;
fail:
    machine_destroy (m);
    return -1;
}

static const char *ctx_getenv_cb (void *arg, const char *name)
{
    return ctx_getenv (arg, name);
}

int machine_load_env (const struct machine_options *opts,
                      const struct machine_env *env, struct machine **mp,
                      berth_error_t *err)
{
    static const struct machine_env real;
    static const struct machine_options none;
    struct select_ctx c = { .env = env ? env : &real };
    if (!opts)
        opts = &none;
    if (machine_search_init (&c.search, opts->machine_path, ctx_getenv_cb,
                             &c, err) < 0)
        return -1;
    int rc = load_env (&c, opts, mp, err);
    machine_search_free (&c.search);
    return rc;
}

int machine_load (const struct machine_options *opts, struct machine **mp,
                  berth_error_t *err)
{
    return machine_load_env (opts, NULL, mp, err);
}
