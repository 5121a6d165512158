/* SPDX-License-Identifier: MIT */
/* systemd's notification protocol (notify.c): READY=1, STATUS= at most twice
 * a second, WATCHDOG=1, STOPPING=1. Without NOTIFY_SOCKET the object exists
 * and does nothing; every call also takes NULL as a no-op. */
#ifndef BERTHD_NOTIFY_H
#define BERTHD_NOTIFY_H

#include <stddef.h>

#include <event2/event.h>

#include "error.h"

struct notify;

/* Fills buf with the status text (what follows STATUS=), asked whenever a
 * status is sent: the caller knows what it counts. */
typedef void (*notify_status_fn) (void *arg, char *buf, size_t size);

/* NULL (err) when out of memory. The watchdog, when systemd asks for one,
 * starts beating now. */
struct notify *notify_create (struct event_base *base,
                              notify_status_fn status, void *arg,
                              berth_error_t *err);
void notify_destroy (struct notify *n);
void notify_ready (struct notify *n);        /* READY=1, MAINPID, STATUS */
void notify_status_soon (struct notify *n);  /* STATUS within 0.5 s */
void notify_stopping (struct notify *n);     /* STOPPING=1, STATUS */

#endif
