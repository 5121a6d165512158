/* SPDX-License-Identifier: MIT */
/* Whether a launch can be asked of a machine or an allocation at all: the
 * checks berthd makes of a request (step_cut_to_fit, with every minimum equal
 * to its target so nothing is cut) and of a placement against one node's
 * figures. berthd's render op checks against its allocation; the stateless
 * commands (berth render, berth size) against the machine's figures for the
 * compiler section in force. Pure. */
#ifndef BERTH_LAUNCH_FIT_H
#define BERTH_LAUNCH_FIT_H

#include "error.h"
#include "machine.h"
#include "render.h"
#include "step.h"

/* The capacity of `nodes` nodes of machine m (nodes < 1: as many as asked
 * for); a figure the machine leaves unknown does not limit. */
void launch_fit_machine_capacity (const struct machine *m, int nodes,
                                  struct step_capacity *cap);

/* A launch request against cap: its tasks, cores per task and GPUs as a step
 * asking exactly that, and its placement's nodes (cores, GPUs, GPU ids) each
 * against one node. Errors (code "render") give the figures. */
int launch_fit (const struct launch_request *q, const struct step_capacity *cap,
                berth_error_t *err);

/* The placement's nodes alone (launch_fit's first check). */
int launch_fit_placement (const struct placement *p, const struct step_capacity *cap,
                          berth_error_t *err);

/* As step_cut_to_fit with nothing cut (every minimum its target). */
int launch_fit_step (const struct step_request *r, const struct step_capacity *cap,
                     berth_error_t *err);

/* Prefix err with "machine NAME, compiler section [SECTION]: " (the text a
 * stateless command refuses with). Returns -1. */
int launch_fit_blame_machine (const struct machine *m, berth_error_t *err);

#endif
