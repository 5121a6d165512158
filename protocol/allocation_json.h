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
/* The same but "nodes": what does not grow with the allocation (the node
 * list compressed); and node i's entry of "nodes". */
json_t *allocation_head_json (const struct allocation *a);
json_t *allocation_node_json (const struct allocation *a, int i);

/* The nodes as the allocation event logs them: a run of nodes whose names
 * follow one another (a host list range) with the same cores and GPUs is
 * one entry {names, count, cores, ncores, gpus}; a node alone is {name,
 * cores, ncores, gpus}. 10,000 like nodes are one short entry, not 600 KB.
 * NULL only when out of memory. */
json_t *allocation_node_runs (const struct allocation *a);

#endif
