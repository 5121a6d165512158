/* SPDX-License-Identifier: MIT */
/* Leases: the records around the ledger's grants (who holds what, the
 * rendered launch, the step's environment), the grant, and the ways a lease ends: release, its connection closing, its ttl, its owner
 * process exiting, a forced shutdown. Every grant and release is journaled
 * before the client hears of it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include "berthd.h"
#include "idset.h"
#include "pidstart.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* ---- records ---- */

struct lease *lease_new (const struct ledger_lease *ll)
{
    struct lease *ls = calloc (1, sizeof (*ls));
    if (!ls)
        return NULL;
    ls->id = ll->id;
    ledger_lease_name (ll->id, ls->name, sizeof (ls->name));
    ls->shape = ll->shape;
    ls->layout = ll->layout;
    ls->local = ll->shape.local;
    ls->pidfd = -1;
    ls->expires = -1;
    ls->reclaim_by = -1;
    return ls;
}

void lease_free (struct berthd *d, struct lease *ls)
{
    if (ls->conn) {
        struct conn *c = ls->conn;
        if (ls->cprev)
            ls->cprev->cnext = ls->cnext;
        else
            c->leases = ls->cnext;
        if (ls->cnext)
            ls->cnext->cprev = ls->cprev;
        c->nleases--;
    }
    if (ls->polled)
        d->npolled--;
    if (ls->ttl_ev)
        event_free (ls->ttl_ev);
    if (ls->owner_ev)
        event_free (ls->owner_ev);
    if (ls->grace_ev)
        event_free (ls->grace_ev);
    if (ls->pidfd >= 0)
        close (ls->pidfd);
    if (idmap_get (d->leases, ls->id) == ls)
        idmap_remove (d->leases, ls->id);
    json_decref (ls->request);
    placement_free (&ls->placement);
    launch_free (&ls->launch);
    env_set_free (ls->env, ls->nenv);
    free (ls->label);
    free (ls);
}

struct lease *lease_lookup (struct berthd *d, const char *name)
{
    const char *s = name[0] == 'L' ? name + 1 : name;
    char *end;
    errno = 0;
    unsigned long long id = strtoull (s, &end, 10);
    if (!*s || *end || errno || s[0] == '-' || s[0] == '+')
        return NULL;
    return idmap_get (d->leases, id);
}

void lease_to_proto (const struct lease *ls, bool with_env,
                     struct proto_lease *out)
{
    proto_lease_init (out);
    out->id = (char *) ls->name;
    out->label = ls->label;
    out->placement = ls->placement;
    out->memory_cap = ls->shape.memory;
    out->budget_mb = ls->shape.budget;
    out->launch = ls->launch;
    if (with_env) {
        out->env = ls->env;
        out->nenv = ls->nenv;
    }
    out->owner_pid = ls->owner_pid > 0 ? ls->owner_pid : ls->peer_pid;
    out->granted = ls->granted;
}

/* ---- what a grant carries: the launch and the environment ---- */

static char *strdup_or_null (const char *s)
{
    return s ? strdup (s) : NULL;
}

/* BERTH_* variables, and for a local step on a GPU
 * node the vendor's visible-devices variable: exactly its GPUs, empty for
 * none. */
static int build_env (struct berthd *d, struct lease *ls,
                      const struct ledger_lease *ll, berth_error_t *err)
{
    long long mem = -1;
    if (ls->shape.memory >= 0)
        mem = (long long) ls->shape.memory;
    else if (ls->shape.budget >= 0)
        mem = (long long) ll->nodes[0].memory;
    const char *gpu_var = ls->local && !lease_local_launched (d, ls) ? d->gpu_var
                                                                     : NULL;
    if (render_lease_env (&ls->placement, ls->name, mem, gpu_var, &ls->env,
                          &ls->nenv) < 0)
        return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory building "
                               "the environment of %s", ls->name);
    return 0;
}

/* The BERTH_* variables are built when first asked for (a request with
 * "env", a reclaim): most grants never send them, and they follow from the
 * lease, so the journal does not keep them either. */
