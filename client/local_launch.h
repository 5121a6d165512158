/* SPDX-License-Identifier: MIT */
/* berth run --local where Slurm places every step (PROTOCOL.md "placed"). */
#ifndef BERTH_LOCAL_LAUNCH_H
#define BERTH_LOCAL_LAUNCH_H

#include <stdbool.h>

#include <berth/berth.h>

/* The argv to run for local step l whose program is prog: its rendered
 * launch with `<this berth> placed --` before the program, when berthd
 * rendered one that ends with prog. NULL when the step is bound here
 * instead, or (*oom set) when it could not be built. Free the array only;
 * its strings are borrowed from l and prog. */
char **local_launch (const berth_lease_t *l, char *const *prog, bool *oom);

#endif
