/* SPDX-License-Identifier: MIT */
/* A resolution as JSON, for `berth resolve --json`. */
#ifndef BERTH_RESOLVE_VIEW_H
#define BERTH_RESOLVE_VIEW_H

#include <jansson.h>

#include "resolve.h"

/* Every field of the resolution, numbers as numbers; the field set depends
 * on the scheduler. "changes" lists {field, kind, from, to, why} with
 * from/to numbers for nodes and, for wall times, from_seconds/to_seconds. */
json_t *resolution_to_json (const struct resolution *r);

#endif