int lease_env (struct berthd *d, struct lease *ls, berth_error_t *err)
{
    if (ls->env)
        return 0;
    const struct ledger_lease *ll = ledger_lease_find (d->ledger, ls->id);
    if (!ll)
        return errprintf_code (err, PROTO_ERR_INTERNAL, "%s is not in the ledger",
                               ls->name);
    if (build_env (d, ls, ll, err) < 0) {
        env_set_free (ls->env, ls->nenv);
        ls->env = NULL;
        ls->nenv = 0;
        return -1;
    }
    return 0;
}

static int copy_argv (char *const *argv, struct launch *out)
{
    int n = 0;
    while (argv[n])
        n++;
    if (!(out->argv = calloc ((size_t) n + 1, sizeof (char *))))
        return -1;
    for (out->argc = 0; out->argc < n; out->argc++)
        if (!(out->argv[out->argc] = strdup (argv[out->argc])))
            return -1;
    return 0;
}

/* In SCHEDULER mode Slurm picks the CPUs (and GPUs) of every srun step and
 * knows nothing of a process its client binds itself: it could give an
 * srun step beside it the same CPUs. So there a local step goes through
 * srun as well, on berthd's node, and Slurm places it with every other
 * step; the step then tells berthd the CPUs it got (op placed). Where berth
 * places on given cores (CPU_BINDING) the ledger's ids are the real ones
 * and the client binds to them. */
bool lease_local_launched (const struct berthd *d, const struct lease *ls)
{
    return ls->local && d->caps.placement == PLACEMENT_SCHEDULER;
}

/* A launched step gets the machine's launch line; a local step is not
 * launched (but see lease_local_launched): its argv is the program itself,
 * which the client runs with CPU affinity on the placed cores (and, on a GPU
 * node, the visible-devices variable in the environment delta). */
static int build_launch (struct berthd *d, struct lease *ls,
                         char *const *argv, berth_error_t *err)
{
    if (!ls->local || lease_local_launched (d, ls)) {
        struct launch_request lr = {
            .argv = argv, .ntasks = ls->shape.ntasks,
            .cpus_per_task = ls->shape.cpus_per_task,
            .placement = &ls->placement,
            .has_memory_cap = ls->shape.memory >= 0,
            .memory_cap = ls->shape.memory,
            /* a step of --cores is one process, not MPI */
            .single_process = !ls->shape.mpi,
        };
        if (render_launch (&d->machine->par, d->alloc->nnodes, &d->caps, &lr,
                           &ls->launch, err) < 0) {
            memset (&ls->launch, 0, sizeof (ls->launch));
            return errprefix (err, "rendering the launch of %s: ", ls->name);
        }
        return 0;
    }
    struct launch *l = &ls->launch;
    memset (l, 0, sizeof (*l));
    if (copy_argv (argv, l) < 0)
        goto nomem;
    if (d->gpu_var) {
        char *ids = render_id_list (ls->placement.gpu_ids, ls->placement.ngpu_ids);
        int rc = ids ? env_set_append (&l->env_set, &l->n_set, d->gpu_var, ids) : -1;
        free (ids);
        if (rc < 0)
            goto nomem;
    }
    return 0;
nomem:
    launch_free (l);
    memset (l, 0, sizeof (*l));
    return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory building "
                           "the launch of %s", ls->name);
}

/* ---- ttl, owner process ---- */

static void ttl_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct lease *ls = arg;
    lease_end (NULL, ls, "expired");
}

int lease_arm_ttl (struct berthd *d, struct lease *ls)
{
    if (ls->expires < 0)
        return 0;
    struct timeval tv = seconds_tv (ls->expires - now_wall ());
    if (!(ls->ttl_ev = evtimer_new (d->base, ttl_cb, ls))
        || evtimer_add (ls->ttl_ev, &tv) < 0)
        return -1;
    return 0;
}

/* A detached lease's owner exited; or, after a restart, the process that
 * held an orphaned connection-bound lease did, as if it had disconnected. */
static const char *gone_reason (const struct lease *ls)
{
    return ls->detached ? "owner_exited" : "disconnected";
}

