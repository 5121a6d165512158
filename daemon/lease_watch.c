/* SPDX-License-Identifier: MIT */
/* Lease watching (lease_watch.h): per lease id, its ttl timer, the pidfd of
 * the process whose exit ends it (or its place in the 1 s poll where
 * pidfd_open is missing), and the reclaim-grace timer of a restored lease
 * whose holder cannot be watched. When one fires, the creator's callback
 * hears which lease ended and why. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "idmap.h"
#include "lease_watch.h"
#include "pidstart.h"
#include "timeval.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* One lease's watches. */
struct watched {
    struct lease_watch *w;
    uint64_t id;
    bool detached;                /* for the reason its process's exit gives */
    struct event *ttl_ev, *owner_ev, *grace_ev;
    int pidfd;                    /* -1: none */
    pid_t pid;                    /* the process whose exit ends the lease:
                                     its owner, or after a restart the holder
                                     of an orphaned lease; 0: none */
    uint64_t start;               /* its start time, checked by the poll (a
                                     reused pid is a gone holder); 0: not
                                     checked */
    bool polled;                  /* pid is checked by the 1 s poll */
};

struct lease_watch {
    struct event_base *base;
    lease_ended_fn *ended;
    void *arg;
    struct idmap *leases;         /* lease id -> struct watched */
    struct event *poll_ev;        /* made at the first polled lease */
    int npolled;
};

struct lease_watch *lease_watch_create (struct event_base *base,
                                        lease_ended_fn *ended, void *arg)
{
    struct lease_watch *w = calloc (1, sizeof (*w));
    if (!w || !(w->leases = idmap_create ())) {
        free (w);
        return NULL;
    }
    w->base = base;
    w->ended = ended;
    w->arg = arg;
    return w;
}

static void free_watched (struct watched *x)
{
    if (x->polled)
        x->w->npolled--;
    if (x->ttl_ev)
        event_free (x->ttl_ev);
    if (x->owner_ev)
        event_free (x->owner_ev);
    if (x->grace_ev)
        event_free (x->grace_ev);
    if (x->pidfd >= 0)
        close (x->pidfd);
    free (x);
}

void lease_watch_destroy (struct lease_watch *w)
{
    if (!w)
        return;
    size_t pos = 0;
    struct watched *x;
    while ((x = idmap_next (w->leases, &pos)))
        free_watched (x);
    idmap_destroy (w->leases);
    if (w->poll_ev)
        event_free (w->poll_ev);
    free (w);
}

/* The watches of id, made if it has none; *made says so, for a caller that
 * fails to undo. */
static struct watched *watched_of (struct lease_watch *w, uint64_t id,
                                   bool *made)
{
    struct watched *x = idmap_get (w->leases, id);
    *made = false;
    if (x)
        return x;
    if (!(x = calloc (1, sizeof (*x))))
        return NULL;
    x->w = w;
    x->id = id;
    x->pidfd = -1;
    if (idmap_put (w->leases, id, x) < 0) {
        free (x);
        return NULL;
    }
    *made = true;
    return x;
}

static void drop_if_made (struct lease_watch *w, struct watched *x, bool made)
{
    if (made) {
        idmap_remove (w->leases, x->id);
        free_watched (x);
    }
}

void lease_watch_stop (struct lease_watch *w, uint64_t id)
{
    struct watched *x = idmap_remove (w->leases, id);
    if (x)
        free_watched (x);
}

void lease_watch_end_grace (struct lease_watch *w, uint64_t id)
{
    struct watched *x = idmap_get (w->leases, id);
    if (x && x->grace_ev) {
        event_free (x->grace_ev);
        x->grace_ev = NULL;
    }
}

bool lease_watch_in_grace (const struct lease_watch *w, uint64_t id)
{
    const struct watched *x = idmap_get (w->leases, id);
    return x && x->grace_ev;
}

/* ---- ttl, grace ---- */

static void ttl_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct watched *x = arg;
    x->w->ended (x->id, "expired", x->w->arg);
}

static void grace_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct watched *x = arg;
    x->w->ended (x->id, "disconnected", x->w->arg);
}

/* Arm id's ttl timer, or its grace timer, seconds from now. */
static int arm (struct lease_watch *w, uint64_t id, bool grace,
                double seconds)
{
    bool made;
    struct watched *x = watched_of (w, id, &made);
    if (!x)
        return -1;
    struct timeval tv = seconds_tv (seconds);
    struct event *ev = evtimer_new (w->base, grace ? grace_cb : ttl_cb, x);
    if (!ev || evtimer_add (ev, &tv) < 0) {
        if (ev)
            event_free (ev);
        drop_if_made (w, x, made);
        return -1;
    }
    struct event **slot = grace ? &x->grace_ev : &x->ttl_ev;
    if (*slot)
        event_free (*slot);
    *slot = ev;
    return 0;
}

int lease_watch_ttl (struct lease_watch *w, uint64_t id, double expires)
{
    if (expires < 0)
        return 0;
    return arm (w, id, false, expires - now_wall ());
}

int lease_watch_grace (struct lease_watch *w, uint64_t id, double seconds)
{
    return arm (w, id, true, seconds);
}

