/* SPDX-License-Identifier: MIT */
/* Detecting the installed launcher's abilities by running it (berthsys). */
#ifndef BERTH_LAUNCHER_DETECT_H
#define BERTH_LAUNCHER_DETECT_H

#include "launcher.h"

/* Detect for this machine's system (runs srun --version, <launcher>
 * --version, or looks for taskset on PATH and runs the single_node machine's
 * <launcher> --version for its MPI), with a timeout, once per process (the
 * result is cached). */
void launcher_detect (const struct machine *m, struct launcher_caps *caps);

/* Forget the cached detection (tests; a process whose PATH changed). */
void launcher_detect_forget (void);

#endif
