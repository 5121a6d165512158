/* SPDX-License-Identifier: MIT */
/* The allocation's end: from the environment where the scheduler states it
 * (SLURM_JOB_END_TIME, Slurm 23.02 and later), else asked once, lazily, the
 * first time a request states a duration or someone asks for the time left
 * (never at start-up: a start inside an allocation asks the scheduler
 * nothing). The one query (deadline_query, up to its timeout) runs on a
 * thread of its own, so that the loop goes on serving everyone else; the
 * caller keeps the requests that need its answer, and the known callback
 * tells it when to serve them again. A thread rather than a child process
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

#include "clock.h"
#include "deadline_query.h"
#include "jobend.h"
#include "log.h"

#define JOBEND_QUERY_TIMEOUT 10.0   /* seconds */

enum jobend_state { JOBEND_UNASKED, JOBEND_ASKING, JOBEND_KNOWN };

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

struct jobend {
    struct event_base *base;
    const struct allocation *alloc;
    enum deadline_policy policy;
    jobend_known_fn known;
    void *known_arg;
    enum jobend_state state;
    double end;                   /* Unix time; < 0: unknown */
    struct deadline_source src;
    struct jobend_query *query;   /* while JOBEND_ASKING */
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

static void learn (struct jobend *je, int rc, double end,
                   const struct deadline_source *src, const char *why)
{
    je->state = JOBEND_KNOWN;
    je->end = rc < 0 ? -1 : end;
    if (rc < 0) {
        log_msg (LOG_WARNING, "the end of job %s is not known (%s); requests "
                 "that state a duration are not checked against it",
                 je->alloc->job_id, why);
        return;
    }
    je->src = *src;
    log_msg (LOG_INFO, "job %s ends at %.0f (%s)", je->alloc->job_id, end,
             src->name);
}

static void query_done_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct jobend *je = arg;
    struct jobend_query *q = je->query;
    pthread_join (q->thread, NULL);
    je->query = NULL;
    learn (je, q->rc, q->end, &q->src, q->err.text);
    query_free (q);
    if (je->known)
        je->known (je->known_arg);
}

/* Ask on a thread; -1 (err) when it cannot be started. */
static int query_start (struct jobend *je, berth_error_t *err)
{
    struct jobend_query *q = calloc (1, sizeof (*q));
    sigset_t all, old;
    if (!q)
        return errprintf (err, "out of memory");
    q->wake[0] = q->wake[1] = -1;
    q->system = je->alloc->system;
    if (!(q->job_id = strdup (je->alloc->job_id))
        || pipe2 (q->wake, O_CLOEXEC | O_NONBLOCK) < 0
        || !(q->done_ev = event_new (je->base, q->wake[0], EV_READ,
                                     query_done_cb, je))
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
    je->query = q;
    je->state = JOBEND_ASKING;
    return 0;
}

/* What the environment states, once nothing else is known. */
static bool from_env (struct jobend *je)
{
    double end;
    struct deadline_source src;
    if (je->state == JOBEND_KNOWN)
        return true;
    if (!deadline_from_env (NULL, &end, &src))
        return false;
    je->state = JOBEND_KNOWN;
    je->end = end;
    je->src = src;
    return true;
}

struct jobend *jobend_create (struct event_base *base,
                              const struct allocation *alloc,
                              enum deadline_policy policy,
                              jobend_known_fn known, void *arg,
                              berth_error_t *err)
{
    struct jobend *je = calloc (1, sizeof (*je));
    if (!je) {
        errprintf (err, "out of memory");
        return NULL;
    }
    je->base = base;
    je->alloc = alloc;
    je->policy = policy;
    je->known = known;
    je->known_arg = arg;
    je->state = JOBEND_UNASKED;
    je->end = -1;
    return je;
}

void jobend_destroy (struct jobend *je)
{
    if (!je)
        return;
    struct jobend_query *q = je->query;
    if (q) {
        /* its done event goes (it names je); the thread keeps q */
        event_free (q->done_ev);
        q->done_ev = NULL;
        pthread_detach (q->thread);
        abandoned = q;
    }
    free (je);
}

bool jobend_ready (struct jobend *je)
{
    berth_error_t err;
    if (je->state == JOBEND_ASKING)
        return false;
    if (from_env (je))
        return true;
    if (!je->alloc->job_id || (je->alloc->system != BERTH_SYSTEM_SLURM
                               && je->alloc->system != BERTH_SYSTEM_PBS)) {
        je->state = JOBEND_KNOWN;
        je->end = -1;
        return true;
    }
    if (query_start (je, &err) == 0)
        return false;
    learn (je, -1, -1, NULL, err.text);
    return true;
}

void jobend_wake (struct jobend *je)
{
    if (je && je->known)
        je->known (je->known_arg);
}

double jobend_get (const struct jobend *je)
{
    return je->state == JOBEND_KNOWN ? je->end : -1;
}

int jobend_admit (const struct jobend *je, const struct proto_acquire *a,
                  char *warn, size_t size, berth_error_t *err)
{
    char msg[sizeof (err->text)];
    warn[0] = '\0';
    if (a->duration < 0)
        return 0;
    if (deadline_check (now_wall (), jobend_get (je), a->duration,
                        a->step.label, msg, sizeof (msg)) == 0)
        return 0;
    if (je->policy == DEADLINE_WARN) {
        snprintf (warn, size, "%s", msg);
        return 0;
    }
    return errprintf_code (err, PROTO_ERR_UNSATISFIABLE, "%s", msg);
}

int jobend_status (struct jobend *je, json_t *allocation)
{
    /* a plain status (every `berth status` of a batch script) must not cost
     * a scheduler query: it shows what is known */
    double end = from_env (je) ? jobend_get (je) : -1;
    json_t *left = end >= 0 ? json_real (end - now_wall () > 0
                                         ? end - now_wall () : 0)
                            : json_null ();
    return json_object_update_new (allocation, json_pack (
        "{s:o s:o s:s? s:s}", "job_end", end >= 0 ? json_real (end) : json_null (),
        "time_left_s", left, "job_end_source",
        end >= 0 ? je->src.name : NULL,
        "deadline_policy", deadline_policy_name (je->policy)));
}
