/* SPDX-License-Identifier: MIT */
/* Reading the clocks (one copy for the daemon, the CLI, libberth and
 * run_command). */
#include <time.h>

#include "clock.h"

static double read_clock (clockid_t id)
{
    struct timespec ts;
    clock_gettime (id, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

double now_mono (void)
{
    return read_clock (CLOCK_MONOTONIC);
}

double now_wall (void)
{
    return read_clock (CLOCK_REALTIME);
}

double now_boot (void)
{
    return read_clock (CLOCK_BOOTTIME);
}
