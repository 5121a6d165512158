/* SPDX-License-Identifier: MIT */
/* Sizing a step from its problem size:
 * a cell count in, the target and minimum GPUs or cores out, in the
 * request's terms (gpus/min_gpus, or ntasks/min_tasks with one core each).
 * Pure logic. */
#ifndef BERTH_SIZING_H
#define BERTH_SIZING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SIZING_GOAL_CELLS_PER_GPU 8000
#define SIZING_MAX_CELLS_PER_GPU 80000
#define SIZING_MAX_CELLS ((int64_t) 1 << 53)   /* exact in a double, far above any mesh */

enum sizing_resource { SIZING_GPUS, SIZING_CORES };

struct sizing_request {
    int64_t cells;               /* >= 1 */
    enum sizing_resource resource;
    int64_t goal_cells_per_unit; /* cells per GPU or core at the target, >= 1 */
    int64_t max_cells_per_unit;  /* most cells one unit can hold: sets the minimum */
};

struct sizing_result {
    enum sizing_resource resource;
    int target;                  /* ceil(cells / goal), at least min */
    int min;                     /* ceil(cells / max) */
};

/* Target and minimum for the request. Errors (nothing written to out): a
 * cell count below 1 or above SIZING_MAX_CELLS, per-unit figures below 1, a
 * goal above the maximum (the target would be below the minimum: the figures
 * contradict each other), or a count above the protocol's 1048576. */
int sizing_compute (const struct sizing_request *req, struct sizing_result *out,
                    berth_error_t *err);

/* "gpus" or "cores". */
const char *sizing_resource_name (enum sizing_resource r);

/* The request options for berth run / acquire: "--gpus 13 --min-gpus 2" or
 * "-n 40 --min-tasks 4". Returns 0, or -1 when buf is too small. */
int sizing_options (const struct sizing_result *r, char *buf, size_t size);

#endif
