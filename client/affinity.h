/* SPDX-License-Identifier: MIT */
/* The CPU set of a local step: its placed core ids are physical cores
 * (named by their lowest hardware thread); the step gets every hardware
 * thread of those cores that this process may use. */
#ifndef BERTH_CLIENT_AFFINITY_H
#define BERTH_CLIENT_AFFINITY_H

#include "error.h"

/* Hardware threads of cores (their siblings from
 * <sysfs_root>/devices/system/cpu/cpu<N>/topology/thread_siblings_list,
 * sysfs_root NULL: "/sys"; an unreadable list: the id alone), kept to those
 * in usable (count nusable). Result sorted, caller frees *threads. An empty
 * result is an error naming the cores and the usable threads. */
int affinity_threads (const char *sysfs_root, const int *cores, int ncores,
                      const int *usable, int nusable, int **threads,
                      int *nthreads, berth_error_t *err);

#endif
