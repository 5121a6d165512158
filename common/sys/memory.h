/* SPDX-License-Identifier: MIT */
/* Memory actually usable on this node: min(cgroup limit, MemAvailable). The
 * roots are parameters so tests can feed recorded files. */
#ifndef BERTH_MEMORY_H
#define BERTH_MEMORY_H

#include <stdint.h>

#include "error.h"

struct memory_facts {
    int64_t mem_total_mb;      /* /proc/meminfo MemTotal, -1 unknown */
    int64_t mem_available_mb;  /* MemAvailable, -1 unknown */
    int64_t cgroup_limit_mb;   /* -1: none or unlimited */
    int64_t credited_mb;       /* min of the known figures, -1 unknown */
};

/* proc_root NULL means "/proc", cgroup_root NULL means "/sys/fs/cgroup".
 * The process's cgroup is found from <proc_root>/self/cgroup (v2 "0::/path",
 * v1 "N:memory:/path"); v2 reads memory.max, v1 memory.limit_in_bytes; "max"
 * or >= 2^62 bytes is unlimited. */
int memory_read_facts (const char *proc_root, const char *cgroup_root,
                       struct memory_facts *facts, berth_error_t *err);

#endif
