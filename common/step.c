/* SPDX-License-Identifier: MIT */
/* A step's request, and cutting it to fit the whole empty allocation once.
 * The width of an MPI step changes its results, so it is
 * decided here against the allocation, never against what happens to be
 * free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step.h"

void step_request_init (struct step_request *r)
{
    memset (r, 0, sizeof (*r));
    r->ntasks = r->min_tasks = STEP_UNSET;
    r->cpus_per_task = r->min_cpus_per_task = STEP_UNSET;
    r->cores = r->min_cores = STEP_UNSET;
    r->gpus = r->min_gpus = STEP_UNSET;
    r->gpus_per_task = r->min_gpus_per_task = STEP_UNSET;
    r->memory = r->min_memory = STEP_UNSET;
    r->may_span_nodes = STEP_UNSET;
    r->timeout = -1;
}

void step_request_free (struct step_request *r)
{
    if (!r)
        return;
    free (r->label);
    if (r->argv) {
        for (char **a = r->argv; *a; a++)
            free (*a);
        free (r->argv);
    }
    r->label = NULL;
    r->argv = NULL;
}

/* Everything a message needs to name the step. */
struct cut {
    const struct step_request *req;
    char name[160];
    berth_error_t *err;
};

/* A failure of the cut, its message led by the step's name; code is its
 * kind for the client: invalid (the request contradicts itself) or refuse
 * (it is sound but cannot fit here). */
