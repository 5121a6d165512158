/* SPDX-License-Identifier: MIT */
/* systemd's notification protocol: READY=1 once listening, STATUS= with the
 * lease, queue and free core counts (at most twice a second), WATCHDOG=1 at
 * half the watchdog interval (sd_watchdog_enabled: WATCHDOG_USEC, for this
 * process when WATCHDOG_PID names it or is unset), STOPPING=1 on drain.
 * Without NOTIFY_SOCKET every call is a no-op. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "berthd.h"
#include "queue.h"
#include "server.h"

static void send_status (struct berthd *d, const char *extra)
{
    long free_cores = 0, cores = 0;
    for (int i = 0; d->ledger && i < ledger_nnodes (d->ledger); i++) {
        struct ledger_node_info ni;
        ledger_node_info (d->ledger, i, &ni);
        free_cores += ni.free_cores;
        cores += ni.cores;
    }
    sd_notifyf (0, "%sSTATUS=%s%zu leases, %d waiting, %ld of %ld cores "
                "free, %d connections", extra, d->draining ? "draining: " : "",
                lease_book_count (d->book), queue_waiting (d->queue),
                free_cores, cores, server_connections (d->server));
}

static void status_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    send_status (arg, "");
}

void notify_status_soon (struct berthd *d)
{
    if (d->status_ev && !evtimer_pending (d->status_ev, NULL)) {
        struct timeval tv = { 0, 500000 };
        evtimer_add (d->status_ev, &tv);
    }
}

static void watchdog_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    (void) arg;
    sd_notify (0, "WATCHDOG=1");
}

int notify_init (struct berthd *d)
{
    if (!getenv ("NOTIFY_SOCKET"))
        return 0;
    uint64_t usec = 0;
    if (!(d->status_ev = evtimer_new (d->base, status_cb, d)))
        return -1;
    if (sd_watchdog_enabled (0, &usec) > 0 && usec > 0) {
        struct timeval tv = { (time_t) (usec / 2 / 1000000),
                              (suseconds_t) (usec / 2 % 1000000) };
        if (!(d->watchdog_ev = event_new (d->base, -1, EV_PERSIST,
                                          watchdog_cb, d))
            || event_add (d->watchdog_ev, &tv) < 0)
            return -1;
        sd_notify (0, "WATCHDOG=1");
    }
    return 0;
}

void notify_ready (struct berthd *d)
{
    char extra[64];
    snprintf (extra, sizeof (extra), "READY=1\nMAINPID=%d\n", (int) getpid ());
    send_status (d, extra);
}

void notify_stopping (struct berthd *d)
{
    send_status (d, "STOPPING=1\n");
}
