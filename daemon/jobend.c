/* SPDX-License-Identifier: MIT */
/* The allocation's end: from the environment where the scheduler states it
 * (SLURM_JOB_END_TIME, Slurm 23.02 and later), else asked once, lazily, the
 * first time a request states a duration or someone asks for the time left
 * (never at start-up: a start inside an allocation asks the scheduler
 * nothing). The one query (deadline_query, up to its timeout) runs on a
 * thread of its own, so that the loop goes on serving everyone else; the
 * requests that need its answer wait for it, unread (conn->awaits_end), and
 * are served again once it is known. A thread rather than a child process
 * watched by the loop: the query stays deadline_query as it is (run_command
 * with its timeout, process-group kill and error texts), and nothing of the
 * daemon (its sockets, its loop) is forked. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "berthd.h"
#include "deadline_query.h"

#define JOBEND_QUERY_TIMEOUT 10.0   /* seconds */

/* The question and, once the thread has been joined, its answer. */
struct jobend_query {
    enum berth_system system;
    char *job_id;
    pthread_t thread;
    int wake[2];                  /* the thread writes a byte when done */
    struct event *done_ev;
    int rc;
    double end;
    struct deadline_source src;
    berth_error_t err;
};

/* A query still running when berthd exits: left to its thread, and kept
 * reachable (it is not a leak, the thread writes into it). */
static struct jobend_query *abandoned;

static void *query_main (void *arg)
{
    struct jobend_query *q = arg;
    char byte = 1;
    q->rc = deadline_query (q->system, q->job_id, NULL, JOBEND_QUERY_TIMEOUT,
                            &q->end, &q->src, &q->err);
    while (write (q->wake[1], &byte, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static void query_free (struct jobend_query *q)
{
    if (q->done_ev)
        event_free (q->done_ev);
    for (int i = 0; i < 2; i++)
        if (q->wake[i] >= 0)
            close (q->wake[i]);
    free (q->job_id);
    free (q);
}

static void learn (struct berthd *d, int rc, double end,
                   const struct deadline_source *src, const char *why)
{
    d->job_end_state = JOBEND_KNOWN;
    d->job_end = rc < 0 ? -1 : end;
    if (rc < 0) {
        log_msg (LOG_WARNING, "the end of job %s is not known (%s); requests "
                 "that state a duration are not checked against it",
                 d->alloc->job_id, why);
        return;
    }
    d->job_end_src = *src;
    log_msg (LOG_INFO, "job %s ends at %.0f (%s)", d->alloc->job_id, end,
             src->name);
}

static void resume_waiters (struct berthd *d)
{
    if (d->end_known)
        d->end_known (d->sink_arg);
}

static void query_done_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct berthd *d = arg;
    struct jobend_query *q = d->job_end_query;
    pthread_join (q->thread, NULL);
    d->job_end_query = NULL;
    learn (d, q->rc, q->end, &q->src, q->err.text);
    query_free (q);
    resume_waiters (d);
}

/* Ask on a thread; -1 (err) when it cannot be started. */
static int query_start (struct berthd *d, berth_error_t *err)
{
    struct jobend_query *q = calloc (1, sizeof (*q));
    sigset_t all, old;
    if (!q)
        return errprintf (err, "out of memory");
    q->wake[0] = q->wake[1] = -1;
    q->system = d->alloc->system;
    if (!(q->job_id = strdup (d->alloc->job_id))
        || pipe2 (q->wake, O_CLOEXEC | O_NONBLOCK) < 0
        || !(q->done_ev = event_new (d->base, q->wake[0], EV_READ,
                                     query_done_cb, d))
        || event_add (q->done_ev, NULL) < 0) {
        errprintf (err, "cannot set up the query: %s", strerror (errno));
        query_free (q);
        return -1;
    }
    /* signals are the loop's (libevent's handlers), not the thread's */
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    int e = pthread_create (&q->thread, NULL, query_main, q);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    if (e) {
        errprintf (err, "cannot start a thread for the query: %s",
                   strerror (e));
        query_free (q);
        return -1;
    }
    d->job_end_query = q;
    d->job_end_state = JOBEND_ASKING;
    return 0;
}

/* What the environment states, once nothing else is known. */
static bool from_env (struct berthd *d)
{
    double end;
    struct deadline_source src;
    if (d->job_end_state == JOBEND_KNOWN)
        return true;
    if (!deadline_from_env (NULL, &end, &src))
        return false;
    d->job_end_state = JOBEND_KNOWN;
    d->job_end = end;
    d->job_end_src = src;
    return true;
}

/* Whether the end is known (or known to be unknown); when it is not, the
 * query is started (the first time). */
bool jobend_ready (struct berthd *d)
{
    berth_error_t err;
    if (d->job_end_state == JOBEND_ASKING)
        return false;
    if (from_env (d))
        return true;
    if (!d->alloc->job_id || (d->alloc->system != BERTH_SYSTEM_SLURM
                              && d->alloc->system != BERTH_SYSTEM_PBS)) {
        d->job_end_state = JOBEND_KNOWN;
        d->job_end = -1;
        return true;
    }
    if (query_start (d, &err) == 0)
        return false;
    learn (d, -1, -1, NULL, err.text);
    return true;
}

double jobend_get (struct berthd *d)
{
    return d->job_end_state == JOBEND_KNOWN ? d->job_end : -1;
}

int jobend_admit (struct berthd *d, const struct proto_acquire *a, char *warn,
                  size_t size, berth_error_t *err)
{
    char msg[sizeof (err->text)];
    warn[0] = '\0';
    if (a->duration < 0)
        return 0;
    if (deadline_check (now_wall (), jobend_get (d), a->duration,
                        a->step.label, msg, sizeof (msg)) == 0)
        return 0;
    if (d->cfg.deadline_policy == DEADLINE_WARN) {
        snprintf (warn, size, "%s", msg);
        return 0;
    }
    return errprintf_code (err, PROTO_ERR_UNSATISFIABLE, "%s", msg);
}

int jobend_status (struct berthd *d, json_t *allocation)
{
    /* a plain status (every `berth status` of a batch script) must not cost
     * a scheduler query: it shows what is known */
    double end = from_env (d) ? jobend_get (d) : -1;
    json_t *left = end >= 0 ? json_real (end - now_wall () > 0
                                         ? end - now_wall () : 0)
                            : json_null ();
    return json_object_update_new (allocation, json_pack (
        "{s:o s:o s:s? s:s}", "job_end", end >= 0 ? json_real (end) : json_null (),
        "time_left_s", left, "job_end_source",
        end >= 0 ? d->job_end_src.name : NULL,
        "deadline_policy", deadline_policy_name (d->cfg.deadline_policy)));
}

void jobend_drain (struct berthd *d)
{
    resume_waiters (d);
}

void jobend_close (struct berthd *d)
{
    struct jobend_query *q = d->job_end_query;
    if (!q)
        return;
    d->job_end_query = NULL;
    event_free (q->done_ev);
    q->done_ev = NULL;
    pthread_detach (q->thread);
    abandoned = q;
}
