/* SPDX-License-Identifier: MIT */
/* Which core ids are physical cores: read from sysfs (the root is a parameter
 * so tests can feed recorded topologies). Hardware threads of one core are
 * named by the core's lowest sibling id. */
#ifndef BERTH_TOPOLOGY_H
#define BERTH_TOPOLOGY_H

#include "error.h"

/* The physical cores among the given usable hardware-thread ids (as from
 * sched_getaffinity), each named by its lowest usable sibling id found in
 * <sysfs_root>/devices/system/cpu/cpu<N>/topology/thread_siblings_list
 * (sysfs_root NULL means "/sys"); a sibling this process may not use never
 * names a core, so every name can be bound to. An unreadable siblings file
 * makes the id its own core. Result sorted ascending; caller frees *cores. */
int topology_physical_cores (const char *sysfs_root, const int *usable_ids,
                             int nusable, int **cores, int *ncores,
                             berth_error_t *err);

/* This process's usable hardware-thread ids (sched_getaffinity). */
int topology_affinity_ids (int **ids, int *count, berth_error_t *err);

/* Reconcile detected physical cores with the configured cores_per_node
 * (0 = unset) so: less than half -> number from zero
 * with a warning; fewer -> use them with a warning; more -> the first
 * cores_per_node. Writes any warning (one line, no newline) to warn (may be
 * left empty). Caller frees *ids. */
int topology_usable_core_ids (const int *physical, int nphysical,
                              int cores_per_node, int **ids, int *count,
                              char *warn, size_t warnsize, berth_error_t *err);

#endif
