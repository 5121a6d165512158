/* SPDX-License-Identifier: MIT */
/* A machine's targets (partitions, QOS, queues) and account defaults as
 * JSON, for `berth machine --json`. */
#ifndef BERTH_TARGETS_VIEW_H
#define BERTH_TARGETS_VIEW_H

#include <jansson.h>

#include "targets.h"

/* {"partition": [...], "qos": [...], "queue": [...]} where each target is
 * {"name", "min_nodes", "max_nodes", "max_wallclock", "max_wallclock_bins":
 * [{"nodes", "max_wallclock"}]} (null where unset). */
json_t *targets_to_json (const struct machine_targets *t);

/* {"account", "partition", "constraint", "qos"} (null where unset). */
json_t *account_defaults_to_json (const struct machine_targets *t);

#endif
