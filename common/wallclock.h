/* SPDX-License-Identifier: MIT */
/* Wall-clock limits and requests in the forms Slurm and PBS take. */
#ifndef BERTH_WALLCLOCK_H
#define BERTH_WALLCLOCK_H

#include <stdbool.h>
#include <stddef.h>

/* Whose reading of a bare number applies: sbatch --time reads minutes, qsub
 * -l walltime reads seconds. Every other form means the same to both. */
enum wallclock_dialect {
    WALLCLOCK_SLURM,
    WALLCLOCK_PBS,
};

/* The forms wallclock_read takes, for messages. */
#define WALLCLOCK_FORMS                                                     \
    "MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (sbatch --time), or "  \
    "HH:MM:SS or SECONDS (qsub walltime)"

/* Parse exactly three colon-separated non-negative integer fields (digits
 * only, no spaces) into seconds. Returns 0, or -1 when the text is not of that
 * form (`1-00:00:00`, `02:00`, ...). */
int wallclock_parse (const char *text, long long *seconds);

/* Parse any form sbatch's --time or qsub's walltime takes: MM, MM:SS,
 * HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, and a bare number (minutes for Slurm,
 * seconds for PBS). Fields are digits only (no signs, no spaces), hours and
 * minutes may run past 24 and 60. Returns 0, or -1 (and leaves *seconds) for
 * anything else ("4 hours", "", NULL). */
int wallclock_read (const char *text, enum wallclock_dialect d,
                    long long *seconds);

/* The dialect of a machine's system name ("pbs" reads as PBS, everything
 * else as Slurm). */
enum wallclock_dialect wallclock_dialect_of (const char *system);

/* Format seconds as HH:MM:SS (at least two hour digits, hours past 24 as
 * they are): a form both sbatch and qsub take. */
const char *wallclock_format (long long seconds, char *buf, size_t size);

/* A duration for people: "59s", "3m10s", "4h48m", "2d3h"; negative or not
 * finite is "0s". */
void wallclock_format_brief (double seconds, char *buf, size_t size);

#endif
