/* SPDX-License-Identifier: MIT */
/* Rendering a launch command for a machine. Pure:
 * the launcher's capabilities come in as an argument. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"
#include "render.h"
#include "text.h"

/* Variables unset for a placed Slurm launch. srun reads these from the batch
 * script's environment as if the step had asked for them; each contradicts
 * a placed step that states its own nodes, tasks, cores and GPUs. "m:" marks
 * what was measured on the local Slurm 22.05.8 cluster (steps without --mem,
 * two --gpus=1 steps and one --gres=none step side by side).
 *   SLURM_MEM_PER_NODE/_CPU/_GPU  m: a step without --mem claims the job's
 *                                 whole memory; the others wait behind it
 *   SLURM_GPUS_PER_NODE           m: --gpus=1 steps got every GPU and ran one
 *                                 after another; --gres=none failed ("Invalid
 *                                 Trackable RESource")
 *   SLURM_CPUS_PER_GPU            m: a --gres=none step was given all the
 *                                 job's GPUs (CUDA_VISIBLE_DEVICES=0,1)
 *   SLURM_GPUS, SLURM_GPUS_PER_TASK, SLURM_GPUS_PER_SOCKET, SLURM_GRES,
 *   SLURM_STEP_GRES               other spellings of a GPU request, read as the
 *                                 step's beside its --gpus / --gres=none
 *   SLURM_TRES_PER_TASK           (23.11+) the job's cpu=/gres/gpu= per task,
 *                                 at odds with -c and the GPU statement
 *   SLURM_NTASKS_PER_GPU          ties the task count to GPUs, not to -n
 *   SLURM_NTASKS_PER_NODE         m: contradicts -N/-n (22.05 warns and ignores
 *                                 it; nothing promises others will)
 *   SLURM_DISTRIBUTION            -m is never rendered with a placement; an
 *                                 inherited one (plane, cyclic) lays tasks out
 *                                 against the placement's block split
 *   SLURM_CPU_BIND, SLURM_GPU_BIND, SLURM_MEM_BIND, SLURM_TRES_BIND
 *                                 inherited bindings (a parent's mask_cpu, a
 *                                 gpu-bind of none) bypass the renderer's
 *                                 keep/drop rules and can bind outside the step
 *   SLURM_OVERLAP                 an overlapping step is not counted, so Slurm
 *                                 could pick cores another placed step holds
 * Kept: SLURM_NTASKS, SLURM_NNODES, SLURM_CPUS_PER_TASK, SLURM_EXACT (the
 * rendered -n, -N, -c, --exact override them), SLURM_JOB_* (srun needs them),
 * SLURM_DIST_PLANESIZE (m: alone it changes nothing), and policies
 * (SLURM_HINT, SLURM_THREADS_PER_CORE) that name no resources. */
static const char *const slurm_placed_unset[] = {
    "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_GPU",
    "SLURM_GPUS", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK",
    "SLURM_GPUS_PER_SOCKET", "SLURM_GRES", "SLURM_STEP_GRES",
    "SLURM_TRES_PER_TASK", "SLURM_CPUS_PER_GPU", "SLURM_NTASKS_PER_GPU",
    "SLURM_NTASKS_PER_NODE", "SLURM_DISTRIBUTION", "SLURM_CPU_BIND",
    "SLURM_GPU_BIND", "SLURM_MEM_BIND", "SLURM_TRES_BIND", "SLURM_OVERLAP",
};

/* ---- A growing argv; allocation failures are remembered, reported once. */

struct argvec {
    char **v;
    int n, cap;
    bool oom;
};

