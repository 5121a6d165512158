/* SPDX-License-Identifier: MIT */
/* berthd's wait queue (daemon/queue.c) on an event loop of the test's, with
 * a real ledger of one 4-core node and a real journal in a temporary state
 * directory: a request that fits is granted at once; one that never fits is
 * refused unsatisfiable, naming what it needs; with the allocation full,
 * wait=false is refused busy and wait=true waits, journaled, and is granted
 * through its callback exactly once after a release; a wait timeout refuses
 * it through the callback; a drain (queue_refuse_all) answers every waiter
 * and a cancel answers none; waiters for the same freed cores are granted
 * in arrival order; a queue destroyed with waiters answers none. Nothing
 * asserts how long anything takes: the loop is run until the answer comes
 * (or a generous limit passes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "berthd.h"
#include "ops.h"
#include "queue.h"
#include "testutil.h"

/* How long the loop is run for an answer before the test gives up: far
 * more than any answer takes, so that a loaded machine never fails it. */
#define ANSWER_LIMIT 5.0

static char dir[64];
static berth_error_t err;
static struct berthd d;
static struct client cl;
static struct allocation alloc;
static struct allocation_node node;
static int core_ids[4] = { 0, 1, 2, 3 };
static char node_name[] = "n0";

/* Every late answer, in the order the queue gave them. */
struct answer {
    json_int_t id;
    uint64_t lease;
    char code[32];
    char text[1024];
    bool refused;
};
static struct answer answers[16];
static int nanswers;

/* The waiter's one callback, as the acquire op's: record the answer, then
 * free the waiter (the callback owns it from now on). */
static void done (struct waiter *w, uint64_t lease, const berth_error_t *e)
{
    ck_assert_int_lt (nanswers, 16);
    struct answer *a = &answers[nanswers++];
    a->id = json_integer_value (w->id);
    a->lease = lease;
    a->refused = e != NULL;
    snprintf (a->code, sizeof (a->code), "%s", e && e->code ? e->code : "");
    snprintf (a->text, sizeof (a->text), "%s", e ? e->text : "");
    /* it must be out of the queue already */
    ck_assert_uint_eq (w->ticket, 0);
    queue_free_waiter (d.queue, w);
}