static void owner_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct lease *ls = arg;
    lease_end (NULL, ls, gone_reason (ls));
}

bool process_gone (pid_t pid)
{
    return kill (pid, 0) < 0 && errno == ESRCH;
}

/* Gone, or its pid now names a later process (start known and different). */
static bool watched_gone (const struct lease *ls)
{
    uint64_t start;
    if (process_gone (ls->watched))
        return true;
    return ls->watched_start && pidstart_read (ls->watched, &start) == 0
           && start != ls->watched_start;
}

struct gone {
    struct lease **v;
    int n;
};

static void collect_gone (void *value, void *arg)
{
    struct lease *ls = value;
    struct gone *g = arg;
    if (ls->polled && watched_gone (ls))
        g->v[g->n++] = ls;
}

/* Where pidfd_open is missing, owners are checked once a second. */
static void poll_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct berthd *d = arg;
    struct gone g = { malloc ((size_t) d->npolled * sizeof (*g.v) + 1), 0 };
    if (!g.v)
        return;
    idmap_each (d->leases, collect_gone, &g);
    for (int i = 0; i < g.n; i++)
        lease_end (d, g.v[i], gone_reason (g.v[i]));
    free (g.v);
    if (d->npolled == 0)
        evtimer_del (d->poll_ev);
}

/* ls ends when the pidfd fd (taken) reads ready. */
static int watch_pidfd (struct berthd *d, struct lease *ls, int fd)
{
    ls->pidfd = fd;
    if (!(ls->owner_ev = event_new (d->base, fd, EV_READ, owner_cb, ls))
        || event_add (ls->owner_ev, NULL) < 0)
        return -1;
    return 0;
}

/* Without pidfds: ls->watched is checked by the 1 s poll. */
static int watch_poll (struct berthd *d, struct lease *ls)
{
    if (!d->poll_ev
        && !(d->poll_ev = event_new (d->base, -1, EV_PERSIST, poll_cb, d)))
        return -1;
    ls->polled = true;
    if (d->npolled++ == 0) {
        struct timeval tv = { 1, 0 };
        event_add (d->poll_ev, &tv);
    }
    return 0;
}

int lease_watch_pid (struct berthd *d, struct lease *ls, pid_t pid)
{
    if (pid <= 0)
        return 0;
    ls->watched = pid;
    int fd = (int) syscall (SYS_pidfd_open, pid, 0);
    if (fd >= 0)
        return watch_pidfd (d, ls, fd);
    if (errno == ESRCH || process_gone (pid))
        return 1;
    return watch_poll (d, ls);
}

int lease_watch_holder (struct berthd *d, struct lease *ls)
{
    pid_t pid = ls->peer_pid;
    if (pid <= 0)
        return 2;
    int fd = (int) syscall (SYS_pidfd_open, pid, 0);
    int fd_errno = errno;
    uint64_t start;
    bool known = pidstart_read (pid, &start) == 0;
    bool no_entry = !known && errno == ENOENT;
    /* The pidfd names whatever process has the pid now: the start time
     * says whether that is still the holder. Where /proc cannot tell (not
     * mounted), the pidfd is trusted. */
    if ((fd < 0 && fd_errno == ESRCH)
        || (known && ls->peer_start && start != ls->peer_start)) {
        if (fd >= 0)
            close (fd);
        return 1;
    }
    ls->watched = pid;
    if (fd >= 0)
        return watch_pidfd (d, ls, fd);
    if (no_entry) {
        ls->watched = 0;
        return process_gone (pid) ? 1 : 2;
    }
    ls->watched_start = known ? start : 0;
    return watch_poll (d, ls);
}

uint64_t conn_peer_start (struct conn *c)
{
    if (!c->start_read && c->pid > 0 && pidstart_read (c->pid, &c->start) < 0)
        c->start = 0;
    c->start_read = true;
    return c->start;
}

void lease_unwatch (struct berthd *d, struct lease *ls)
{
    if (ls->owner_ev)
        event_free (ls->owner_ev);
    ls->owner_ev = NULL;
    if (ls->pidfd >= 0)
        close (ls->pidfd);
    ls->pidfd = -1;
    if (ls->polled) {
        ls->polled = false;
        d->npolled--;
    }
    ls->watched = 0;
    ls->watched_start = 0;
}

