/* SPDX-License-Identifier: MIT */
/* The launcher's capabilities (srun --version and the like) detected on a
 * thread of its own while berthd builds its ledger: the probe runs a
 * program, 10 ms or more of waiting that need not sit on the start-up's
 * critical path. */
#ifndef BERTHD_LAUNCHER_PROBE_H
#define BERTHD_LAUNCHER_PROBE_H

#include <pthread.h>
#include <stdbool.h>

#include "launcher.h"

struct launcher_probe {
    const struct machine *machine;
    struct launcher_caps caps;
    pthread_t thread;
    bool threaded;
};

/* Start detecting for m (kept until launcher_probe_finish). Where no thread
 * can be made, detects right here instead. */
void launcher_probe_start (struct launcher_probe *p, const struct machine *m);

/* Wait for the result; call exactly once after launcher_probe_start. */
void launcher_probe_finish (struct launcher_probe *p,
                            struct launcher_caps *caps);

#endif
