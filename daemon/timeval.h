/* SPDX-License-Identifier: MIT */
/* Seconds as a libevent timer's timeval (timeval.c), for the daemon's
 * objects that arm timers without seeing struct berthd. */
#ifndef BERTHD_TIMEVAL_H
#define BERTHD_TIMEVAL_H

#include <sys/time.h>

/* s seconds; 0 for s <= 0 (or NaN): a timer due now */
struct timeval seconds_tv (double s);

#endif
