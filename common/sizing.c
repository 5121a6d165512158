/* SPDX-License-Identifier: MIT */
/* Cells in, GPUs or cores out: the target from the goal per unit, the
 * minimum from the most one unit can hold. */
#include <stdio.h>

#include "sizing.h"

#define SIZING_MAX_COUNT (1 << 20)   /* the protocol's bound on counts */

const char *sizing_resource_name (enum sizing_resource r)
{
    return r == SIZING_GPUS ? "gpus" : "cores";
}

static int64_t ceil_div (int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

int sizing_compute (const struct sizing_request *req, struct sizing_result *out,
                    berth_error_t *err)
{
    const char *unit = req->resource == SIZING_GPUS ? "gpu" : "core";
    if (req->cells < 1 || req->cells > SIZING_MAX_CELLS)
        return errprintf (err, "the cell count must be from 1 to %lld, got %lld",
                          (long long) SIZING_MAX_CELLS, (long long) req->cells);
    if (req->goal_cells_per_unit < 1)
        return errprintf (err, "goal_cells_per_%s must be a positive number of "
                          "cells, got %lld", unit, (long long) req->goal_cells_per_unit);
    if (req->max_cells_per_unit < 1)
        return errprintf (err, "max_cells_per_%s must be a positive number of "
                          "cells, got %lld", unit, (long long) req->max_cells_per_unit);
    if (req->goal_cells_per_unit > req->max_cells_per_unit)
        return errprintf (err, "goal_cells_per_%s (%lld) is above max_cells_per_%s "
                          "(%lld): the goal must be at most what one %s can hold",
                          unit, (long long) req->goal_cells_per_unit, unit,
                          (long long) req->max_cells_per_unit, unit);
    int64_t target = ceil_div (req->cells, req->goal_cells_per_unit);
    int64_t min = ceil_div (req->cells, req->max_cells_per_unit);
    if (target > SIZING_MAX_COUNT)
        return errprintf (err, "%lld cells at %lld per %s need %lld %ss, over the "
                          "limit of %d a request may ask for; raise "
                          "goal_cells_per_%s", (long long) req->cells,
                          (long long) req->goal_cells_per_unit, unit,
                          (long long) target, unit, SIZING_MAX_COUNT, unit);
    out->resource = req->resource;
    out->target = (int) target;
    out->min = (int) min;     /* min <= target since goal <= max */
    return 0;
}

int sizing_options (const struct sizing_result *r, char *buf, size_t size)
{
    int n = r->resource == SIZING_GPUS
                ? snprintf (buf, size, "--gpus %d --min-gpus %d", r->target, r->min)
                : snprintf (buf, size, "-n %d --min-tasks %d", r->target, r->min);
    return n < 0 || (size_t) n >= size ? -1 : 0;
}