/* ---- grant and end ---- */

static struct berthd *the_daemon;   /* for callbacks that carry a lease */

int leases_init (struct berthd *d, berth_error_t *err)
{
    the_daemon = d;
    if (!(d->leases = idmap_create ()))
        return errprintf (err, "out of memory");
    return 0;
}

static void link_conn (struct lease *ls, struct conn *c)
{
    ls->conn = c;
    ls->cprev = NULL;
    ls->cnext = c->leases;
    if (c->leases)
        c->leases->cprev = ls;
    c->leases = ls;
    c->nleases++;
}

int lease_grant (struct berthd *d, struct pending *p, uint64_t id,
                 berth_error_t *err)
{
    char late[1024];
    /* Time has passed while it waited: check its duration again. */
    if (jobend_admit (d->jobend, &p->acq, late, sizeof (late), err) < 0) {
        ledger_release (d->ledger, id, NULL);
        queue_schedule_soon (d);
        return -1;
    }
    const struct ledger_lease *ll = ledger_lease_find (d->ledger, id);
    struct lease *ls = ll ? lease_new (ll) : NULL;
    if (!ls) {
        ledger_release (d->ledger, id, NULL);
        return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory "
                               "recording a lease");
    }
    ls->detached = p->acq.detach;
    ls->peer_pid = p->conn->pid;
    ls->peer_start = conn_peer_start (p->conn);
    ls->uid = p->conn->uid;
    ls->owner_pid = p->acq.owner_pid;
    ls->granted = now_wall ();
    if (ls->detached && p->acq.ttl >= 0)
        ls->expires = ls->granted + p->acq.ttl;
    if ((p->acq.step.label && !(ls->label = strdup_or_null (p->acq.step.label)))
        || ledger_lease_placement (d->ledger, ll, &ls->placement, err) < 0) {
        errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory recording a "
                        "lease");
        goto fail;
    }
    /* Bound by its client to ids Slurm knows nothing of: say so. */
    if (lease_local_launched (d, ls) && !p->acq.step.argv) {
        size_t at = strlen (late);
        snprintf (late + at, sizeof (late) - at, "%s%s is a local step acquired "
                  "without argv: Slurm places every step here and does not know the "
                  "cores its client binds it to, so an srun step may be given the same "
                  "CPUs; acquire it with argv (berth run --local does) to have berthd "
                  "launch it through srun", at ? "; " : "", ls->name);
    }
    if (p->acq.step.argv && build_launch (d, ls, p->acq.step.argv, err) < 0) {
        err->code = PROTO_ERR_UNSATISFIABLE;
        goto fail;
    }
    if (p->acq.env && lease_env (d, ls, err) < 0)
        goto fail;
    if (idmap_put (d->leases, id, ls) < 0) {
        errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory recording a "
                        "lease");
        goto fail;
    }
    struct lease_text lt;
    struct proto_lease pl;
    lease_to_proto (ls, p->acq.env, &pl);
    if (lease_text_build (&pl, &lt) < 0) {
        errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory encoding %s",
                        ls->name);
        goto fail;
    }
    /* the request's id: in the journal for a request sent again after a
     * restart, and in the reply */
    char *idtext = json_dumps (p->id, JSON_COMPACT | JSON_ENCODE_ANY);
    ls->request = json_incref (p->id);
    if (journal_grant (d, ls, &lt, p->wait_id, idtext, err) < 0) {
        free (idtext);
        lease_text_free (&lt);
        err->code = PROTO_ERR_INTERNAL;
        goto fail;
    }
    p->wait_id = 0;            /* ended by the grant record */
    if (!ls->detached)
        link_conn (ls, p->conn);
    int owner = 0;
    if ((ls->expires >= 0 && lease_arm_ttl (d, ls) < 0)
        || (owner = lease_watch_pid (d, ls, ls->owner_pid)) < 0)
        log_msg (LOG_ERR, "could not watch the ttl or owner of %s; it ends "
                 "only by release", ls->name);
    /* the reply: {"id": ..., "ok": true, <the lease's members>} */
    char head[1024], evhead[96];
    size_t len = 0;
    char *warning = NULL;
    if (late[0]) {
        log_msg (LOG_WARNING, "%s: %s", ls->name, late);
        json_t *w = json_string (late);
        warning = w ? json_dumps (w, JSON_ENCODE_ANY) : NULL;
        json_decref (w);
    }
    snprintf (head, sizeof (head), "{\"id\":%s,\"ok\":true,%s%s%s",
              idtext ? idtext : "null", warning ? "\"warning\":" : "",
              warning ? warning : "", warning ? "," : "");
    free (idtext);
    free (warning);
    char *reply = lease_text_line (&lt, head, p->acq.env, "}", &len);
    conn_send_line (p->conn, reply, len);
    snprintf (evhead, sizeof (evhead), "{\"event\":\"granted\",\"time\":%s,",
              lt.time);
    char *ev = lease_text_line (&lt, evhead, false, "}", &len);
    events_emit_line (d->events, ev, ev ? len : 0);
    lease_text_free (&lt);
    notify_status_soon (d->notify);
    if (owner == 1)       /* exited between the request and the grant */
        lease_end (d, ls, "owner_exited");
    return 0;
