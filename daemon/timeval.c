/* SPDX-License-Identifier: MIT */
/* Seconds as a libevent timer's timeval (timeval.h). */
#include "timeval.h"

struct timeval seconds_tv (double s)
{
    if (!(s > 0))
        s = 0;
    time_t whole = (time_t) s;
    return (struct timeval) { whole, (suseconds_t) ((s - (double) whole) * 1e6) };
}