static void av_add (struct argvec *a, char *s)
{
    if (!s) {
        a->oom = true;
        return;
    }
    if (a->n + 2 > a->cap) {
        int ncap = a->cap ? a->cap * 2 : 32;
        char **nv = realloc (a->v, (size_t)ncap * sizeof (char *));
        if (!nv) {
            free (s);
            a->oom = true;
            return;
        }
        a->v = nv;
        a->cap = ncap;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

static void av_push (struct argvec *a, const char *s)
{
    av_add (a, strdup (s));
}

static void av_pushf (struct argvec *a, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void av_pushf (struct argvec *a, const char *fmt, ...)
{
    char *s;
    va_list ap;
    va_start (ap, fmt);
    if (vasprintf (&s, fmt, ap) < 0)
        s = NULL;
    va_end (ap);
    av_add (a, s);
}

/* ---- Text helpers (malloc'd results, NULL when out of memory). */

static char *ranges_dup (const int *ids, int n)
{
    int len = idset_format (ids, n, NULL, 0);
    char *s = len >= 0 ? malloc ((size_t)len + 1) : NULL;
    if (s)
        idset_format (ids, n, s, (size_t)len + 1);
    return s;
}

static char *hexmask_dup (const int *ids, int n)
{
    int len = idset_hexmask (ids, n, NULL, 0);
    char *s = len >= 0 ? malloc ((size_t)len + 1) : NULL;
    if (s)
        idset_hexmask (ids, n, s, (size_t)len + 1);
    return s;
}

static char *node_names (const struct placement *p)
{
    char *s = NULL;
    size_t len;
    FILE *f = open_memstream (&s, &len);
    if (!f)
        return NULL;
    for (int i = 0; i < p->nnodes; i++)
        fprintf (f, "%s%s", i ? "," : "", p->nodes[i].name);
    if (fclose (f) != 0) {
        free (s);
        return NULL;
    }
    return s;
}

/* A binding value that names resources (ids, masks, lists) contradicts a
 * placement; policies (cores, threads, closest) do not. */
static bool names_resources (const char *v)
{
    static const char *const kinds[] = {
        "list:", "map_cpu:", "mask_cpu:", "map_gpu:", "mask_gpu:", "map_mem:",
        "mask_mem:",
    };
    for (const char *p = v; p; p = strchr (p, ',') ? strchr (p, ',') + 1 : NULL)
        for (size_t k = 0; k < sizeof (kinds) / sizeof (kinds[0]); k++)
            if (strncmp (p, kinds[k], strlen (kinds[k])) == 0)
                return true;
    return false;
}

/* True when the placement names its nodes (a placement of one unnamed node
 * runs wherever the launcher puts it: no -w, no --hosts). */
static bool names_nodes (const struct placement *p)
{
    return p->nodes[0].name != NULL;
}

static int ceil_div (int a, int b)
{
    return a / b + (a % b != 0);   /* no overflow near INT_MAX */
}

/* ---- The rendering context. */

struct render {
    const struct machine_parallel *par;
    const struct launcher_caps *caps;
    const struct launch_request *req;
    int alloc_nodes;
    struct argvec av;
    int exe_start;              /* where the launcher starts (after a prefix) */
    bool unset_slurm_env;
};

static const char *sysname (enum berth_system s)
{
    switch (s) {
    case BERTH_SYSTEM_SLURM: return "slurm";
    case BERTH_SYSTEM_PBS: return "pbs";
    case BERTH_SYSTEM_SINGLE_NODE: return "single_node";
    default: return "login";
    }
}

/* parallel_executable split on single spaces (empty pieces dropped). */
static void push_exe (struct render *r)
{
    const char *p = r->par->parallel_executable;
    r->exe_start = r->av.n;
    while (*p) {
        size_t n = strcspn (p, " ");
        if (n)
            av_add (&r->av, strndup (p, n));
        p += n;
        while (*p == ' ')
            p++;
    }
}

static int need_max (const struct render *r, berth_error_t *err)
{
    if (r->par->max_mpi_tasks_per_node > 0)
        return 0;
    return errprintf_code (err, "render",
                           "max_mpi_tasks_per_node is not set for this %s machine; "
                           "it is needed to lay %d tasks out on nodes: set it in the "
                           "machine's [parallel] section", sysname (r->par->system),
                           r->req->ntasks);
}

/* Tasks per node over `nodes` must not exceed the machine's maximum. */
/* tpn: the most tasks on one node; 0 for ceil(ntasks / nodes). */
static int check_tasks_per_node (const struct render *r, int nodes, int tpn,
                                 bool placed, berth_error_t *err)
{
    int max = r->par->max_mpi_tasks_per_node, n = r->req->ntasks;
    if (tpn < 1)
        tpn = ceil_div (n, nodes);
    if (need_max (r, err) < 0)
        return -1;
    if (tpn <= max)
        return 0;
    return errprintf_code (err, "render",
                           "%d tasks on %d %s nodes is %d tasks per node, above "
                           "max_mpi_tasks_per_node = %d: the %s needs at least %d "
                           "nodes (or use fewer tasks)", n, nodes,
                           placed ? "placement" : "allocation", tpn, max,
                           placed ? "placement" : "allocation", ceil_div (n, max));
}

static int no_placement (const struct render *r, berth_error_t *err)
{
    return errprintf_code (err, "render",
                           "this launcher (%s) cannot place a launch on given nodes "
                           "and cores (placement support NONE on this %s machine); "
                           "check the placement support first and launch without a "
                           "placement where there is none", r->caps->desc[0]
                           ? r->caps->desc : "none", sysname (r->par->system));
}

/* Result of splitting the placement's cores among the tasks. */
struct split {
    int **cores;
    int per;
    int *node;
};

static int split_as (const struct render *r, enum split_layout layout,
                     struct split *s, berth_error_t *err)
{
    if (placement_split_cores (r->req->placement, r->req->ntasks,
                               r->req->cpus_per_task, layout, &s->cores, &s->per,
                               &s->node, err) == 0)
        return 0;
    if (err)
        err->code = "render";
    return -1;
}

static int split (const struct render *r, struct split *s, berth_error_t *err)
{
    /* srun spreads tasks evenly over -N nodes; PALS fills --ppn in order */
    return split_as (r, r->par->system == BERTH_SYSTEM_SLURM ? SPLIT_BALANCED
                                                             : SPLIT_BLOCK,
                     s, err);
}

static void split_free (struct split *s)
{
    if (s->cores)
        free (s->cores[0]);
    free (s->cores);
    free (s->node);
}

static void push_bind (struct render *r, const char *flag, const char *v,
                       bool two_items)
{
    if (!v)
        return;
    if (two_items) {
        av_push (&r->av, flag);
        av_push (&r->av, v);
    }
    else
        av_pushf (&r->av, "%s=%s", flag, v);
}

/* Cores per task, only when the caller gave them: srun refuses "-c 0" and
 * PALS "--depth 0"; without the flag each task gets the launcher's one core. */
static void push_cpus_per_task (struct render *r, const char *flag)
{
    if (r->req->cpus_per_task < 1)
        return;
    av_push (&r->av, flag);
    av_pushf (&r->av, "%d", r->req->cpus_per_task);
}

/* ---- Slurm */

static void slurm_mem (struct render *r)
{
    if (r->req->has_memory_cap && r->caps->memcap == MEMCAP_ENFORCED)
        av_pushf (&r->av, "--mem=%lldM", (long long)r->req->memory_cap);
}

static int slurm_unplaced (struct render *r, berth_error_t *err)
{
    const struct machine_parallel *par = r->par;
    const struct launch_request *q = r->req;
    int max = par->max_mpi_tasks_per_node;

    if (check_tasks_per_node (r, r->alloc_nodes, 0, false, err) < 0)
        return -1;
    push_exe (r);
    push_cpus_per_task (r, "-c");
    av_push (&r->av, "-N");
    av_pushf (&r->av, "%d", ceil_div (q->ntasks, max));
    av_push (&r->av, "-n");
    av_pushf (&r->av, "%d", q->ntasks);
    if (q->gpus_per_task > 0) {
        av_push (&r->av, par->gpus_per_task_flag ? par->gpus_per_task_flag
                                                 : "--gpus-per-task");
        av_pushf (&r->av, "%d", q->gpus_per_task);
    }
    push_bind (r, "--cpu-bind", par->cpu_bind, false);
    push_bind (r, "--gpu-bind", par->gpu_bind, false);
    push_bind (r, "--mem-bind", par->mem_bind, false);
    if (par->distribution) {
        av_push (&r->av, "-m");
        av_push (&r->av, par->distribution);
    }
    else if (par->placement) {
        av_push (&r->av, "-m");
        av_pushf (&r->av, "%s=%d", par->placement, max);
    }
    slurm_mem (r);
    return 0;
}

/* A mask list restarts on every node, so every node's k-th task must get the
 * same cores as the first node's k-th task. */
static int slurm_same_masks (const struct render *r, const struct split *s,
                             berth_error_t *err)
{
    const struct placement *p = r->req->placement;
    for (int t = 1, first = 0; t < r->req->ntasks; t++) {
        if (s->node[t] != s->node[t - 1])
            first = t;
        int local = t - first;
        if (s->node[t] == 0)
            continue;
        char *a = hexmask_dup (s->cores[local], s->per);
        char *b = hexmask_dup (s->cores[t], s->per);
        bool same = a && b && strcmp (a, b) == 0;
        free (a);
        free (b);
        if (same)
            continue;
        char *ra = ranges_dup (s->cores[local], s->per);
        char *rb = ranges_dup (s->cores[t], s->per);
        errprintf_code (err, "render",
                        "this Slurm (%s) binds with one mask list that restarts on "
                        "every node, but the placement gives task %d on node %s "
                        "cores %s and task %d on node %s cores %s; give every node "
                        "the same core ids", r->caps->desc, local,
                        p->nodes[0].name, ra ? ra : "?", local,
                        p->nodes[s->node[t]].name, rb ? rb : "?");
        free (ra);
        free (rb);
        return -1;
    }
    return 0;
}

static void slurm_mask_list (struct render *r, const struct split *s)
{
    int tpn = 0;    /* tasks on the first node: the list every node repeats */
    while (tpn < r->req->ntasks && s->node[tpn] == 0)
        tpn++;
    char *out = NULL;
    size_t len;
    FILE *f = open_memstream (&out, &len);
    if (!f) {
        r->av.oom = true;
        return;
    }
    fputs ("--cpu-bind=mask_cpu:", f);
    for (int t = 0; t < tpn; t++) {
        char *m = hexmask_dup (s->cores[t], s->per);
        fprintf (f, "%s%s", t ? "," : "", m ? m : "");
        if (!m)
            r->av.oom = true;
        free (m);
    }
    if (fclose (f) != 0) {
        free (out);
        out = NULL;
    }
    av_add (&r->av, out);
}

/* srun takes one argument of at most 128 KiB (MAX_ARG_STRLEN). */
#define ARG_MAX_ONE (120 * 1024)

/* "-m arbitrary -w a,a,a,b": task t runs on the t-th name. */
static int slurm_task_nodes (struct render *r, const struct split *s,
                             berth_error_t *err)
{
    const struct placement *p = r->req->placement;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&out, &len);
    if (!f) {
        r->av.oom = true;
        return 0;
    }
    for (int t = 0; t < r->req->ntasks; t++)
        fprintf (f, "%s%s", t ? "," : "", p->nodes[s->node[t]].name);
    if (fclose (f) != 0) {
        free (out);
        r->av.oom = true;
        return 0;
    }
    if (len > ARG_MAX_ONE) {
        free (out);
        return errprintf_code (err, "render",
                               "the placement spreads %d tasks unevenly over %d "
                               "nodes: srun's node list, one name a task, would "
                               "be %zu bytes, above the %d an argument may hold; "
                               "place the step evenly", r->req->ntasks,
                               p->nnodes, len, ARG_MAX_ONE);
    }
    av_push (&r->av, "-m");
    av_push (&r->av, "arbitrary");
    av_push (&r->av, "-w");
    av_add (&r->av, out);
    return 0;
}

static int slurm_placed (struct render *r, berth_error_t *err)
{
    const struct machine_parallel *par = r->par;
    const struct launch_request *q = r->req;
    const struct placement *p = q->placement;
    bool binding = r->caps->placement == PLACEMENT_CPU_BINDING;
    struct split s = { 0 };

    if (r->caps->placement == PLACEMENT_NONE)
        return no_placement (r, err);
    /* Where srun picks the cores, nodes that hold different numbers of tasks
     * are named task by task (-m arbitrary); a mask list cannot follow. */
    bool uneven = !binding && names_nodes (p)
                  && placement_uneven_tasks (p, q->ntasks, q->cpus_per_task);
    if ((!uneven && check_tasks_per_node (r, p->nnodes, 0, true, err) < 0)
        || (uneven ? split_as (r, SPLIT_BY_CORES, &s, err) : split (r, &s, err)) < 0)
        return -1;
    int most = 0;
    for (int t = 0, here = 0; uneven && t < q->ntasks; t++) {
        here = t && s.node[t] == s.node[t - 1] ? here + 1 : 1;
        most = here > most ? here : most;
    }
    if (uneven && check_tasks_per_node (r, p->nnodes, most, true, err) < 0) {
        split_free (&s);
        return -1;
    }
    if (binding && p->gpus > 0) {
        split_free (&s);
        return errprintf_code (err, "render",
                               "this Slurm (%s) cannot give a step part of a node's "
                               "GPUs, and the placement has %d GPUs: place GPU steps "
                               "only where Slurm is 20.11.3 or newer", r->caps->desc,
                               p->gpus);
    }
    if (binding && slurm_same_masks (r, &s, err) < 0) {
        split_free (&s);
        return -1;
    }
    push_exe (r);
    push_cpus_per_task (r, "-c");
    av_push (&r->av, "-N");
    av_pushf (&r->av, "%d", p->nnodes);
    av_push (&r->av, "-n");
    av_pushf (&r->av, "%d", q->ntasks);
    if (uneven) {
        if (slurm_task_nodes (r, &s, err) < 0) {
            split_free (&s);
            return -1;
        }
    }
    else if (names_nodes (p)) {
        av_push (&r->av, "-w");
        av_add (&r->av, node_names (p));
    }
    if (binding)
        slurm_mask_list (r, &s);
    else {
        /* Saying nothing about GPUs claims them all: always say "none". */
        av_push (&r->av, "--exact");
        if (p->gpus > 0)
            av_pushf (&r->av, "--gpus=%d", p->gpus);
        else
            av_push (&r->av, "--gres=none");
    }
    if (par->cpu_bind && !binding && !names_resources (par->cpu_bind))
        push_bind (r, "--cpu-bind", par->cpu_bind, false);
    /* measured: --gpu-bind=none beside --gpus=1 left launches with no GPU */
    if (par->gpu_bind && p->gpus > 0 && strcmp (par->gpu_bind, "none") != 0
        && !names_resources (par->gpu_bind))
        push_bind (r, "--gpu-bind", par->gpu_bind, false);
    if (par->mem_bind && !names_resources (par->mem_bind))
        push_bind (r, "--mem-bind", par->mem_bind, false);
    slurm_mem (r);
    r->unset_slurm_env = true;
    split_free (&s);
    return 0;
}

/* ---- PBS */

/* Device name number `id` of the machine: the items of a gpu_bind list
 * (Aurora's tiles), else 0..gpus_per_node-1. */
static int pbs_device_count (const struct machine_parallel *par)
{
    const char *l = par->gpu_bind;
    if (!l || strncmp (l, "list:", 5) != 0)
        return par->gpus_per_node;
    int n = 1;
    for (l += 5; *l; l++)
        n += *l == ':';
    return n;
}

static void pbs_device_name (const struct machine_parallel *par, int id, FILE *f)
{
    const char *l = par->gpu_bind;
    if (!l || strncmp (l, "list:", 5) != 0) {
        fprintf (f, "%d", id);
        return;
    }
    for (l += 5; id > 0; id--)
        l = strchr (l, ':') + 1;
    fprintf (f, "%.*s", (int)strcspn (l, ":"), l);
}

/* "node a GPU ids 0-1, node b GPU ids 2-3" for a message. */
static char *node_gpu_text (const struct placement *p)
{
    char *s = NULL;
    size_t len;
    FILE *f = open_memstream (&s, &len);
    if (!f)
        return NULL;
    for (int i = 0; i < p->nnodes; i++) {
        int n;
        const int *ids = placement_node_gpus (p, i, &n);
        char *list = ranges_dup (ids, n);
        fprintf (f, "%snode %s GPU ids %s", i ? ", " : "",
                 placement_node_label (p, i), n && list ? list : "(none)");
        free (list);
    }
    if (fclose (f) != 0) {
        free (s);
        return NULL;
    }
    return s;
}

/* The `--env VAR=VALUE` value that isolates the placement's GPUs, or NULL
 * (and 0) when the placement has no GPUs and the machine (with its compiler
 * section) none to hide or no variable to hide them with. */
static int pbs_gpu_env (const struct render *r, char **item, berth_error_t *err)
{
    const struct machine_parallel *par = r->par;
    const struct placement *p = r->req->placement;
    const char *var = par->gpu_visible_devices_var;
    int ndev = pbs_device_count (par);

    *item = NULL;
    if (p->gpus == 0 && (!var || par->gpus_per_node < 1))
        return 0;
    if (p->gpus > 0 && !var)
        return errprintf_code (err, "render",
                               "the placement has %d GPUs but this machine sets no "
                               "gpu_visible_devices_var to give a launch its GPUs; set "
                               "it in the machine's [parallel] section (e.g. "
                               "ZE_AFFINITY_MASK or CUDA_VISIBLE_DEVICES)", p->gpus);
    if (p->gpus > 0 && !p->gpu_ids && !p->node_gpu_ids)
        return errprintf_code (err, "render",
                               "the placement has %d GPUs but no GPU ids: a PBS launch "
                               "needs the ids of the free GPUs to set %s", p->gpus, var);
    /* one list for every node longer than a node's share: the ids of
     * several nodes written as one list, and every node would see them all */
    int share = ceil_div (p->gpus, p->nnodes);
    if (!p->node_gpu_ids && p->nnodes > 1 && p->ngpu_ids > share)
        return errprintf_code (err, "render",
                               "the placement lists %d GPU ids for %d GPUs on %d nodes "
                               "(at most %d on a node), but PALS's --env sets one %s "
                               "for every node, so each node would see all %d: give "
                               "each node its own ids (--place-gpu-ids 'I,J;K,L', or "
                               "gpu_ids as one list per node)", p->ngpu_ids, p->gpus,
                               p->nnodes, share, var, p->ngpu_ids);
    if (!placement_gpu_ids_uniform (p)) {
        char *text = node_gpu_text (p);
        errprintf_code (err, "render",
                        "PALS's --env sets one %s for every node of a launch, but "
                        "the placement gives %s: place the same GPU ids on every "
                        "node, or launch each node on its own", var,
                        text ? text : "its nodes different GPU ids");
        free (text);
        return -1;
    }
    int nids;
    const int *ids = placement_node_gpus (p, 0, &nids);
    for (int i = 0; i < nids; i++)
        if (ids[i] >= ndev)
            return errprintf_code (err, "render",
                                   "GPU id %d is out of range: this machine has %d GPU "
                                   "devices per node (ids 0 to %d)", ids[i], ndev,
                                   ndev - 1);
    size_t len;
    FILE *f = open_memstream (item, &len);
    if (!f)
        return errprintf_code (err, "render", "out of memory rendering %s", var);
    fprintf (f, "%s=", var);
    for (int i = 0; i < nids; i++) {
        if (i)
            fputc (',', f);
        pbs_device_name (par, ids[i], f);
    }
    if (fclose (f) != 0) {
        free (*item);
        *item = NULL;
        return errprintf_code (err, "render", "out of memory rendering %s", var);
    }
    return 0;
}

static void pbs_base (struct render *r, int ppn)
{
    const struct machine_parallel *par = r->par;
    push_exe (r);
    av_push (&r->av, "-n");
    av_pushf (&r->av, "%d", r->req->ntasks);
    av_push (&r->av, "--ppn");
    av_pushf (&r->av, "%d", ppn);
    push_cpus_per_task (r, par->cpus_per_task_flag ? par->cpus_per_task_flag : "-c");
}

static int pbs_unplaced (struct render *r, berth_error_t *err)
{
    const struct machine_parallel *par = r->par;
    int n = r->req->ntasks, max = par->max_mpi_tasks_per_node;

    if (check_tasks_per_node (r, r->alloc_nodes, 0, false, err) < 0)
        return -1;
    pbs_base (r, n < max ? n : max);
    if (par->gpus_per_task_flag && r->req->gpus_per_task > 0) {
        av_push (&r->av, par->gpus_per_task_flag);
        av_pushf (&r->av, "%d", r->req->gpus_per_task);
    }
    push_bind (r, "--cpu-bind", par->cpu_bind, true);
    push_bind (r, "--gpu-bind", par->gpu_bind, true);
    push_bind (r, "--mem-bind", par->mem_bind, true);
    return 0;
}

static int pbs_placed (struct render *r, berth_error_t *err)
{
    const struct machine_parallel *par = r->par;
    const struct placement *p = r->req->placement;
    struct split s = { 0 };
    char *env = NULL;

    if (r->caps->placement == PLACEMENT_NONE)
        return no_placement (r, err);
    if (check_tasks_per_node (r, p->nnodes, 0, true, err) < 0
        || pbs_gpu_env (r, &env, err) < 0)
        return -1;
    if (split (r, &s, err) < 0) {
        free (env);
        return -1;
    }
    pbs_base (r, ceil_div (r->req->ntasks, p->nnodes));
    if (names_nodes (p)) {
        av_push (&r->av, "--hosts");
        av_add (&r->av, node_names (p));
    }
    av_push (&r->av, "--cpu-bind");
    char *list = NULL;
    size_t len;
    FILE *f = open_memstream (&list, &len);
    if (f) {
        fputs ("list", f);
        for (int t = 0; t < r->req->ntasks; t++)
            for (int k = 0; k < s.per; k++)
                fprintf (f, "%c%d", k ? ',' : ':', s.cores[t][k]);
        if (fclose (f) != 0) {
            free (list);
            list = NULL;
        }
    }
    av_add (&r->av, list);
    /* cpu_bind and gpu_bind always give way to the placement's own lists */
    if (par->mem_bind && !names_resources (par->mem_bind))
        push_bind (r, "--mem-bind", par->mem_bind, true);
    if (env) {
        av_push (&r->av, "--env");    /* never --env-remove: PALS rejects it */
        av_add (&r->av, env);
    }
    split_free (&s);
    return 0;
}

/* ---- single_node */

/* The MPI launcher and its task count. Cores per rank are said the way the
 * installed MPI says them (measured with Open MPI 4.1.4 and MPICH 4.0.2's
 * hydra): Open MPI's -c is the process count, so a rank's cores are
 * --map-by slot:PE=C (with --bind-to core); hydra binds -bind-to core:C.
 * With an unknown MPI they are left to its default binding. */
static void single_args (struct render *r)
{
    int c = r->req->cpus_per_task;
    push_exe (r);
    av_push (&r->av, "-n");
    av_pushf (&r->av, "%d", r->req->ntasks);
    if (c < 1)
        return;
    if (r->caps->mpi == MPI_OPENMPI) {
        /* two words: Open MPI 4.1 refuses "--map-by=..." */
        av_push (&r->av, "--map-by");
        av_pushf (&r->av, "slot:PE=%d", c);
        av_push (&r->av, "--bind-to");
        av_push (&r->av, "core");
    }
    else if (r->caps->mpi == MPI_MPICH) {
        av_push (&r->av, "-bind-to");
        av_pushf (&r->av, "core:%d", c);
    }
}

/* Placed: taskset confines the launcher and its ranks to the placement's
 * cores. Both MPIs' own core binding ignores the set it was started in
 * (measured: under taskset -c 1, Open MPI bound rank 0 to core 0, hydra's
 * -bind-to core:1 too), so Open MPI is told --bind-to none (its ranks share
 * the set) and hydra is given each rank's own cores (-bind-to user:, OS ids:
 * measured to bind exactly those). */
static int single_placed (struct render *r, berth_error_t *err)
{
    const struct placement *p = r->req->placement;
    struct split s = { 0 };

    if (r->caps->placement == PLACEMENT_NONE)
        return no_placement (r, err);
    if (p->nnodes > 1)
        return errprintf_code (err, "render",
                               "a single_node machine runs on one node, but the "
                               "placement names %d nodes", p->nnodes);
    if (p->gpus > 0)
        return errprintf_code (err, "render",
                               "a single_node launch cannot be confined to %d GPUs "
                               "(taskset binds cores only); place it without GPUs",
                               p->gpus);
    if (split (r, &s, err) < 0)
        return -1;
    av_push (&r->av, "taskset");
    av_push (&r->av, "-c");
    av_add (&r->av, ranges_dup (p->nodes[0].cores, p->nodes[0].ncores));
    if (r->req->single_process) {
        r->exe_start = r->av.n;   /* no launcher: the program follows */
        split_free (&s);
        return 0;
    }
    push_exe (r);
    av_push (&r->av, "-n");
    av_pushf (&r->av, "%d", r->req->ntasks);
    if (r->caps->mpi == MPI_OPENMPI) {
        av_push (&r->av, "--bind-to");
        av_push (&r->av, "none");
    }
    else if (r->caps->mpi == MPI_MPICH) {
        char *list = NULL;
        size_t len;
        FILE *f = open_memstream (&list, &len);
        if (f) {
            fputs ("user:", f);
            for (int t = 0; t < r->req->ntasks; t++)
                for (int k = 0; k < s.per; k++)
                    fprintf (f, "%s%d", k ? "+" : t ? "," : "", s.cores[t][k]);
            if (fclose (f) != 0) {
                free (list);
                list = NULL;
            }
        }
        av_push (&r->av, "-bind-to");
        av_add (&r->av, list);
    }
    split_free (&s);
    return 0;
}

/* ---- Checks and assembly */

static int check_request (const struct machine_parallel *par, int alloc_nodes,
                          const struct launch_request *q, berth_error_t *err)
{
    if (!par || !q)
        return errprintf_code (err, "render", "nothing to render: no machine or request");
    if (!q->argv || !q->argv[0])
        return errprintf_code (err, "render",
                               "nothing to launch: the program argv is empty");
    if (par->system == BERTH_SYSTEM_LOGIN)
        return errprintf_code (err, "render",
                               "MPI is not allowed on a login node: a launch of %d "
                               "tasks cannot be rendered here; run it inside a batch "
                               "allocation", q->ntasks);
    if (q->ntasks < 1)
        return errprintf_code (err, "render",
                               "ntasks %d: a launch needs at least 1 task", q->ntasks);
    if (q->single_process && q->ntasks != 1)
        return errprintf_code (err, "render",
                               "a step that is not MPI is one process, but %d tasks "
                               "were asked for", q->ntasks);
    if (q->cpus_per_task < 0)
        return errprintf_code (err, "render", "cpus per task %d is negative",
                               q->cpus_per_task);
    if (q->gpus_per_task < 0)
        return errprintf_code (err, "render", "GPUs per task %d is negative",
                               q->gpus_per_task);
    if (q->has_memory_cap && q->memory_cap <= 0)
        return errprintf_code (err, "render",
                               "memory cap %lld MB: a cap must be a positive number "
                               "of MB per node", (long long)q->memory_cap);
    if (!q->placement && alloc_nodes < 1)
        return errprintf_code (err, "render",
                               "the allocation has %d nodes: at least 1 is needed",
                               alloc_nodes);
    if (!par->parallel_executable || !par->parallel_executable[0])
        return errprintf_code (err, "render",
                               "parallel_executable is not set for this %s machine; "
                               "set it in the machine's [parallel] section",
                               sysname (par->system));
    if (q->placement && placement_validate (q->placement, err) < 0) {
        if (err)
            err->code = "render";
        return -1;
    }
    return 0;
}

/* Never a flag twice in one launcher's arguments (--env repeats by design). */
static int check_flags_once (const struct render *r, int end, berth_error_t *err)
{
    char *const *v = r->av.v;
    for (int i = r->exe_start; i < end; i++) {
        if (v[i][0] != '-' || strcmp (v[i], "--env") == 0)
            continue;
        size_t ni = strcspn (v[i], "=");
        for (int j = r->exe_start; j < i; j++)
            if (v[j][0] == '-' && strcspn (v[j], "=") == ni
                && strncmp (v[i], v[j], ni) == 0)
                return errprintf_code (err, "render",
                                       "the launch would carry %.*s twice (\"%s\" and "
                                       "\"%s\"); remove it from parallel_executable "
                                       "\"%s\" or from the binding options", (int)ni,
                                       v[i], v[j], v[i], r->par->parallel_executable);
    }
    return 0;
}

int render_launch (const struct machine_parallel *par, int alloc_nodes,
                   const struct launcher_caps *caps,
                   const struct launch_request *req, struct launch *out,
                   berth_error_t *err)
{
    static const struct launcher_caps nocaps = {
        .placement = PLACEMENT_NONE, .memcap = MEMCAP_NONE, .slurm_major = -1,
        .slurm_minor = -1, .slurm_micro = -1, .desc = "none",
    };
    struct render r = { .par = par, .caps = caps ? caps : &nocaps, .req = req,
                        .alloc_nodes = alloc_nodes };
    int rc;

    if (!out)
        return errprintf_code (err, "render", "nowhere to put the launch");
    if (check_request (par, alloc_nodes, req, err) < 0)
        return -1;
    switch (par->system) {
    case BERTH_SYSTEM_SLURM:
        rc = req->placement ? slurm_placed (&r, err) : slurm_unplaced (&r, err);
        break;
    case BERTH_SYSTEM_PBS:
        rc = req->placement ? pbs_placed (&r, err) : pbs_unplaced (&r, err);
        break;
    case BERTH_SYSTEM_SINGLE_NODE:
        rc = 0;
        if (req->placement)
            rc = single_placed (&r, err);
        else if (req->single_process)
            r.exe_start = r.av.n;   /* not MPI: the program alone */
        else
            single_args (&r);
        break;
    default:
        rc = errprintf_code (err, "render", "unknown system %d", (int)par->system);
        break;
    }
    if (rc == 0 && !r.av.oom)
        rc = check_flags_once (&r, r.av.n, err);
    for (char *const *a = req->argv; rc == 0 && *a; a++)
        av_push (&r.av, *a);

    struct launch l = { 0 };
    if (rc == 0 && r.unset_slurm_env) {
        int n = (int)(sizeof (slurm_placed_unset) / sizeof (slurm_placed_unset[0]));
        if (!(l.env_unset = calloc ((size_t)n, sizeof (char *))))
            r.av.oom = true;
        for (int i = 0; l.env_unset && i < n; i++, l.n_unset++)
            if (!(l.env_unset[i] = strdup (slurm_placed_unset[i])))
                r.av.oom = true;
    }
    if (rc == 0 && r.av.oom)
        rc = errprintf_code (err, "render", "out of memory rendering the launch");
    l.argv = r.av.v;
    l.argc = r.av.n;
    if (rc < 0) {
        launch_free (&l);
        return -1;
    }
    *out = l;
    return 0;
}

void launch_free (struct launch *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->argc && l->argv; i++)
        free (l->argv[i]);
    free (l->argv);
    for (int i = 0; i < l->n_unset; i++)
        free (l->env_unset[i]);
    free (l->env_unset);
    env_set_free (l->env_set, l->n_set);
    memset (l, 0, sizeof (*l));
}

int env_set_append (struct env_set_item **env, int *n, const char *name,
                    const char *value)
{
    struct env_set_item *v = realloc (*env, (size_t) (*n + 1) * sizeof (*v));
    if (!v)
        return -1;
    *env = v;
    v[*n].name = strdup (name);
    v[*n].value = strdup (value);
    if (!v[*n].name || !v[*n].value) {
        free (v[*n].name);
        free (v[*n].value);
        return -1;
    }
    (*n)++;
    return 0;
}

void env_set_free (struct env_set_item *env, int n)
{
    for (int i = 0; i < n; i++) {
        free (env[i].name);
        free (env[i].value);
    }
    free (env);
}

char *render_id_list (const int *ids, int n)
{
    struct text_buf b = { 0 };
    text_buf_put (&b, "", 0);
    for (int i = 0; i < n; i++) {
        if (i)
            text_buf_put (&b, ",", 1);
        text_buf_int (&b, ids[i]);
    }
    if (b.bad) {
        free (b.s);
        return NULL;
    }
    return b.s;
}

int render_lease_env (const struct placement *p, const char *lease,
                      long long memory_mb, const char *gpu_var,
                      struct env_set_item **env, int *n)
{
    struct text_buf nodes = { 0 };
    text_buf_put (&nodes, "", 0);
    for (int i = 0; i < p->nnodes; i++) {
        if (i)
            text_buf_put (&nodes, ",", 1);
        text_buf_puts (&nodes, p->nodes[i].name);
    }
    char *gpus = render_id_list (p->gpu_ids, p->ngpu_ids);
    const struct placement_node *n0 = p->nnodes > 0 ? &p->nodes[0] : NULL;
    int clen = n0 ? idset_format (n0->cores, n0->ncores, NULL, 0) : 0;
    char *cores = clen >= 0 ? malloc ((size_t) clen + 1) : NULL;
    if (cores) {
        cores[0] = '\0';
        if (n0)
            idset_format (n0->cores, n0->ncores, cores, (size_t) clen + 1);
    }
    char mem[24];
    snprintf (mem, sizeof (mem), "%lld", memory_mb);
    int rc = -1;
    if (!nodes.bad && gpus && cores
        && env_set_append (env, n, "BERTH_LEASE", lease) == 0
        && env_set_append (env, n, "BERTH_NODES", nodes.s) == 0
        && env_set_append (env, n, "BERTH_CORES", cores) == 0
        && env_set_append (env, n, "BERTH_GPUS", gpus) == 0
        && (memory_mb < 0 || env_set_append (env, n, "BERTH_MEMORY_MB", mem) == 0)
        && (!gpu_var || env_set_append (env, n, gpu_var, gpus) == 0))
        rc = 0;
    free (nodes.s);
    free (gpus);
    free (cores);
    return rc;
}

char *render_shell_quote (char *const *argv)
{
    struct text_buf b = { 0 };
    text_buf_put (&b, "", 0);     /* "" for no words, not NULL */
    for (int i = 0; argv && argv[i]; i++) {
        if (i)
            text_buf_put (&b, " ", 1);
        text_buf_shell_word (&b, argv[i], false);
    }
    if (b.bad) {
        free (b.s);
        return NULL;
    }
    return b.s;
}
