/* SPDX-License-Identifier: MIT */
/* What `berth machine` shows: a machine's description and the live
 * allocation, as JSON, and the same printed for people. */
#ifndef BERTH_MACHINE_VIEW_H
#define BERTH_MACHINE_VIEW_H

#include <jansson.h>
#include <stdio.h>

#include "error.h"
#include "machine.h"

/* {machine, chosen_why, file, file_why, compiler, system, parallel{...},
 *  cores_per_node, gpus_per_node, memory_per_node, account_defaults,
 *  targets}. */
json_t *machine_view_json (struct machine *m, berth_error_t *err);

/* The allocation view (allocation_to_json plus placement_support and
 * memory_cap_support). Warnings go to stderr. Returns 0, or the exit status
 * for the failure described in err. */
int machine_view_allocation (struct machine *m, json_t **view,
                             berth_error_t *err);

void machine_view_print (json_t *view, FILE *f);
void machine_view_print_allocation (json_t *view, FILE *f);

#endif
