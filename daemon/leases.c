/* SPDX-License-Identifier: MIT */
/* Leases: the lifecycle of the records around the ledger's grants, on the
 * lease book (who holds what: lease_book.h), the watch (what ends a lease by
 * itself: lease_watch.h) and the journal (journal.h). The grant (the
 * rendered launch, the step's environment), and the ways a lease ends:
 * release, its connection closing, its ttl, its owner process exiting, a
 * forced shutdown. Every grant and release is journaled before the client
 * hears of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "berthd.h"
#include "leases.h"
#include "ops.h"
#include "queue.h"
#include "status.h"
#include "pidstart.h"
#include "journal_reserve.h"

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

/* ---- grant and end ---- */

/* The watch and a restore say a lease ended by itself. */
static void lease_ended (uint64_t id, const char *reason, void *arg)
{
    struct berthd *d = arg;
    struct lease *ls = lease_book_find (d->book, id);
    if (ls)
        lease_end (d, ls, reason);
}

int leases_init (struct berthd *d, berth_error_t *err)
{
    struct journal_config jc = { d->state_dir, d->cfg.journal_records,
                                 d->cfg.reclaim_grace,
                                 d->cfg.discard_journal };
    if (!(d->book = lease_book_create ())
        || !(d->watch = lease_watch_create (d->base, lease_ended, d))
        || !(d->journal = journal_create (d->base, &jc, lease_ended, d))) {
        leases_close (d);
        return errprintf (err, "out of memory");
    }
    return 0;
}

void leases_close (struct berthd *d)
{
    /* the watch first: its events name leases of the book */
    lease_watch_destroy (d->watch);
    d->watch = NULL;
    journal_destroy (d->journal);
    d->journal = NULL;
    lease_book_destroy (d->book);
    d->book = NULL;
}

int lease_grant (struct berthd *d, struct waiter *p, uint64_t id,
                 char **reply, size_t *reply_len, berth_error_t *err)
{
    char late[1024];
    /* Time has passed while it waited: check its duration again. */
    if (jobend_admit (d->jobend, &p->acq, late, sizeof (late), err) < 0) {
        ledger_release (d->ledger, id, NULL);
        queue_schedule_soon (d->queue);
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
    ls->peer_pid = p->pid;
    ls->peer_start = p->start;
    ls->uid = p->uid;
    ls->owner_pid = p->acq.owner_pid;
    ls->owner_start = p->owner_start;
    ls->granted = now_wall ();
    if (ls->detached && p->acq.ttl >= 0) {
        ls->expires = ls->granted + p->acq.ttl;
        ls->expires_boot = now_boot () + p->acq.ttl;
    }
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
    /* in the book, and bound to its connection, before it is journaled:
     * both can fail, the journal record cannot be taken back */
    berth_error_t why;
    if (lease_book_add (d->book, ls, &why) < 0) {
        errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory recording a "
                        "lease");
        goto fail;
    }
    if (!ls->detached && p->client
        && lease_book_bind (d->book, id, p->client, &why) < 0) {
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
    if (journal_grant (d->journal, ls, &lt, p->wait_id, idtext, err) < 0) {
        free (idtext);
        lease_text_free (&lt);
        if (strcmp (err->code, JOURNAL_ERR_NO_SPACE))   /* that one waits */
            err->code = PROTO_ERR_INTERNAL;
        goto fail;
    }
    p->wait_id = 0;            /* ended by the grant record */
    int owner = 0;
    if (lease_watch_ttl (d->watch, id, ls->expires) < 0
        || (owner = lease_watch_pid (d->watch, id, ls->owner_pid,
                                     ls->owner_start, ls->detached)) < 0)
        log_msg (LOG_ERR, "could not watch the ttl or owner of %s; it ends "
                 "only by release", ls->name);
    /* the reply and the event, from the same text */
    size_t len = 0;
    if (late[0])
        log_msg (LOG_WARNING, "%s: %s", ls->name, late);
    *reply = grant_reply_line (&lt, idtext, late[0] ? late : NULL,
                               p->acq.env, reply_len);
    free (idtext);
    char *ev = granted_event_line (&lt, &len);
    events_emit_line (d->events, ev, ev ? len : 0);
    lease_text_free (&lt);
    notify_status_soon (d->notify);
    if (owner == 1)       /* exited between the request and the grant */
        lease_end (d, ls, "owner_exited");
    return 0;
fail:
    if (lease_book_find (d->book, id) == ls)
        lease_book_remove (d->book, id);
    lease_free (ls);
    ledger_release (d->ledger, id, NULL);
    queue_schedule_soon (d->queue);
    return -1;
}

void lease_end (struct berthd *d, struct lease *ls, const char *reason)
{
    lease_end_outcome (d, ls, reason, NULL);
}

void lease_end_outcome (struct berthd *d, struct lease *ls, const char *reason,
                        const struct proto_outcome *outcome)
{
    berth_error_t err;
    if (ledger_release (d->ledger, ls->id, &err) < 0)
        log_msg (LOG_ERR, "releasing %s: %s", ls->name, err.text);
    /* one time, written once, for the journal and the event */
    double now = now_wall ();
    char when[40];
    json_real_text (now, when, sizeof (when));
    if (journal_release (d->journal, ls->id, when, reason, &err) < 0)
        log_msg (LOG_ERR, "%s", err.text);
    size_t len = 0;
    char *ev = released_event_line_outcome (when, ls->name, ls->label, reason,
                                            outcome, &len);
    if (proto_outcome_failed (outcome))
        status_note_failure (d, ls->name, ls->label, now, outcome);
    if (ev)
        events_emit_line (d->events, ev, len);
    else
        events_emit (d->events, proto_event_released (now, ls->name,
                                                      ls->label, reason));
    lease_watch_stop (d->watch, ls->id);
    lease_free (lease_book_remove (d->book, ls->id));
    queue_schedule_soon (d->queue);
    notify_status_soon (d->notify);
    berthd_check_drained (d);
}

void lease_end_all (struct berthd *d, const char *reason)
{
    size_t n;
    uint64_t *ids = lease_book_ids (d->book, &n);
    if (!ids) {
        log_msg (LOG_ERR, "out of memory ending every lease");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct lease *ls = lease_book_find (d->book, ids[i]);
        if (ls)
            lease_end (d, ls, reason);
    }
    free (ids);
}

void leases_client_gone (struct berthd *d, struct client *cl)
{
    struct lease *ls;
    while ((ls = lease_book_take (d->book, cl)))
        lease_end (d, ls, "disconnected");
}

/* An orphaned lease bound to c from now on (it ends when c goes). */
int lease_rebind (struct berthd *d, struct client *c, struct lease *ls,
                  berth_error_t *err)
{
    berth_error_t why;
    if (lease_book_bind (d->book, ls->id, c, err) < 0)
        return -1;
    /* its holder is back: no grace, and no watch (it ends when c closes) */
    lease_watch_stop (d->watch, ls->id);
    ls->reclaim_by = -1;
    pid_t was = ls->peer_pid;
    ls->peer_pid = c->pid;
    ls->peer_start = client_start (c);
    /* Another process took it: a later restart must watch that one. */
    if (was != c->pid && journal_reclaim (d->journal, ls, &why) < 0)
        log_msg (LOG_WARNING, "%s", why.text);
    log_msg (LOG_INFO, "%s reclaimed by pid %d", ls->name, (int) c->pid);
    notify_status_soon (d->notify);
    return 0;
}
