/* SPDX-License-Identifier: MIT */
/* The allocation's end (jobend.c), for status and for requests that state a
 * duration: known from the environment, or asked of the scheduler once,
 * lazily, on a thread of its own. It knows nothing of connections: a caller
 * whose request needs the end asks jobend_ready, and when that says false
 * it keeps the request until the known callback given at creation says the
 * answer has arrived. */
#ifndef BERTHD_JOBEND_H
#define BERTHD_JOBEND_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <event2/event.h>

#include "allocation.h"
#include "codec.h"
#include "deadline.h"
#include "error.h"

struct jobend;

/* Called from the loop, once, when the scheduler's answer (or its failure)
 * has arrived; not called for an end known at once. */
typedef void (*jobend_known_fn) (void *arg);

/* alloc is borrowed and must outlive the object. NULL (err) when out of
 * memory. Nothing is asked yet. */
struct jobend *jobend_create (struct event_base *base,
                              const struct allocation *alloc,
                              enum deadline_policy policy,
                              jobend_known_fn known, void *arg,
                              berth_error_t *err);
/* A query still running is left to its thread (NULL: nothing). */
void jobend_destroy (struct jobend *je);
/* Whether the end is known (or known to be unknown). When it is not, the
 * query is started (the first time) and known is called once it answers. */
bool jobend_ready (struct jobend *je);
/* Call known now, whatever is known: a drain waits for no query, and
 * requests that wait for the answer are served again (and refused). */
void jobend_wake (struct jobend *je);
double jobend_get (const struct jobend *je);   /* < 0: unknown (or not yet) */
/* 0: the request may go on (warn gets a warning when the policy is warn and
 * it runs past the end, else ""); -1: refused (err: unsatisfiable). */
int jobend_admit (const struct jobend *je, const struct proto_acquire *a,
                  char *warn, size_t size, berth_error_t *err);
/* job_end, time_left_s, job_end_source, deadline_policy members of a
 * status's allocation: what is known, never a query. */
int jobend_status (struct jobend *je, json_t *allocation);

#endif
