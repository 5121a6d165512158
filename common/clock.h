/* SPDX-License-Identifier: MIT */
/* The two clocks berth reads, in seconds as doubles: the monotonic one for
 * intervals and deadlines, the real one for times people and journals see. */
#ifndef BERTH_CLOCK_H
#define BERTH_CLOCK_H

double now_mono (void);   /* CLOCK_MONOTONIC */
double now_wall (void);   /* CLOCK_REALTIME, seconds since the epoch */
/* CLOCK_BOOTTIME: since this boot, counting suspend, and moved by no one
 * (the journal's ttl deadlines across a restart, whatever the wall clock
 * does meanwhile) */
double now_boot (void);

#endif
