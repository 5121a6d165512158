/* Wall-clock limits as Slurm and PBS write them: HH:MM:SS, hours may exceed 24. */
#ifndef BERTH_WALLCLOCK_H
#define BERTH_WALLCLOCK_H

#include <stdbool.h>
#include <stddef.h>

/* Parse exactly three colon-separated non-negative integer fields (digits
 * only, no spaces) into seconds. Returns 0, or -1 when the text is not of that
 * form (`1-00:00:00`, `02:00`, ...). */
int wallclock_parse (const char *text, long long *seconds);

/* Compare two clocks: sets *cmp to <0, 0 or >0. Returns -1 (and leaves *cmp)
 * when either does not parse. */
int wallclock_compare (const char *a, const char *b, int *cmp);

/* Format seconds as HH:MM:SS (at least two hour digits) into buf. */
const char *wallclock_format (long long seconds, char *buf, size_t size);

/* A duration for people: "59s", "3m10s", "4h48m", "2d3h"; negative or not
 * finite is "0s". */
void wallclock_format_brief (double seconds, char *buf, size_t size);

/* The desired wall time capped at max: max only when both are non-empty, both
 * parse and desired is longer; otherwise desired itself (which may be NULL). */
const char *cap_wall_time (const char *desired, const char *max);

#endif