static void setup (void)
{
    snprintf (dir, sizeof (dir), "/tmp/berth-queue-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    memset (&d, 0, sizeof (d));
    nanswers = 0;
    d.cfg.starvation_overtakes = WAITQUEUE_DEFAULT_OVERTAKES;
    d.cfg.starvation_seconds = WAITQUEUE_DEFAULT_MAX_WAIT;
    d.cfg.journal_records = 1000;
    d.cfg.reclaim_grace = 60;
    ck_assert_ptr_nonnull (d.base = event_base_new ());
    /* One node of 4 cores, berthd's own (local steps fit it). */
    node = (struct allocation_node) { node_name, core_ids, 4, 0, -1, -1 };
    alloc = (struct allocation) { .nodes = &node, .nnodes = 1,
                                  .local_node = 0, .mpi_allowed = true };
    d.alloc = &alloc;
    /* The ledgers come from the journal, as at berthd's start: a fresh one
     * in the test's state directory, so that waits are journaled. */
    struct journal_config jc = { dir, d.cfg.journal_records,
                                 d.cfg.reclaim_grace, false };
    ck_assert_ptr_nonnull (d.journal = journal_create (d.base, &jc, NULL,
                                                       NULL));
    ck_assert_msg (journal_open_ledger (d.journal, &alloc, &d.ledger,
                                        &d.empty, &err) == 0, "%s", err.text);
    d.layout = LEDGER_CPU_BINDING;
    ledger_capacity (d.ledger, &d.capacity);
    /* events and notify NULL: both are no-ops then */
    ck_assert_msg ((d.queue = queue_create (&d, &err)) != NULL, "%s",
                   err.text);
    /* This process is the client: its /proc entry is real. */
    cl = (struct client) { .serial = 1, .pid = getpid (), .uid = getuid () };
}

static void teardown (void)
{
    char cmd[128];
    /* the queue unwaits through the journal: it goes first */
    queue_destroy (d.queue);
    journal_destroy (d.journal);
    ledger_destroy (d.ledger);
    ledger_destroy (d.empty);
    event_base_free (d.base);
    snprintf (cmd, sizeof (cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq (system (cmd), 0);
}

/* A waiter as the acquire op makes one: a local step of `cores` cores
 * (the shape as step_cut_to_fit leaves a plain one), no duration. */
static struct waiter *mkwaiter (int id, const char *label, int cores,
                                bool wait, double timeout)
{
    struct waiter *w = calloc (1, sizeof (*w));
    ck_assert_ptr_nonnull (w);
    w->client = &cl;
    w->done = done;
    w->arg = &d;
    w->id = json_integer (id);
    step_request_init (&w->acq.step);
    w->acq.step.label = label ? strdup (label) : NULL;
    w->acq.step.cores = cores;
    w->acq.step.local = true;
    w->acq.step.timeout = timeout;
    w->acq.wait = wait;
    w->acq.ttl = -1;
    w->acq.duration = -1;
    w->shape = (struct step_shape) { .ntasks = 1, .cpus_per_task = cores,
                                     .cores = cores, .memory = -1,
                                     .budget = -1, .local = true };
    w->layout = LEDGER_CPU_BINDING;
    w->since = now_wall ();
    return w;
}

/* Submit a request that must be granted at once; its lease. */
static uint64_t hold (int cores)
{
    struct waiter *w = mkwaiter (0, "holder", cores, true, -1);
    uint64_t lease = 0;
    ck_assert_int_eq (queue_submit (d.queue, w, &lease, &err), QUEUE_GRANTED);
    queue_free_waiter (d.queue, w);
    ck_assert_ptr_nonnull (ledger_lease_find (d.ledger, lease));
    return lease;
}

/* Submit a request that must wait. */
static struct waiter *must_wait (int id, const char *label, int cores,
                                 double timeout)
{
    struct waiter *w = mkwaiter (id, label, cores, true, timeout);
    uint64_t lease = 0;
    ck_assert_msg (queue_submit (d.queue, w, &lease, &err) == QUEUE_WAITS,
                   "%s did not wait", label);
    ck_assert_uint_eq (lease, 0);
    return w;
}

/* Run the loop until `want` answers have come, or ANSWER_LIMIT passes. */
static void loop_until (int want)
{
    double give_up = now_mono () + ANSWER_LIMIT;
    while (nanswers < want && now_mono () < give_up) {
        /* a short loopexit so that a pending timer is waited on, not spun */
        struct timeval tv = { 0, 10000 };
        event_base_loopexit (d.base, &tv);
        event_base_loop (d.base, EVLOOP_ONCE);
    }
}

/* Run what is ready now, without waiting: what the queue would do if the
 * loop came round with nothing new. */
static void loop_now (void)
{
    event_base_loop (d.base, EVLOOP_NONBLOCK);
}

/* The number of leases the ledger holds. */
static int held (void)
{
    const struct ledger_lease **v;
    int n;
    ck_assert_int_eq (ledger_leases (d.ledger, &v, &n, &err), 0);
    free (v);
    return n;
}

/* Whether the journal holds a line containing s. */
static bool journal_has (const char *s)
{
    char path[128], line[1024];
    bool found = false;
    snprintf (path, sizeof (path), "%s/journal.jsonl", dir);
    FILE *f = fopen (path, "r");
    ck_assert_ptr_nonnull (f);
    while (!found && fgets (line, sizeof (line), f))
        found = strstr (line, s) != NULL;
    fclose (f);
    return found;
}

START_TEST (fits_is_granted_at_once)
{
    struct waiter *w = mkwaiter (1, "small", 2, true, -1);
    uint64_t lease = 0;
    ck_assert_int_eq (queue_submit (d.queue, w, &lease, &err), QUEUE_GRANTED);
    ck_assert_uint_ne (lease, 0);
    const struct ledger_lease *ll = ledger_lease_find (d.ledger, lease);
    ck_assert_ptr_nonnull (ll);
    ck_assert_int_eq (ll->shape.cores, 2);
    /* granted without waiting: not queued, nothing journaled, no callback */
    ck_assert_int_eq (queue_waiting (d.queue), 0);
    ck_assert_uint_eq (w->wait_id, 0);
    ck_assert_uint_eq (w->ticket, 0);
    ck_assert_int_eq (nanswers, 0);
    /* the caller owns a waiter that did not wait */
    queue_free_waiter (d.queue, w);
    ck_assert_int_eq (held (), 1);
    ck_assert_int_eq (ledger_release (d.ledger, lease, &err), 0);
}
END_TEST

START_TEST (never_fits_is_unsatisfiable)
{
    /* Even with the allocation empty, and with it full: waiting cannot
     * help, so the answer is the same. */
    for (int full = 0; full < 2; full++) {
        uint64_t h = full ? hold (4) : 0;
        struct waiter *w = mkwaiter (2, "big", 8, true, -1);
        uint64_t lease = 0;
        ck_assert_int_eq (queue_submit (d.queue, w, &lease, &err),
                          QUEUE_REFUSED);
        ck_assert_str_eq (err.code, PROTO_ERR_UNSATISFIABLE);
        /* it names the step and what it needs */
        ck_assert_msg (strstr (err.text, "step 'big'")
                       && strstr (err.text, "8 cores"), "%s", err.text);
        ck_assert_int_eq (queue_waiting (d.queue), 0);
        ck_assert_uint_eq (w->wait_id, 0);
        queue_free_waiter (d.queue, w);
        ck_assert_int_eq (held (), full);
        if (h)
            ck_assert_int_eq (ledger_release (d.ledger, h, &err), 0);
    }
    ck_assert_int_eq (nanswers, 0);
}
END_TEST

START_TEST (full_refuses_busy_or_waits_then_grants)
{
    uint64_t h = hold (4);
    /* wait=false: refused now, not queued */
    struct waiter *nw = mkwaiter (3, "impatient", 1, false, -1);
    uint64_t lease = 0;
    ck_assert_int_eq (queue_submit (d.queue, nw, &lease, &err),
                      QUEUE_REFUSED);
    ck_assert_str_eq (err.code, PROTO_ERR_BUSY);
    ck_assert_msg (strstr (err.text, "\"wait\" is false"), "%s", err.text);
    ck_assert_int_eq (queue_waiting (d.queue), 0);
    queue_free_waiter (d.queue, nw);

    /* wait=true: it waits, journaled */
    struct waiter *w = must_wait (4, "patient", 1, -1);
    ck_assert_int_eq (queue_waiting (d.queue), 1);
    ck_assert_uint_ne (w->wait_id, 0);
    ck_assert (journal_has ("\"op\":\"wait\""));
    struct waitqueue_entry_info info;
    ck_assert_int_eq (queue_entry (d.queue, 0, &info), 0);
    ck_assert_ptr_eq (queue_waiter_of (info.owner), w);
    ck_assert_int_eq (queue_entry (d.queue, 1, &info), -1);

    /* nothing freed: the loop coming round grants nothing */
    queue_schedule_soon (d.queue);
    loop_now ();
    ck_assert_int_eq (nanswers, 0);
    ck_assert_int_eq (queue_waiting (d.queue), 1);

    /* the holder goes: the waiter is granted through its callback */
    ck_assert_int_eq (ledger_release (d.ledger, h, &err), 0);
    queue_schedule_soon (d.queue);
    loop_until (1);
    ck_assert_int_eq (nanswers, 1);
    ck_assert_int_eq (answers[0].id, 4);
    ck_assert (!answers[0].refused);
    ck_assert_uint_ne (answers[0].lease, 0);
    ck_assert_ptr_nonnull (ledger_lease_find (d.ledger, answers[0].lease));
    ck_assert_int_eq (queue_waiting (d.queue), 0);
    /* freed by the callback: its wait is over in the journal */
    ck_assert (journal_has ("\"op\":\"unwait\""));

    /* exactly once: more loops, another schedule, no second answer */
    queue_schedule_soon (d.queue);
    loop_now ();
    loop_now ();
    ck_assert_int_eq (nanswers, 1);
    ck_assert_int_eq (held (), 1);
    ck_assert_int_eq (ledger_release (d.ledger, answers[0].lease, &err), 0);
}
END_TEST

START_TEST (wait_timeout_refuses)
{
    uint64_t h = hold (4);
    struct waiter *w = must_wait (5, "hurried", 2, 0.05);
    ck_assert_ptr_nonnull (w->timer);
    loop_until (1);
    ck_assert_int_eq (nanswers, 1);
    ck_assert_int_eq (answers[0].id, 5);
    ck_assert (answers[0].refused);
    ck_assert_uint_eq (answers[0].lease, 0);
    ck_assert_str_eq (answers[0].code, PROTO_ERR_TIMEOUT);
    ck_assert_msg (strstr (answers[0].text, "step 'hurried'")
                   && strstr (answers[0].text, "waited"), "%s",
                   answers[0].text);
    ck_assert_int_eq (queue_waiting (d.queue), 0);
    /* a release after it gave up grants it nothing */
    ck_assert_int_eq (ledger_release (d.ledger, h, &err), 0);
    queue_schedule_soon (d.queue);
    loop_now ();
    ck_assert_int_eq (nanswers, 1);
    ck_assert_int_eq (held (), 0);
}
END_TEST

START_TEST (refuse_all_and_cancel)
{
    uint64_t h = hold (4);
    /* a and c are answered by the drain, whose callback frees them */
    must_wait (6, "a", 1, -1);
    struct waiter *b = must_wait (7, "b", 2, 30);
    must_wait (8, "c", 3, -1);
    ck_assert_int_eq (queue_waiting (d.queue), 3);

    /* cancel: out of the queue, no answer; the caller frees it */
    queue_cancel (d.queue, b);
    ck_assert_int_eq (queue_waiting (d.queue), 2);
    ck_assert_uint_eq (b->ticket, 0);
    loop_now ();
    ck_assert_int_eq (nanswers, 0);
    queue_free_waiter (d.queue, b);

    /* a drain: every waiter answered, with the drain's code and words */
    queue_refuse_all (d.queue, PROTO_ERR_SHUTTING_DOWN, "draining now");
    ck_assert_int_eq (nanswers, 2);
    ck_assert_int_eq (queue_waiting (d.queue), 0);
    bool saw_a = false, saw_c = false;
    for (int i = 0; i < nanswers; i++) {
        ck_assert (answers[i].refused);
        ck_assert_uint_eq (answers[i].lease, 0);
        ck_assert_str_eq (answers[i].code, PROTO_ERR_SHUTTING_DOWN);
        ck_assert_str_eq (answers[i].text, "draining now");
        saw_a |= answers[i].id == 6;
        saw_c |= answers[i].id == 8;
    }
    ck_assert (saw_a && saw_c);

    /* nothing left to grant: a release and the loop answer no one again
     * (b's 30 s timer went with it) */
    ck_assert_int_eq (ledger_release (d.ledger, h, &err), 0);
    queue_schedule_soon (d.queue);
    loop_now ();
    ck_assert_int_eq (nanswers, 2);
    ck_assert_int_eq (held (), 0);
}
END_TEST

START_TEST (arrival_order)
{
    uint64_t h = hold (4);
    /* both want all of it: one release can serve only one of them */
    struct waiter *first = must_wait (10, "first", 4, -1);
    struct waiter *second = must_wait (11, "second", 4, -1);
    struct waitqueue_entry_info info;
    ck_assert_int_eq (queue_entry (d.queue, 0, &info), 0);
    ck_assert_ptr_eq (queue_waiter_of (info.owner), first);
    ck_assert_int_eq (queue_entry (d.queue, 1, &info), 0);
    ck_assert_ptr_eq (queue_waiter_of (info.owner), second);

    ck_assert_int_eq (ledger_release (d.ledger, h, &err), 0);
    queue_schedule_soon (d.queue);
    loop_until (1);
    ck_assert_int_eq (nanswers, 1);
    ck_assert_int_eq (answers[0].id, 10);
    ck_assert (!answers[0].refused);
    ck_assert_int_eq (queue_waiting (d.queue), 1);
    ck_assert_int_eq (queue_entry (d.queue, 0, &info), 0);
    ck_assert_ptr_eq (queue_waiter_of (info.owner), second);

    ck_assert_int_eq (ledger_release (d.ledger, answers[0].lease, &err), 0);
    queue_schedule_soon (d.queue);
    loop_until (2);
    ck_assert_int_eq (nanswers, 2);
    ck_assert_int_eq (answers[1].id, 11);
    ck_assert (!answers[1].refused);
    ck_assert_ptr_nonnull (ledger_lease_find (d.ledger, answers[1].lease));
    ck_assert_int_eq (queue_waiting (d.queue), 0);
    ck_assert_int_eq (ledger_release (d.ledger, answers[1].lease, &err), 0);
}
END_TEST

/* A queue destroyed with waiters in it lets them go unanswered (and, under
 * ASan, leaks nothing). */
START_TEST (destroy_with_waiters)
{
    hold (4);
    must_wait (12, "left", 1, 30);
    must_wait (13, NULL, 2, -1);
    ck_assert_int_eq (queue_waiting (d.queue), 2);
    queue_destroy (d.queue);
    d.queue = NULL;
    ck_assert_int_eq (nanswers, 0);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("queue");
    TCase *tc = tcase_create ("queue");
    tcase_add_checked_fixture (tc, setup, teardown);
    /* above ANSWER_LIMIT, so that a missing answer fails its assertion
     * rather than Check's 4-second default timeout */
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, fits_is_granted_at_once);
    tcase_add_test (tc, never_fits_is_unsatisfiable);
    tcase_add_test (tc, full_refuses_busy_or_waits_then_grants);
    tcase_add_test (tc, wait_timeout_refuses);
    tcase_add_test (tc, refuse_all_and_cancel);
    tcase_add_test (tc, arrival_order);
    tcase_add_test (tc, destroy_with_waiters);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
