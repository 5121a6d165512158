/* SPDX-License-Identifier: MIT */
/* systemd's notification protocol: READY=1 once listening, STATUS= with what
 * the status callback writes (the lease, queue and free core counts; at
 * most twice a second), WATCHDOG=1 at half the watchdog interval
 * (sd_watchdog_enabled: WATCHDOG_USEC, for this process when WATCHDOG_PID
 * names it or is unset), STOPPING=1 on drain. Without NOTIFY_SOCKET every
 * call is a no-op. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "notify.h"

struct notify {
    bool enabled;                 /* NOTIFY_SOCKET was set at creation */
    notify_status_fn status;
    void *status_arg;
    struct event *status_ev;      /* a STATUS soon, once per half second */
    struct event *watchdog_ev;
};

static void send_status (struct notify *n, const char *extra)
{
    char text[512];
    text[0] = '\0';
    if (n->status)
        n->status (n->status_arg, text, sizeof (text));
    sd_notifyf (0, "%sSTATUS=%s", extra, text);
}

static void status_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    send_status (arg, "");
}

static void watchdog_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    (void) arg;
    sd_notify (0, "WATCHDOG=1");
}

struct notify *notify_create (struct event_base *base,
                              notify_status_fn status, void *arg,
                              berth_error_t *err)
{
    struct notify *n = calloc (1, sizeof (*n));
    if (!n) {
        errprintf (err, "out of memory setting up sd_notify");
        return NULL;
    }
    n->status = status;
    n->status_arg = arg;
    if (!getenv ("NOTIFY_SOCKET"))
        return n;
    n->enabled = true;
    uint64_t usec = 0;
    if (!(n->status_ev = evtimer_new (base, status_cb, n)))
        goto nomem;
    if (sd_watchdog_enabled (0, &usec) > 0 && usec > 0) {
        struct timeval tv = { (time_t) (usec / 2 / 1000000),
                              (suseconds_t) (usec / 2 % 1000000) };
        if (!(n->watchdog_ev = event_new (base, -1, EV_PERSIST, watchdog_cb,
                                          n))
            || event_add (n->watchdog_ev, &tv) < 0)
            goto nomem;
        sd_notify (0, "WATCHDOG=1");
    }
    return n;
nomem:
    notify_destroy (n);
    errprintf (err, "out of memory setting up sd_notify");
    return NULL;
}

void notify_destroy (struct notify *n)
{
    if (!n)
        return;
    if (n->status_ev)
        event_free (n->status_ev);
    if (n->watchdog_ev)
        event_free (n->watchdog_ev);
    free (n);
}

void notify_status_soon (struct notify *n)
{
    if (n && n->status_ev && !evtimer_pending (n->status_ev, NULL)) {
        struct timeval tv = { 0, 500000 };
        evtimer_add (n->status_ev, &tv);
    }
}

void notify_ready (struct notify *n)
{
    char extra[64];
    if (!n || !n->enabled)
        return;
    snprintf (extra, sizeof (extra), "READY=1\nMAINPID=%d\n", (int) getpid ());
    send_status (n, extra);
}

void notify_stopping (struct notify *n)
{
    if (n && n->enabled)
        send_status (n, "STOPPING=1\n");
}