fail:
    lease_free (d, ls);
    ledger_release (d->ledger, id, NULL);
    queue_schedule_soon (d);
    return -1;
}

void lease_end (struct berthd *d, struct lease *ls, const char *reason)
{
    berth_error_t err;
    if (!d)
        d = the_daemon;
    if (ledger_release (d->ledger, ls->id, &err) < 0)
        log_msg (LOG_ERR, "releasing %s: %s", ls->name, err.text);
    /* one time, written once, for the journal and the event */
    double now = now_wall ();
    char when[40];
    json_real_text (now, when, sizeof (when));
    if (journal_release (d, ls->id, when, reason, &err) < 0)
        log_msg (LOG_ERR, "%s", err.text);
    size_t len = 0;
    char *ev = released_event_line_at (when, ls->name, ls->label, reason,
                                       &len);
    if (ev)
        events_emit_line (d->events, ev, len);
    else
        events_emit (d->events, proto_event_released (now, ls->name,
                                                      ls->label, reason));
    lease_free (d, ls);
    queue_schedule_soon (d);
    notify_status_soon (d->notify);
    berthd_check_drained (d);
}

static void collect_all (void *value, void *arg)
{
    struct gone *g = arg;
    g->v[g->n++] = value;
}

void lease_end_all (struct berthd *d, const char *reason)
{
    struct gone g = { malloc (idmap_count (d->leases) * sizeof (*g.v) + 1), 0 };
    if (!g.v) {
        log_msg (LOG_ERR, "out of memory ending every lease");
        return;
    }
    idmap_each (d->leases, collect_all, &g);
    for (int i = 0; i < g.n; i++)
        lease_end (d, g.v[i], reason);
    free (g.v);
}

void leases_conn_closed (struct conn *c)
{
    while (c->leases)
        lease_end (c->d, c->leases, "disconnected");
}

/* An orphaned lease bound to c from now on (it ends when c closes). */
void lease_rebind (struct berthd *d, struct conn *c, struct lease *ls)
{
    berth_error_t err;
    if (ls->grace_ev)
        event_free (ls->grace_ev);
    ls->grace_ev = NULL;
    lease_unwatch (d, ls);
    ls->reclaim_by = -1;
    pid_t was = ls->peer_pid;
    ls->peer_pid = c->pid;
    ls->peer_start = conn_peer_start (c);
    link_conn (ls, c);
    /* Another process took it: a later restart must watch that one. */
    if (was != c->pid && journal_reclaim (d, ls, &err) < 0)
        log_msg (LOG_WARNING, "%s", err.text);
    log_msg (LOG_INFO, "%s reclaimed by pid %d", ls->name, (int) c->pid);
    notify_status_soon (d->notify);
}