static int cut_fail (struct cut *c, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
#define invalid(c, ...) cut_fail ((c), "invalid_request", __VA_ARGS__)
#define refuse(c, ...) cut_fail ((c), "unsatisfiable", __VA_ARGS__)

static int cut_fail (struct cut *c, const char *code, const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    return errprintf_code (c->err, code, "%s: %s", c->name, msg);
}

/* A minimum defaults to its target: a step is only reduced as far as it says
 * it may be. */
static int check_min (struct cut *c, const char *name, long long target,
                      long long *min)
{
    if (*min == STEP_UNSET) {
        *min = target;
        return 0;
    }
    if (*min < 0)
        return invalid (c, "min_%s %lld is negative", name, *min);
    if (*min > target)
        return invalid (c, "min_%s %lld is above %s %lld: a minimum cannot "
                        "exceed its target", name, *min, name, target);
    return 0;
}

static const char *plural (long long n)
{
    return n == 1 ? "" : "s";
}

/* The fixes that work for a step refused for want of room, appended to the
 * refusal: spanning, where more than one node could take it (never for a
 * local step, which runs on the daemon's node); asking for no more than
 * fits where something does, with the minimum that lets berthd cut it.
 * Protocol field names: the CLI shows them as its options. */
struct hint {
    bool span;                /* spanning nodes would help */
    const char *min;          /* the minimum's field, "min_cores"; NULL: none */
    int min_given;            /* the request stated it: 0 no, 1 below its
                                 target, 2 equal to it (no cut wanted) */
    long long most;           /* the most that fits; < 1: nothing does */
    const char *unit;         /* "core", "task", "GPU"; NULL: MB */
    const char *where;        /* "one node", "the allocation" */
};

/* hint.min_given for a minimum as the request stated it (STEP_UNSET: not)
 * and its target as stated (STEP_UNSET: the default, dflt). */
static int stated (long long min, long long target, long long dflt)
{
    if (min == STEP_UNSET)
        return 0;
    return min == (target == STEP_UNSET ? dflt : target) ? 2 : 1;
}

static const char *hint_text (const struct hint *h, char *buf, size_t size)
{
    int n = 0;
    buf[0] = '\0';
    if (h->span)
        n = snprintf (buf, size, "; with may_span_nodes it may use more than "
                      "one node");
    if (n < 0 || (size_t) n >= size || !h->min || h->most < 1)
        return buf;
    char what[64];
    if (h->unit)
        snprintf (what, sizeof (what), "%lld %s%s fit%s", h->most, h->unit,
                  plural (h->most), h->most == 1 ? "s" : "");
    else
        snprintf (what, sizeof (what), "%lld MB fit", h->most);
    if (h->min_given == 2)
        snprintf (buf + n, size - n, "; at most %s %s: ask for no more", what,
                  h->where);
    else if (h->min_given)
        snprintf (buf + n, size - n, "; at most %s %s: lower %s to %lld",
                  what, h->where, h->min, h->most);
    else
        snprintf (buf + n, size - n, "; at most %s %s: ask for no more, or "
                  "give %s %lld to let berthd cut it", what, h->where, h->min,
                  h->most);
    return buf;
}

int step_cut_to_fit (const struct step_request *req,
                     const struct step_capacity *cap, struct step_shape *out,
                     char *warn, size_t warnsize, berth_error_t *err)
{
    struct cut c = { .req = req, .err = err };
    if (req->label && *req->label)
        snprintf (c.name, sizeof (c.name), "step '%s'", req->label);
    else
        snprintf (c.name, sizeof (c.name), "step (no label)");
    if (warn && warnsize)
        warn[0] = '\0';
    if (cap->nodes < 1 || cap->cores_per_node < 1 || cap->gpus_per_node < 0)
        return errprintf_code (err, "invalid_request",
                               "%s: the allocation has %d node%s of %d core%s "
                               "and %d GPU%s: nothing to place on", c.name,
                               cap->nodes, plural (cap->nodes),
                               cap->cores_per_node, plural (cap->cores_per_node),
                               cap->gpus_per_node, plural (cap->gpus_per_node));

    /* Shape and its minimums. */
    bool mpi = req->ntasks != STEP_UNSET;
    long long ntasks = 1, cpt, min_tasks = STEP_UNSET, min_cpt = STEP_UNSET;
    if (mpi) {
        if (req->ntasks < 1)
            return invalid (&c, "ntasks %d must be at least 1", req->ntasks);
        ntasks = req->ntasks;
        cpt = req->cpus_per_task == STEP_UNSET ? 1 : req->cpus_per_task;
        if (cpt < 1)
            return invalid (&c, "cpus_per_task %lld must be at least 1", cpt);
        if (req->cores != STEP_UNSET && req->cores != ntasks * cpt)
            return invalid (&c, "cores %d disagrees with ntasks %lld x "
                            "cpus_per_task %lld = %lld: give one or the other",
                            req->cores, ntasks, cpt, ntasks * cpt);
        if (req->min_cores != STEP_UNSET)
            return invalid (&c, "min_cores is for a non-MPI step: use "
                            "min_tasks and min_cpus_per_task with ntasks");
        min_tasks = req->min_tasks;
        min_cpt = req->min_cpus_per_task;
        if (check_min (&c, "tasks", ntasks, &min_tasks) < 0
            || check_min (&c, "cpus_per_task", cpt, &min_cpt) < 0)
            return -1;
        if (min_tasks < 1 || min_cpt < 1)
            return invalid (&c, "min_tasks and min_cpus_per_task must be at "
                            "least 1");
    } else {
        if (req->cpus_per_task != STEP_UNSET || req->min_tasks != STEP_UNSET
            || req->min_cpus_per_task != STEP_UNSET)
            return invalid (&c, "cpus_per_task and min_tasks describe an MPI "
                            "step: give ntasks too, or ask for cores");
        cpt = req->cores == STEP_UNSET ? 1 : req->cores;
        if (cpt < 1)
            return invalid (&c, "cores %lld must be at least 1", cpt);
        min_cpt = req->min_cores;
        if (check_min (&c, "cores", cpt, &min_cpt) < 0)
            return -1;
        if (min_cpt < 1)
            return invalid (&c, "min_cores must be at least 1");
        min_tasks = 1;
    }

    /* GPUs are totals; gpus_per_task is converted. */
    long long gpus = req->gpus, min_gpus = req->min_gpus;
    if (req->gpus_per_task != STEP_UNSET) {
        if (req->gpus != STEP_UNSET || req->min_gpus != STEP_UNSET)
            return invalid (&c, "gives both gpus and the deprecated "
                            "gpus_per_task: give gpus (a total) only");
        if (req->gpus_per_task < 0)
            return invalid (&c, "gpus_per_task %d is negative",
                            req->gpus_per_task);
        long long min_gpt = req->min_gpus_per_task == STEP_UNSET
                            ? req->gpus_per_task : req->min_gpus_per_task;
        gpus = ntasks * req->gpus_per_task;
        min_gpus = min_tasks * min_gpt;
        if (warn && warnsize)
            snprintf (warn, warnsize, "%s: gpus_per_task is deprecated: "
                      "converted to gpus %lld (min %lld) for %lld task%s; "
                      "ask for gpus as a total", c.name, gpus, min_gpus,
                      ntasks, plural (ntasks));
    } else if (req->min_gpus_per_task != STEP_UNSET) {
        return invalid (&c, "min_gpus_per_task needs gpus_per_task; better, "
                        "give gpus and min_gpus as totals");
    }
    if (gpus == STEP_UNSET)
        gpus = 0;
    if (gpus < 0)
        return invalid (&c, "gpus %lld is negative", gpus);
    if (check_min (&c, "gpus", gpus, &min_gpus) < 0)
        return -1;

    /* Memory: a claim and a ceiling. */
    long long memory = req->memory, min_memory = req->min_memory;
    if (memory == STEP_UNSET)
        memory = min_memory;
    if (memory != STEP_UNSET && memory < 1)
        return invalid (&c, "memory %lld MB must be at least 1", memory);
    if (min_memory != STEP_UNSET && memory < min_memory)
        return invalid (&c, "memory %lld MB is below its min_memory %lld MB: "
                        "declare at least %lld MB", memory, min_memory,
                        min_memory);
    if (min_memory == STEP_UNSET)
        min_memory = memory;

    if (req->local && req->may_span_nodes == 1)
        return invalid (&c, "a local step runs on the daemon's own node and "
                        "cannot span nodes: drop local or may_span_nodes");
    bool span = req->may_span_nodes == STEP_UNSET ? (mpi && ntasks > 1
                                                     && !req->local)
                                                  : req->may_span_nodes != 0;

    /* 1. No MPI launch where MPI may not run. */
    if (mpi && ntasks > 1 && !cap->mpi_allowed)
        return refuse (&c, "asks for %lld MPI tasks, but MPI launches are not "
                       "allowed here (a login node): run it inside a batch "
                       "allocation", ntasks);

    long long nodes = span ? cap->nodes : 1, cpn = cap->cores_per_node;
    long long gpn = cap->gpus_per_node;
    const char *where = span ? "the allocation" : "one node";
    /* spanning helps only where there is another node to use */
    bool span_helps = !span && !req->local && cap->nodes > 1;
    char hint[300];

    /* 2. A process's cores are on one node. */
    if (mpi) {
        if (cpt > cpn)
            cpt = cpn;
        if (cpt < min_cpt)
            return refuse (&c, "needs %lld core%s for each task (min_"
                           "cpus_per_task) but a node holds %lld core%s, and "
                           "a process cannot use cores on another node%s",
                           min_cpt, plural (min_cpt), cpn, plural (cpn),
                           hint_text (&(struct hint) {
                               false, "min_cpus_per_task",
                               stated (req->min_cpus_per_task,
                                       req->cpus_per_task, 1), cpn,
                               "core", "per task" }, hint, sizeof (hint)));
    }

    /* 3. Tasks (or cores) bounded by what the allocation or a node holds. */
    long long orig_tasks = ntasks;
    if (mpi) {
        long long most = nodes * (cpn / cpt);
        if (ntasks > most)
            ntasks = most;
        if (ntasks < min_tasks)
            return refuse (&c, "needs %lld task%s x %lld core%s = %lld "
                           "core%s, but %s holds %lld task%s of %lld core%s "
                           "(%lld node%s x %lld core%s)%s", min_tasks,
                           plural (min_tasks), cpt, plural (cpt),
                           min_tasks * cpt, plural (min_tasks * cpt), where,
                           most, plural (most), cpt, plural (cpt), nodes,
                           plural (nodes), cpn, plural (cpn),
                           hint_text (&(struct hint) {
                               span_helps, "min_tasks",
                               stated (req->min_tasks, req->ntasks, 1), most,
                               "task",
                               where }, hint, sizeof (hint)));
    } else {
        long long most = nodes * cpn;
        if (cpt > most)
            cpt = most;
        if (cpt < min_cpt)
            return refuse (&c, "needs %lld core%s, but %s holds %lld core%s "
                           "(%lld node%s x %lld core%s)%s", min_cpt,
                           plural (min_cpt), where, most, plural (most),
                           nodes, plural (nodes), cpn, plural (cpn),
                           hint_text (&(struct hint) {
                               span_helps, "min_cores",
                               stated (req->min_cores, req->cores, 1), most,
                               "core",
                               where }, hint, sizeof (hint)));
    }

    /* 4. GPUs keep their ratio to tasks, and are cut once. */
    if (gpus > 0 && gpn == 0) {
        if (min_gpus > 0)
            return refuse (&c, "asks for %lld GPU%s, but this allocation has "
                           "no GPUs", gpus, plural (gpus));
        gpus = 0;
    }
    if (gpus > 0) {
        long long avail = nodes * gpn;
        long long g = gpus;
        if (mpi && ntasks < orig_tasks)
            g = (gpus * ntasks + orig_tasks - 1) / orig_tasks;
        if (g > avail) {
            if (mpi && orig_tasks > 1) {
                long long t = avail * orig_tasks / gpus;
                if (t < ntasks)
                    ntasks = t;
                g = (gpus * ntasks + orig_tasks - 1) / orig_tasks;
            }
            if (g > avail)
                g = avail;
        }
        /* the deprecated per-task form names no min_gpus to give */
        bool total = req->gpus_per_task == STEP_UNSET;
        if (g < min_gpus)
            return refuse (&c, "needs %lld GPU%s, but %s holds %lld (%lld "
                           "node%s x %lld)%s", min_gpus, plural (min_gpus),
                           where, avail, nodes, plural (nodes), gpn,
                           hint_text (&(struct hint) {
                               span_helps, total ? "min_gpus" : NULL,
                               stated (req->min_gpus, req->gpus, 0), avail,
                               "GPU",
                               where }, hint, sizeof (hint)));
        if (ntasks < min_tasks)
            return refuse (&c, "needs %lld task%s with %lld GPU%s for %lld "
                           "task%s, but the %lld GPU%s %s holds serve only "
                           "%lld task%s at that ratio%s", min_tasks,
                           plural (min_tasks), gpus, plural (gpus),
                           orig_tasks, plural (orig_tasks), avail,
                           plural (avail), where, ntasks, plural (ntasks),
                           hint_text (&(struct hint) {
                               span_helps, "min_tasks",
                               stated (req->min_tasks, req->ntasks, 1), ntasks,
                               "task",
                               where }, hint, sizeof (hint)));
        gpus = g;
    }

    /* Memory: the share on the fullest node must fit a node. */
    long long cores = ntasks * cpt;
    long long mpn = cap->memory_per_node;
    if (memory != STEP_UNSET && mpn >= 0) {
        long long on_one = mpi ? (cpn / cpt) * cpt : cpn;
        if (on_one > cores)
            on_one = cores;
        long long most = mpn * cores / on_one;
        if (memory > most)
            memory = most;
        if (memory < min_memory)
            return refuse (&c, "needs %lld MB of memory, but %s holds %lld MB "
                           "for %lld core%s (%lld MB per node)%s", min_memory,
                           where, most, cores, plural (cores), mpn,
                           hint_text (&(struct hint) {
                               span_helps, "min_memory",
                               stated (req->min_memory, req->memory,
                                       req->min_memory), most, NULL,
                               where }, hint, sizeof (hint)));
    }

    out->mpi = mpi;
    out->ntasks = (int) ntasks;
    out->cpus_per_task = (int) cpt;
    out->cores = (int) cores;
    out->gpus = (int) gpus;
    out->memory = memory == STEP_UNSET ? -1 : memory;
    out->budget = memory != STEP_UNSET ? memory
                  : mpn >= 0 ? cores * mpn / cpn : -1;
    out->may_span = span;
    out->local = req->local;
    return 0;
}

int step_shape_describe (const struct step_shape *s, char *buf, size_t size)
{
    char tasks[64] = "", gpus[32] = "", mem[48] = "";
    if (s->mpi)
        snprintf (tasks, sizeof (tasks), " (%d x %d)", s->ntasks,
                  s->cpus_per_task);
    if (s->gpus)
        snprintf (gpus, sizeof (gpus), ", %d GPU%s", s->gpus,
                  plural (s->gpus));
    if (s->memory >= 0)
        snprintf (mem, sizeof (mem), ", %lld MB", (long long) s->memory);
    else if (s->budget >= 0)
        snprintf (mem, sizeof (mem), ", %lld MB budget",
                  (long long) s->budget);
    return snprintf (buf, size, "%d core%s%s%s%s%s%s", s->cores,
                     plural (s->cores), tasks, gpus, mem,
                     s->may_span ? ", may span" : "",
                     s->local ? ", local" : "");
}
