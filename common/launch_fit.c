/* SPDX-License-Identifier: MIT */
/* Checking a launch or step against what a node and the nodes hold, with
 * berthd's own rules (step_cut_to_fit). */
#include <stdio.h>
#include <string.h>

#include "launch_fit.h"

/* A figure that is not known limits nothing. */
#define UNLIMITED (1 << 24)

void launch_fit_machine_capacity (const struct machine *m, int nodes,
                                  struct step_capacity *cap)
{
    const struct machine_parallel *p = &m->par;
    cap->nodes = nodes >= 1 ? nodes : UNLIMITED;
    cap->cores_per_node = p->cores_per_node > 0 ? p->cores_per_node : UNLIMITED;
    cap->gpus_per_node = p->gpus_per_node > 0 ? p->gpus_per_node : 0;
    cap->memory_per_node = p->memory_per_node;
    cap->mpi_allowed = p->system != BERTH_SYSTEM_LOGIN;
}

int launch_fit_step (const struct step_request *r, const struct step_capacity *cap,
                     berth_error_t *err)
{
    struct step_request exact = *r;
    struct step_shape shape;
    /* a preview asks for exactly this: nothing is cut to fit */
    if (exact.ntasks != STEP_UNSET && exact.min_tasks == STEP_UNSET)
        exact.min_tasks = exact.ntasks;
    if (exact.cpus_per_task != STEP_UNSET && exact.min_cpus_per_task == STEP_UNSET)
        exact.min_cpus_per_task = exact.cpus_per_task;
    if (exact.cores != STEP_UNSET && exact.min_cores == STEP_UNSET)
        exact.min_cores = exact.cores;
    if (exact.gpus != STEP_UNSET && exact.min_gpus == STEP_UNSET)
        exact.min_gpus = exact.gpus;
    if (step_cut_to_fit (&exact, cap, &shape, NULL, 0, err) == 0)
        return 0;
    if (err)
        err->code = "render";
    return -1;
}

int launch_fit_placement (const struct placement *p, const struct step_capacity *cap,
                          berth_error_t *err)
{
    for (int i = 0; i < p->nnodes; i++) {
        const char *name = placement_node_label (p, i);
        int nids;
        const int *ids = placement_node_gpus (p, i, &nids);
        if (p->nodes[i].ncores > cap->cores_per_node)
            return errprintf_code (err, "render",
                                   "placement node %s has %d cores, but a node holds %d",
                                   name, p->nodes[i].ncores, cap->cores_per_node);
        /* GPUs on this node: its ids, else its share of the total */
        int here = p->node_gpu_ids ? nids : (p->gpus + p->nnodes - 1) / p->nnodes;
        if (here > cap->gpus_per_node)
            return errprintf_code (err, "render",
                                   cap->gpus_per_node == 0
                                   ? "placement gives node %s %d GPU%s, but a node has "
                                     "none (%d GPUs per node)"
                                   : "placement gives node %s %d GPU%s, but a node "
                                     "holds %d", name, here, here == 1 ? "" : "s",
                                   cap->gpus_per_node);
        for (int k = 0; k < nids; k++)
            if (ids[k] >= cap->gpus_per_node)
                return errprintf_code (err, "render",
                                       "placement node %s: GPU id %d is out of range: a "
                                       "node has %d GPUs (ids 0 to %d)", name, ids[k],
                                       cap->gpus_per_node, cap->gpus_per_node - 1);
    }
    return 0;
}

int launch_fit (const struct launch_request *q, const struct step_capacity *cap,
                berth_error_t *err)
{
    struct step_request r;
    step_request_init (&r);
    struct step_capacity c = *cap;
    if (q->single_process)
        r.cores = q->cpus_per_task > 0 ? q->cpus_per_task : 1;
    else {
        r.ntasks = q->ntasks;
        if (q->cpus_per_task > 0)
            r.cpus_per_task = q->cpus_per_task;
    }
    if (q->placement) {
        c.nodes = q->placement->nnodes;
        r.gpus = q->placement->gpus;
        r.may_span_nodes = q->placement->nnodes > 1;
        if (launch_fit_placement (q->placement, cap, err) < 0)
            return -1;
    }
    else {
        long long g = q->gpus_per_task > 0 ? (long long)q->ntasks * q->gpus_per_task : 0;
        r.gpus = g > UNLIMITED ? UNLIMITED : (int)g;
    }
    if (q->single_process && !q->placement)
        r.may_span_nodes = 0;
    return launch_fit_step (&r, &c, err);
}

int launch_fit_blame_machine (const struct machine *m, berth_error_t *err)
{
    char section[300] = "parallel";
    if (m->compiler && machine_has_compiler_section (m, m->compiler)) {
        snprintf (section, sizeof (section), "parallel.%s", m->compiler);
        for (char *p = section; *p; p++)
            *p = *p == '-' ? '_' : *p;
    }
    return errprefix (err, "machine %s, compiler %s [%s]: ", m->name,
                      m->compiler ? m->compiler : "(none)", section);
}
