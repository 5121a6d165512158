/* SPDX-License-Identifier: MIT */
/* How berthd stops: a drain (a shutdown request or a signal) refuses new
 * leases and what waits, gives the leases held --drain-timeout to end, and
 * leaves the loop once none is left; a forced one ends them all now. */
#include <syslog.h>

#include "berthd.h"
#include "leases.h"
#include "ops.h"
#include "queue.h"

void berthd_stop (struct berthd *d, int code)
{
    if (d->stopping)
        return;
    d->stopping = true;
    d->exit_code = code;
    event_base_loopexit (d->base, NULL);
}

void berthd_check_drained (struct berthd *d)
{
    if (d->draining && !d->stopping && lease_book_count (d->book) == 0) {
        log_msg (LOG_NOTICE, "drained: no lease left; stopping");
        berthd_stop (d, BERTHD_EXIT_OK);
    }
}

static void drain_timeout_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct berthd *d = arg;
    log_msg (LOG_WARNING, "drain timeout (%.0f s): ending the %zu leases "
             "still held", d->cfg.drain_timeout, lease_book_count (d->book));
    lease_end_all (d, "forced");
    berthd_check_drained (d);
}

void ops_shutdown (struct berthd *d, bool force)
{
    if (!d->draining) {
        d->draining = true;
        log_msg (LOG_NOTICE, "%s: %zu leases held, %d requests waiting",
                 force ? "shutting down now" : "draining",
                 lease_book_count (d->book), queue_waiting (d->queue));
        notify_stopping (d->notify);
        queue_refuse_all (d->queue, PROTO_ERR_SHUTTING_DOWN, "berthd is "
                          "shutting down; no new leases");
        /* a drain waits for no query: requests waiting for the job's end
         * are served again now (refused) */
        jobend_wake (d->jobend);
        if (d->cfg.drain_timeout >= 0) {
            d->drain_timer = evtimer_new (d->base, drain_timeout_cb, d);
            struct timeval tv = seconds_tv (d->cfg.drain_timeout);
            if (d->drain_timer)
                evtimer_add (d->drain_timer, &tv);
        }
    }
    if (force)
        lease_end_all (d, "forced");
    berthd_check_drained (d);
}
