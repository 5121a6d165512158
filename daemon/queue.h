/* SPDX-License-Identifier: MIT */
/* Requests that wait for resources: the wait queue (waitqueue.c, pure) with
 * timers, journaled places and the "waited" event around it. A request is
 * tried at once; one that cannot fit even the empty allocation is refused
 * at once; the rest wait, in order with backfill, until a release lets the
 * queue grant them, their timeout passes, or they are cancelled. What is
 * decided at once is returned; what is decided later comes back through
 * the waiter's one callback. */
#ifndef BERTHD_QUEUE_H
#define BERTHD_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>
#include <event2/event.h>

#include "codec.h"
#include "error.h"
#include "ledger.h"
#include "step.h"
#include "waitqueue.h"

struct berthd;
struct client;
struct waiter;

/* A waiter's late answer: lease > 0 is a ledger grant (the callback owns
 * it from now on); otherwise err says why it was refused. The waiter is out
 * of the queue when this is called, and the callback frees it. */
typedef void (*waiter_done_fn) (struct waiter *w, uint64_t lease,
                                const berth_error_t *err);
/* A grant of a scheduling round made a lease (its journal record): called
 * for every grant of the round in lease id order, the request being
 * submitted included, before any waiter of the round is answered, so that
 * the journal never holds a later id before an earlier one. 0: recorded
 * (w->answer says the grant, or why it was refused); 1: it cannot be
 * recorded for want of space (why says so) and the ledger's grant is given
 * back: the request keeps its place and grants are held until there is
 * room. */
typedef int (*waiter_grant_fn) (struct waiter *w, uint64_t lease,
                                berth_error_t *why);

/* An acquire being served. Made by the acquire op, owned by it; while it
 * waits the queue holds it too. */
struct waiter {
    struct client *client;        /* who asked; NULL for a restored one */
    pid_t pid;                    /* the process that asked, its uid and */
    uid_t uid;                    /* start time (pidstart.h; 0: unknown): */
    uint64_t start;               /* journaled with the wait and the grant */
    const char *line;             /* the request as sent (borrowed, during */
    size_t line_len;              /* queue_submit only): journaled with the
                                     wait; NULL: not journaled */
    json_t *id;                   /* the request's id */
    struct proto_acquire acq;
    struct step_shape shape;
    enum ledger_layout layout;
    waiter_done_fn done;
    waiter_grant_fn record;       /* NULL: done records the grant itself */
    void *arg;                    /* for done and record */
    char *answer;                 /* set by record: the answer line */
    size_t answer_len;
    bool recorded;                /* record has made its lease */
    uint64_t ticket;              /* 0 while not queued */
    struct event *timer;          /* its wait timeout */
    double deadline;              /* monotonic: when the timeout passes */
    uint64_t wait_id;             /* its journaled wait record; 0: none */
    uint64_t owner_start;         /* acq.owner_pid's start time when it asked
                                     (pidstart.h); 0: unknown */
    bool resumed;                 /* took back a place from before a restart */
    bool restored;                /* put back in its place from the journal
                                     after a restart (no client: its process
                                     has not sent it again yet) */
    struct waiter *same_pid;      /* the queue's other restored waiters of
                                     this pid */
    double since;                 /* wall clock: when it first arrived (before
                                     a restart, for a resumed one) */
    uint64_t granted;             /* set by queue_submit's own grant */
    struct queue *queue;          /* while queued */
    struct waiter *prev, *next;   /* in the queue's list while queued */
    struct pid_waiters *of_pid;   /* its process's queued waiters (NULL:
                                     not indexed: pid 0, or no memory) */
    struct waiter *pprev, *pnext; /* in of_pid's list */
    struct waiter *cprev, *cnext; /* in its client's list while it waits */
};

enum queue_outcome {
    QUEUE_GRANTED,                /* *lease holds the ledger's grant */
    QUEUE_REFUSED,                /* err says why */
    QUEUE_WAITS,                  /* the answer comes through w->done */
};

struct queue *queue_create (struct berthd *d, berth_error_t *err);
void queue_destroy (struct queue *q);    /* waiters are not answered */

enum queue_outcome queue_submit (struct queue *q, struct waiter *w,
                                 uint64_t *lease, berth_error_t *err);
/* Take w out of the queue without answering it (its client went away). */
void queue_cancel (struct queue *q, struct waiter *w);
/* Every waiter refused with code and msg (a drain). */
void queue_refuse_all (struct queue *q, const char *code, const char *msg);
/* Try the waiters again soon (resources were freed). */
void queue_schedule_soon (struct queue *q);
int queue_waiting (const struct queue *q);
/* While grants are held for want of space (the journal cannot record
 * them): why, and since when (wall clock); NULL when they are not. */
const char *queue_held (const struct queue *q, double *since);
/* The i-th entry of the wait queue, in order (-1: past the end). */
int queue_entry (const struct queue *q, int i,
                 struct waitqueue_entry_info *info);
/* The entries of pid's waiting requests, those nearest the queue's head
 * when there are more than max (in no order): a walk of that process's
 * waiters only, none of the queue's JSON (a progress poll). */
int queue_entries_of_pid (const struct queue *q, pid_t pid,
                          struct waitqueue_entry_info *info, int max);
/* The waiter behind a wait queue entry's owner. */
const struct waiter *queue_waiter_of (uint64_t owner);
/* A restored waiter's process sent its request again (resume): the
 * earliest restored waiter of that process (pid, uid, start where both are
 * known), the one sent under id first, out of the queue and unanswered for
 * the request to take its place; NULL when it has none. */
struct waiter *queue_take_restored (struct queue *q, pid_t pid, uid_t uid,
                                    uint64_t start, const json_t *id);
/* Restored waiters not taken back within seconds are dropped then. */
int queue_restored_until (struct queue *q, double seconds, berth_error_t *err);
/* Frees w: its journaled wait ends, its timer and request go. */
void queue_free_waiter (struct queue *q, struct waiter *w);

#endif
