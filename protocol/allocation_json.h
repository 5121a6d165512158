/* SPDX-License-Identifier: MIT */
/* The allocation as JSON, as berthd sends it and the CLI prints it. */
#ifndef BERTH_ALLOCATION_JSON_H
#define BERTH_ALLOCATION_JSON_H

#include <jansson.h>

#include "allocation.h"

/* The view of `berth machine --allocation --json`: machine, system, job_id,
 * liveness, local_node, nodelist (compressed), nodes [{name, cores (id-set
 * text), ncores, gpus, memory_configured_mb, memory_credited_mb}], totals
 * {nodes, cores, gpus, memory_configured_mb, memory_credited_mb}, mpi_allowed,
 * warnings. Unknown figures are null. NULL only when out of memory. */
json_t *allocation_to_json (const struct allocation *a);

#endif
