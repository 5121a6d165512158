/* SPDX-License-Identifier: MIT */
/* berthd's event loop: libevent's, with a short poll before each sleep.
 *
 * A client's next request often comes tens of microseconds after berthd's
 * last reply (the release after an acquire, the next acquire of a loop, a
 * pipelined batch arriving in pieces). Sleeping in epoll_wait and being woken
 * for it costs both sides more than that on a virtual machine. So for
 * cfg.spin_us after it has handled what a read from a client brought,
 * berthd polls without sleeping; an idle berthd sleeps as before. Polling
 * costs at most spin_us of CPU per read, beside berthd's own 5 to 10 us per
 * request. Where berthd
 * may use only one CPU, polling would keep the client from running: it
 * sleeps at once there. */
#include <sched.h>

#include <event2/event.h>

#include "berthd.h"
#include "server.h"

static bool told_to_stop (struct event_base *base)
{
    return event_base_got_exit (base) || event_base_got_break (base);
}

void berthd_loop (struct berthd *d)
{
    double spin = d->cfg.spin_us * 1e-6;
    cpu_set_t set;
    if (spin > 0 && sched_getaffinity (0, sizeof (set), &set) == 0
        && CPU_COUNT (&set) < 2)
        spin = 0;
    if (spin <= 0) {
        event_base_dispatch (d->base);
        return;
    }
    /* event_base_got_exit holds only until the loop is entered again */
    for (;;) {
        unsigned long reads = server_reads (d->server);
        if (event_base_loop (d->base, EVLOOP_ONCE) != 0 || told_to_stop (d->base))
            return;
        /* poll from the end of the work that each read brought */
        double until = now_mono () + spin;
        while (reads != server_reads (d->server)) {
            reads = server_reads (d->server);
            do {
                event_base_loop (d->base, EVLOOP_NONBLOCK);
                if (told_to_stop (d->base))
                    return;
            } while (reads == server_reads (d->server) && now_mono () < until);
            until = now_mono () + spin;
        }
    }
}
