/* SPDX-License-Identifier: MIT */
/* GPUs on this node, found without loading any GPU runtime: NVIDIA under
 * /proc/driver/nvidia/gpus/<bus id>/information, AMD as kfd topology nodes
 * with a non-zero gpu_id. Roots are parameters for recorded trees in tests. */
#ifndef BERTH_GPUS_H
#define BERTH_GPUS_H

#include "error.h"

enum gpu_vendor { GPU_VENDOR_NONE, GPU_VENDOR_NVIDIA, GPU_VENDOR_AMD };

struct gpu_info {
    char bus_id[32];      /* PCI bus id, "" when unknown */
    char model[128];
    char uuid[64];
    int minor;            /* NVIDIA device minor, -1 otherwise */
    int numa_node;        /* -1 when the platform does not say */
    char local_cpulist[256];
};

struct gpu_facts {
    enum gpu_vendor vendor;
    struct gpu_info *gpus;
    int count;
};

/* proc_root NULL -> "/proc", sysfs_root NULL -> "/sys". No GPUs is not an
 * error (count 0). */
int gpus_detect (const char *proc_root, const char *sysfs_root,
                 struct gpu_facts *facts, berth_error_t *err);
void gpu_facts_free (struct gpu_facts *facts);

/* The vendor's visible-devices variable: CUDA_VISIBLE_DEVICES,
 * ROCR_VISIBLE_DEVICES, or NULL. */
const char *gpus_visible_devices_var (enum gpu_vendor vendor);

#endif