/* ---- the process whose exit ends it ---- */

/* A detached lease's owner exited; or, after a restart, the process that
 * held an orphaned connection-bound lease did, as if it had disconnected. */
static const char *gone_reason (const struct watched *x)
{
    return x->detached ? "owner_exited" : "disconnected";
}

static void owner_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct watched *x = arg;
    x->w->ended (x->id, gone_reason (x), x->w->arg);
}

bool process_gone (pid_t pid)
{
    return kill (pid, 0) < 0 && errno == ESRCH;
}

/* Gone, or its pid now names a later process (start known and different). */
static bool watched_gone (const struct watched *x)
{
    uint64_t start;
    if (process_gone (x->pid))
        return true;
    return x->start && pidstart_read (x->pid, &start) == 0
           && start != x->start;
}

/* Where pidfd_open is missing, owners are checked once a second. */
static void poll_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct lease_watch *w = arg;
    /* the ids first: the callback ends leases, which changes the map */
    uint64_t *gone = malloc ((size_t) w->npolled * sizeof (*gone) + 1);
    size_t n = 0, pos = 0;
    if (!gone)
        return;
    for (struct watched *x; (x = idmap_next (w->leases, &pos));)
        if (x->polled && watched_gone (x))
            gone[n++] = x->id;
    for (size_t i = 0; i < n; i++) {
        struct watched *x = idmap_get (w->leases, gone[i]);
        if (x && x->polled)
            w->ended (x->id, gone_reason (x), w->arg);
    }
    free (gone);
    if (w->npolled == 0)
        evtimer_del (w->poll_ev);
}

/* x's lease ends when the pidfd fd (taken, closed on failure) reads ready. */
static int watch_pidfd (struct lease_watch *w, struct watched *x, int fd)
{
    struct event *ev = event_new (w->base, fd, EV_READ, owner_cb, x);
    if (!ev || event_add (ev, NULL) < 0) {
        if (ev)
            event_free (ev);
        close (fd);
        return -1;
    }
    x->pidfd = fd;
    x->owner_ev = ev;
    return 0;
}

/* Without pidfds: x->pid is checked by the 1 s poll. */
static int watch_poll (struct lease_watch *w, struct watched *x)
{
    if (!w->poll_ev
        && !(w->poll_ev = event_new (w->base, -1, EV_PERSIST, poll_cb, w)))
        return -1;
    x->polled = true;
    if (w->npolled++ == 0) {
        struct timeval tv = { 1, 0 };
        event_add (w->poll_ev, &tv);
    }
    return 0;
}

/* Lease id ends when process pid does: through its pidfd fd (taken), or
 * where there is none (fd < 0) the 1 s poll, which also checks the start
 * time when one is given. -1 (nothing changed) when out of resources. */
static int watch_process (struct lease_watch *w, uint64_t id, int fd,
                          pid_t pid, uint64_t start, bool detached)
{
    bool made;
    struct watched *x = watched_of (w, id, &made);
    if (!x) {
        if (fd >= 0)
            close (fd);
        return -1;
    }
    x->detached = detached;
    x->pid = pid;
    x->start = start;
    if (fd >= 0 ? watch_pidfd (w, x, fd) < 0 : watch_poll (w, x) < 0) {
        x->pid = 0;
        x->start = 0;
        drop_if_made (w, x, made);
        return -1;
    }
    return 0;
}

/* Lease id ends when process pid (started at start, 0: unknown) does. 0:
 * watched; 1: gone (or the pid names another process now); 2: it cannot
 * be told (no pidfd and no /proc entry, though kill finds the pid); -1:
 * out of resources. */
static int watch_started (struct lease_watch *w, uint64_t id, pid_t pid,
                          uint64_t start, bool detached)
{
    int fd = (int) syscall (SYS_pidfd_open, pid, 0);
    int fd_errno = errno;
    uint64_t now_start;
    bool known = pidstart_read (pid, &now_start) == 0;
    bool no_entry = !known && errno == ENOENT;
    /* The pidfd names whatever process has the pid now: the start time
     * says whether that is still the one. Where /proc cannot tell (not
     * mounted), the pidfd is trusted. */
    if ((fd < 0 && fd_errno == ESRCH) || (known && start && now_start != start)) {
        if (fd >= 0)
            close (fd);
        return 1;
    }
    if (fd < 0 && no_entry)
        return process_gone (pid) ? 1 : 2;
    return watch_process (w, id, fd, pid, fd < 0 && known ? now_start : 0,
                          detached);
}

int lease_watch_pid (struct lease_watch *w, uint64_t id, pid_t pid,
                     uint64_t start, bool detached)
{
    if (pid <= 0)
        return 0;
    int rc = watch_started (w, id, pid, start, detached);
    if (rc != 2)
        return rc;
    /* kill finds it but nothing tells who it is: watched by the poll */
    return watch_process (w, id, -1, pid, 0, detached);
}

int lease_watch_holder (struct lease_watch *w, uint64_t id, pid_t pid,
                        uint64_t start)
{
    if (pid <= 0)
        return 2;
    return watch_started (w, id, pid, start, false);
}
