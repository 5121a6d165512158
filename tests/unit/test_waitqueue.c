/* SPDX-License-Identifier: MIT */
/* The wait queue: order, backfill, the starvation bound, priority,
 * cancel. Time is passed in, never read. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "waitqueue.h"

static berth_error_t err;
static int ids[64];

static struct ledger *mk (int n, int cores)
{
    static char names[16][16];
    struct ledger_node_spec spec[16];
    for (int i = 0; i < 64; i++)
        ids[i] = i;
    for (int i = 0; i < n; i++) {
        snprintf (names[i], sizeof (names[i]), "n%d", i);
        spec[i] = (struct ledger_node_spec) { names[i], ids, cores, 0, -1 };
    }
    struct ledger *l = ledger_create (spec, n, 0, &err);
    ck_assert_ptr_nonnull (l);
    return l;
}

static struct waitqueue *mkq (struct ledger *l, int n, double t)
{
    struct waitqueue_config cfg = { n, t, false };
    struct waitqueue *q = waitqueue_create (l, &cfg, &err);
    ck_assert_ptr_nonnull (q);
    return q;
}

static uint64_t hold (struct ledger *l, int cores)
{
    struct step_shape s = { .ntasks = 1, .cpus_per_task = cores,
                            .cores = cores, .memory = -1, .budget = -1 };
    uint64_t id;
    ck_assert_int_eq (ledger_acquire (l, &s, LEDGER_CPU_BINDING, &id, NULL, 0,
                                      &err), 0);
    return id;
}

/* A request for one task of some cores; a duration of 0 states none. */
static uint64_t add_req (struct waitqueue *q, const char *label, int cores,
                         int prio, double duration, uint64_t owner,
                         double now)
{
    struct waitqueue_request r = {
        .shape = { .ntasks = 1, .cpus_per_task = cores, .cores = cores,
                   .memory = -1, .budget = -1 },
        .layout = LEDGER_CPU_BINDING, .label = label, .priority = prio,
        .owner = owner, .duration = duration,
    };
    uint64_t t;
    ck_assert_int_eq (waitqueue_add (q, &r, now, &t, &err), 0);
    return t;
}

static uint64_t add (struct waitqueue *q, const char *label, int cores,
                     int prio, uint64_t owner, double now)
{
    return add_req (q, label, cores, prio, 0, owner, now);
}

/* A request that states how long it expects to run. */
static uint64_t add_d (struct waitqueue *q, const char *label, int cores,
                       double duration, uint64_t owner, double now)
{
    return add_req (q, label, cores, 0, duration, owner, now);
}

static struct waitqueue_result res[64];

/* Schedule; returns the number of grants, copied to res. */
static int sched (struct waitqueue *q, struct ledger *l, double now)
{
    struct waitqueue_result *v;
    int n;
    ck_assert_int_eq (waitqueue_schedule (q, now, &v, &n, &err), 0);
    ck_assert_msg (ledger_check_invariants (l, &err) == 0, "%s", err.text);
    ck_assert (n <= 64);
    if (n)
        memcpy (res, v, n * sizeof (*v));
    free (v);
    return n;
}

/* Node of a one-node lease. */
static const char *ledger_node_name_of (struct ledger *l, uint64_t lease)
{
    struct ledger_node_info info;
    ledger_node_info (l, ledger_lease_find (l, lease)->nodes[0].node, &info);
    return info.name;
}

static const char *reason (struct waitqueue *q, int index)
{
    static struct waitqueue_entry_info info;
    ck_assert_int_eq (waitqueue_entry (q, index, &info), 0);
    return info.reason;
}

START_TEST (order_and_backfill)
{
    struct ledger *l = mk (1, 8);
    struct waitqueue *q = mkq (l, 16, -1);
    hold (l, 6);
    uint64_t a = add (q, "a", 4, 0, 1, 0);
    uint64_t b = add (q, "b", 2, 0, 2, 1);
    ck_assert_str_eq (reason (q, 0), "not tried yet");
    ck_assert_int_eq (sched (q, l, 3), 1);
    ck_assert_int_eq (res[0].ticket, b);
    ck_assert_int_eq (res[0].owner, 2);
    ck_assert (res[0].waited == 2.0);
    ck_assert_ptr_nonnull (ledger_lease_find (l, res[0].lease));
    ck_assert_int_eq (waitqueue_length (q), 1);
    add (q, "c", 1, 0, 3, 4);
    ck_assert_int_eq (sched (q, l, 5), 0);
    struct waitqueue_entry_info info;
    ck_assert_int_eq (waitqueue_entry (q, 0, &info), 0);
    ck_assert_int_eq (info.ticket, a);
    ck_assert_str_eq (info.label, "a");
    ck_assert_int_eq (info.position, 1);
    ck_assert_int_eq (info.overtaken, 1);
    ck_assert_int_eq (info.shape->cores, 4);
    ck_assert_str_eq (info.reason, "no node with 4 free cores (best: 0)");
    ck_assert_str_eq (reason (q, 1), "no node with 1 free core (best: 0); "
                      "behind #1 (overtaken 1 of 16 times)");
    ck_assert_int_eq (waitqueue_entry (q, 2, &info), -1);
    ck_assert_int_eq (waitqueue_entry (q, -1, &info), -1);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

START_TEST (arrival_order)
{
    struct ledger *l = mk (1, 8);
    struct waitqueue *q = mkq (l, 16, -1);
    uint64_t t[3];
    for (int i = 0; i < 3; i++)
        t[i] = add (q, NULL, 2, 0, 0, i);
    ck_assert_int_eq (sched (q, l, 3), 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq (res[i].ticket, t[i]);
        ck_assert_int_eq (res[i].lease, i + 1);
    }
    ck_assert_int_eq (waitqueue_length (q), 0);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

/* A request sent again after a restart takes the place of its first
 * arrival (since): ahead of one that came later, behind one that came
 * earlier, and its waiting time counts from then. */
START_TEST (resumed_keeps_its_place)
{
    struct ledger *l = mk (1, 8);
    struct waitqueue *q = mkq (l, 0, -1);       /* strict order */
    uint64_t x = hold (l, 8);
    uint64_t early = add (q, "early", 8, 0, 1, 1.0);
    uint64_t later = add (q, "later", 8, 0, 2, 5.0);
    struct waitqueue_request r = {
        .shape = { .ntasks = 1, .cpus_per_task = 8, .cores = 8,
                   .memory = -1, .budget = -1 },
        .layout = LEDGER_CPU_BINDING, .label = "resumed",
        .owner = 3, .since = 2.0,
    };
    uint64_t resumed;
    ck_assert_int_eq (waitqueue_add (q, &r, 6.0, &resumed, &err), 0);
    struct waitqueue_entry_info info;
    ck_assert_int_eq (waitqueue_entry (q, 0, &info), 0);
    ck_assert_int_eq (info.ticket, early);
    ck_assert_int_eq (waitqueue_entry (q, 1, &info), 0);
    ck_assert_int_eq (info.ticket, resumed);
    ck_assert (info.added == 2.0);
    ck_assert_int_eq (waitqueue_entry (q, 2, &info), 0);
    ck_assert_int_eq (info.ticket, later);
    /* a since in the future, or none, is now */
    r.since = 99.0;
    r.owner = 4;
    uint64_t odd;
    ck_assert_int_eq (waitqueue_add (q, &r, 7.0, &odd, &err), 0);
    ck_assert_int_eq (waitqueue_entry (q, 3, &info), 0);
    ck_assert_int_eq (info.ticket, odd);
    ck_assert (info.added == 7.0);
    ledger_release (l, x, NULL);
    ck_assert_int_eq (sched (q, l, 8.0), 1);
    ck_assert_int_eq (res[0].ticket, early);
    ledger_release (l, res[0].lease, NULL);
    ck_assert_int_eq (sched (q, l, 9.0), 1);
    ck_assert_int_eq (res[0].ticket, resumed);
    ck_assert (res[0].waited == 7.0);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

START_TEST (starvation_by_overtakes)
{
    struct ledger *l = mk (1, 8);
    struct waitqueue *q = mkq (l, 2, -1);
    uint64_t x = hold (l, 6);
    uint64_t a = add (q, "a", 4, 0, 1, 0);
    for (int i = 0; i < 2; i++) {
        add (q, "b", 2, 0, 2, 1);
        ck_assert_int_eq (sched (q, l, 2), 1);
        ck_assert_int_eq (ledger_release (l, res[0].lease, &err), 0);
    }
    uint64_t c = add (q, "c", 2, 0, 3, 3);
    ck_assert_int_eq (sched (q, l, 4), 0);          /* held for a */
    ck_assert_str_eq (reason (q, 1), "held for #1 (overtaken 2 of 2 times)");
    ck_assert_int_eq (ledger_release (l, x, &err), 0);
    ck_assert_int_eq (sched (q, l, 5), 2);
    ck_assert_int_eq (res[0].ticket, a);
    ck_assert_int_eq (res[1].ticket, c);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

START_TEST (starvation_by_time)
{
    struct ledger *l = mk (1, 8);
    struct waitqueue *q = mkq (l, 100, 10);
    hold (l, 6);
    add (q, "a", 4, 0, 1, 0);
    add (q, "b", 1, 0, 2, 1);
    ck_assert_int_eq (sched (q, l, 5), 1);          /* backfill */
    add (q, "c", 1, 0, 3, 6);
    ck_assert_int_eq (sched (q, l, 11), 0);         /* a waited 11 s */
    ck_assert_str_eq (reason (q, 1), "held for #1 (waited 11s of 10s)");
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

/* Held for a wide request: only the nodes nearest to holding it drain for
 * it; later requests still start on the others, and it starts once its
 * nodes are free. */
START_TEST (starvation_holds_nodes)
{
    struct ledger *l = mk (2, 8);
    struct waitqueue *q = mkq (l, 1, -1);
    uint64_t x = hold (l, 6);                       /* n0: 2 free */
    hold (l, 5);                                    /* n1: 3 free */
    uint64_t a = add (q, "a", 8, 0, 1, 0);
    add (q, "b", 3, 0, 2, 1);
    ck_assert_int_eq (sched (q, l, 2), 1);          /* b overtakes a */
    uint64_t c = add (q, "c", 2, 0, 3, 3);
    uint64_t d = add (q, "d", 1, 0, 4, 3);
    /* a is held for: n0 (2 free after b went to n1) is nearest to 8 ... */
    ck_assert_int_eq (sched (q, l, 4), 0);
    ck_assert_str_eq (reason (q, 1), "held for #1 (overtaken 1 of 1 times)");
    /* ... n1 is full; once a core frees there, d starts there, not on n0 */
    ck_assert_int_eq (ledger_release (l, res[0].lease, &err), 0);
    ck_assert_int_eq (sched (q, l, 5), 2);
    ck_assert_int_eq (res[0].ticket, c);
    ck_assert_int_eq (res[1].ticket, d);
    ck_assert_str_eq (ledger_node_name_of (l, res[0].lease), "n1");
    ck_assert_str_eq (ledger_node_name_of (l, res[1].lease), "n1");
    struct waitqueue_entry_info info;
    waitqueue_entry (q, 0, &info);
    ck_assert_int_eq (info.overtaken, 1);           /* not overtaken again */
    ck_assert_int_eq (ledger_release (l, x, &err), 0);
    ck_assert_int_eq (sched (q, l, 6), 1);
    ck_assert_int_eq (res[0].ticket, a);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

/* Stated durations: a grant records its expected end; once nodes are held,
 * a later request expected to end before they could hold the waiting one
 * may start on them (EASY backfill), a longer one or one stating nothing
 * may not, and none may once a lease there has run past its estimate. */
START_TEST (durations_backfill_held_nodes)
{
    struct ledger *l = mk (1, 8);
    struct waitqueue *q = mkq (l, 1, -1);
    uint64_t x = hold (l, 6);
    ck_assert_int_eq (ledger_lease_set_end (l, x, 100), 0);
    uint64_t a = add (q, "a", 8, 0, 1, 0);
    uint64_t b = add_d (q, "b", 2, 50, 2, 0);
    ck_assert_int_eq (sched (q, l, 0), 1);          /* b overtakes a */
    ck_assert_int_eq (res[0].ticket, b);
    ck_assert (ledger_lease_find (l, res[0].lease)->est_end == 50);
    ck_assert_int_eq (ledger_release (l, res[0].lease, &err), 0);
    uint64_t c = add_d (q, "c", 2, 200, 3, 10);     /* would end at 210 */
    uint64_t d = add_d (q, "d", 2, 80, 4, 10);      /* ends at 90 < 100 */
    uint64_t e = add (q, "e", 1, 0, 5, 10);     /* states nothing */
    ck_assert_int_eq (sched (q, l, 10), 1);
    ck_assert_int_eq (res[0].ticket, d);
    ck_assert (ledger_lease_find (l, res[0].lease)->est_end == 90);
    uint64_t dl = res[0].lease;
    struct waitqueue_entry_info info;
    ck_assert_int_eq (waitqueue_entry (q, 0, &info), 0);
    ck_assert_int_eq (info.ticket, a);
    ck_assert_int_eq (info.overtaken, 1);           /* d gives it back */
    ck_assert_int_eq (waitqueue_entry (q, 1, &info), 0);
    ck_assert_int_eq (info.ticket, c);
    ck_assert_str_eq (info.reason, "held for #1 (overtaken 1 of 1 times)");
    ck_assert_int_eq (waitqueue_entry (q, 2, &info), 0);
    ck_assert_int_eq (info.ticket, e);
    /* x ran past its estimate: it may end at any moment, so nothing more
     * starts on the held node, however short */
    add_d (q, "f", 1, 1, 6, 120);
    ck_assert_int_eq (sched (q, l, 120), 0);
    ck_assert_int_eq (ledger_release (l, x, &err), 0);
    ck_assert_int_eq (sched (q, l, 121), 0);        /* d still runs */
    ck_assert_int_eq (ledger_release (l, dl, &err), 0);
    ck_assert_int_eq (sched (q, l, 122), 1);
    ck_assert_int_eq (res[0].ticket, a);
    ck_assert (ledger_lease_find (l, res[0].lease)->est_end < 0);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

/* Holding by expected ends: of two nodes, the one whose leases end first is
 * held, though the other has more free cores now. */
START_TEST (durations_choose_held_nodes)
{
    struct ledger *l = mk (2, 8);
    struct waitqueue *q = mkq (l, 1, -1);
    uint64_t y = hold (l, 7);                       /* n0: 1 free */
    uint64_t x = hold (l, 2);                       /* n1: 6 free */
    ck_assert_str_eq (ledger_node_name_of (l, x), "n1");
    ck_assert_int_eq (ledger_lease_set_end (l, y, 20), 0);
    ck_assert_int_eq (ledger_lease_set_end (l, x, 500), 0);
    add (q, "a", 8, 0, 1, 0);
    add_d (q, "b", 2, 1000, 2, 0);
    ck_assert_int_eq (sched (q, l, 0), 1);          /* b overtakes a */
    ck_assert_str_eq (ledger_node_name_of (l, res[0].lease), "n1");
    /* n0 frees at 20, n1 (b) at 1000: n0 is held, though n1 has 4 free
     * cores to n0's 1, so a one-core request goes to n1 */
    add (q, "c", 1, 0, 3, 1);
    ck_assert_int_eq (sched (q, l, 1), 1);
    ck_assert_str_eq (ledger_node_name_of (l, res[0].lease), "n1");
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

START_TEST (strict_order)
{
    struct ledger *l = mk (1, 8);
    struct waitqueue *q = mkq (l, 0, -1);
    hold (l, 6);
    add (q, "a", 4, 0, 1, 0);
    add (q, "b", 2, 0, 2, 0);
    ck_assert_int_eq (sched (q, l, 1), 0);
    ck_assert_str_eq (reason (q, 0), "no node with 4 free cores (best: 2)");
    ck_assert_str_eq (reason (q, 1), "held for #1 (overtaken 0 of 0 times)");
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

START_TEST (priority)
{
    struct ledger *l = mk (1, 4);
    struct waitqueue *q = mkq (l, 16, -1);
    uint64_t x = hold (l, 4);
    uint64_t a = add (q, "a", 4, 0, 1, 0);
    uint64_t b = add (q, "b", 4, 5, 2, 1);
    uint64_t c = add (q, "c", 4, 5, 3, 2);
    struct waitqueue_entry_info info;
    waitqueue_entry (q, 0, &info);
    ck_assert_int_eq (info.ticket, b);
    ck_assert_int_eq (info.priority, 5);
    waitqueue_entry (q, 1, &info);
    ck_assert_int_eq (info.ticket, c);              /* ties by arrival */
    waitqueue_entry (q, 2, &info);
    ck_assert_int_eq (info.ticket, a);
    ck_assert_int_eq (ledger_release (l, x, &err), 0);
    ck_assert_int_eq (sched (q, l, 3), 1);
    ck_assert_int_eq (res[0].ticket, b);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

START_TEST (cancel_and_remove)
{
    struct ledger *l = mk (1, 4);
    struct waitqueue *q = mkq (l, 16, -1);
    hold (l, 4);
    uint64_t a = add (q, "a", 2, 0, 1, 0);
    add (q, "b", 2, 0, 2, 0);
    add (q, "c", 2, 0, 1, 0);
    ck_assert_int_eq (waitqueue_cancel (q, a, &err), 0);
    ck_assert_int_eq (waitqueue_cancel (q, a, &err), -1);
    ck_assert_str_eq (err.code, "not_found");
    ck_assert_ptr_nonnull (strstr (err.text, "no waiting request #1"));
    ck_assert_int_eq (waitqueue_length (q), 2);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

START_TEST (unplaceable_entry)
{
    struct ledger *l = mk (1, 4);
    struct waitqueue *q = mkq (l, 16, -1);
    struct waitqueue_request r = { .shape = { .ntasks = 1, .cores = 0 } };
    uint64_t t;
    ck_assert_int_eq (waitqueue_add (q, &r, 0, &t, &err), 0);
    add (q, "ok", 1, 0, 0, 0);
    ck_assert_int_eq (sched (q, l, 1), 1);
    ck_assert_ptr_nonnull (strstr (reason (q, 0), "cannot be placed: "
                                   "invalid step shape"));
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

/* A round explains nothing nobody asked about: an explanation scans every
 * node, and a release at 10,000 nodes with 1,000 waiting spent 21 ms on
 * them before a grant. Asked for, a reason is explained once per change of
 * the ledger, and is true of it. */
START_TEST (reasons_explained_when_asked)
{
    struct ledger *l = mk (4, 8);
    struct waitqueue *q = mkq (l, 16, -1);
    uint64_t fill[8];
    for (int i = 0; i < 8; i++)
        fill[i] = hold (l, 4);                     /* two on each node */
    char label[200][16];
    for (int i = 0; i < 200; i++) {
        snprintf (label[i], sizeof (label[i]), "w%d", i);
        add (q, label[i], 8, 0, (uint64_t) i + 1, 0);
    }
    uint64_t before = ledger_explained (l);
    ck_assert_int_eq (sched (q, l, 1), 0);
    ck_assert_int_eq (ledger_release (l, fill[0], &err), 0);
    ck_assert_int_eq (ledger_release (l, fill[1], &err), 0);
    ck_assert_int_eq (sched (q, l, 2), 1);         /* the head, on n0 */
    ck_assert_int_eq (sched (q, l, 3), 0);
    ck_assert_uint_eq (ledger_explained (l) - before, 0);
    /* the new head's reason, asked twice: explained once */
    ck_assert_str_eq (reason (q, 0), "no node with 8 free cores (best: 0)");
    reason (q, 0);
    ck_assert_uint_eq (ledger_explained (l) - before, 1);
    /* a release that makes no room changes the ledger all the same: the
     * next answer is explained again, true of it */
    ck_assert_int_eq (ledger_release (l, fill[2], &err), 0);
    ck_assert_int_eq (sched (q, l, 4), 0);
    ck_assert_uint_eq (ledger_explained (l) - before, 1);
    ck_assert_str_eq (reason (q, 0), "no node with 8 free cores (best: 4)");
    ck_assert_uint_eq (ledger_explained (l) - before, 2);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST

/* Random traffic: the ledger invariant holds, the entry resources are held
 * for is not overtaken while they are, and everything is granted in the
 * end. */
START_TEST (randomized)
{
    struct ledger *l = mk (3, 8);
    struct waitqueue *q = mkq (l, 3, -1);
    uint64_t held[256];
    int nheld = 0, granted = 0, added = 0, gone = 0;
    unsigned seed = 7;
    double now = 0;
    uint64_t held_ticket = 0;
    int held_overtaken = 0;
    for (int op = 0; op < 3000; op++) {
        seed = seed * 1103515245 + 12345;
        unsigned r = seed >> 8;
        now += 0.5;
        int kind = r % 4;
        if (kind == 0) {
            add (q, NULL, 1 + (r >> 4) % 8, (r >> 8) % 8 == 0,
                 (r >> 12) % 5, now);
            added++;
        } else if (kind == 1) {             /* states a duration, often wrong */
            add_d (q, NULL, 1 + (r >> 4) % 8, 0.5 + (r >> 8) % 40,
                   (r >> 12) % 5, now);
            added++;
        } else if (kind == 2 && nheld) {
            int k = (r >> 4) % nheld;
            ck_assert_int_eq (ledger_release (l, held[k], &err), 0);
            held[k] = held[--nheld];
        } else if (waitqueue_length (q) && (r >> 4) % 8 == 0) {
            struct waitqueue_entry_info info;
            waitqueue_entry (q, (r >> 8) % waitqueue_length (q), &info);
            ck_assert_int_eq (waitqueue_cancel (q, info.ticket, &err), 0);
            gone++;
        }
        int n = sched (q, l, now);
        for (int i = 0; i < n; i++) {
            ck_assert (nheld < 256);
            held[nheld++] = res[i].lease;
        }
        granted += n;
        /* "held for #k" behind it names the entry held for */
        int hpos = 0;
        for (int i = 0; i < waitqueue_length (q); i++) {
            struct waitqueue_entry_info info;
            waitqueue_entry (q, i, &info);
            ck_assert (strlen (info.reason) > 0);
            if (!hpos)
                sscanf (info.reason, "held for #%d", &hpos);
        }
        if (hpos) {
            struct waitqueue_entry_info info;
            waitqueue_entry (q, hpos - 1, &info);
            if (info.ticket == held_ticket)
                ck_assert_int_eq (info.overtaken, held_overtaken);
            held_ticket = info.ticket;
            held_overtaken = info.overtaken;
        }
        else
            held_ticket = 0;
    }
    /* Drain: every request is granted once enough is released. */
    while (nheld) {
        ck_assert_int_eq (ledger_release (l, held[--nheld], &err), 0);
        int n = sched (q, l, now);
        for (int i = 0; i < n; i++)
            held[nheld++] = res[i].lease;
        granted += n;
    }
    ck_assert_int_eq (waitqueue_length (q), 0);
    ck_assert_int_eq (granted + gone, added);
    ck_assert_int_gt (granted, 500);
    waitqueue_destroy (q);
    ledger_destroy (l);
}
END_TEST


/* The quick rounds (only what was added since, while the ledger is as the
 * last round left it) against full rounds, in lockstep on random traffic
 * (arrivals with and without durations, priorities, resumed places, spans,
 * releases, cancels, time passing the wait bound): the same grants (ticket,
 * lease, placement) round by round and the same reasons for every entry. */
/* Millions of comparisons: Check's assertions write to its log each time,
 * which made this test take a minute, so only a failure reaches Check. */
#define TRUE(c) do { if (!(c)) ck_abort_msg ("%s:%d: %s", __FILE__, __LINE__, #c); } while (0)
#define TRUE_MSG(c, ...) do { if (!(c)) ck_abort_msg (__VA_ARGS__); } while (0)
#define SAME(x, y) do { long long x_ = (long long) (x), y_ = (long long) (y); \
    if (x_ != y_) ck_abort_msg ("%s:%d: %s == %lld, %s == %lld", __FILE__, __LINE__, \
                                #x, x_, #y, y_); } while (0)

static void same_placement (struct ledger *a, struct ledger *b, uint64_t id)
{
    const struct ledger_lease *x = ledger_lease_find (a, id), *y = ledger_lease_find (b, id);
    TRUE (x != NULL);
    TRUE (y != NULL);
    SAME (x->nnodes, y->nnodes);
    for (int k = 0; k < x->nnodes; k++) {
        SAME (x->nodes[k].node, y->nodes[k].node);
        SAME (x->nodes[k].ncores, y->nodes[k].ncores);
        TRUE (!memcmp (x->nodes[k].cores, y->nodes[k].cores,
                            x->nodes[k].ncores * sizeof (int)));
    }
}

static void lockstep (int overtakes, double max_wait, unsigned seed, int ops)
{
    struct ledger *la = mk (4, 8), *lb = mk (4, 8);
    struct waitqueue_config fc = { overtakes, max_wait, true };
    struct waitqueue *qa = mkq (la, overtakes, max_wait);
    struct waitqueue *qb = waitqueue_create (lb, &fc, &err);
    TRUE (qb != NULL);
    uint64_t held[512];
    int nheld = 0, grants = 0;
    double now = 0;
    for (int op = 0; op < ops; op++) {
        seed = seed * 1103515245 + 12345;
        unsigned r = seed >> 8;
        now += (r % 16 == 0) ? 7.0 : 0.25;
        int kind = r % 6;
        if (kind <= 2) {
            int cores = 1 + (int) ((r >> 4) % 8);
            bool span = (r >> 7) % 6 == 0;
            struct waitqueue_request w = {
                .shape = { .ntasks = span ? 8 + (int) ((r >> 9) % 12) : 1,
                           .cpus_per_task = span ? 1 : cores,
                           .cores = span ? 8 + (int) ((r >> 9) % 12) : cores,
                           .memory = -1, .budget = -1, .may_span = span, .mpi = span },
                .layout = LEDGER_CPU_BINDING, .priority = (r >> 13) % 7 == 0,
                .owner = (uint64_t) op, .duration = kind == 1 ? 0.5 + (r >> 15) % 20 : 0,
                .since = (r >> 20) % 9 == 0 ? now - (r >> 22) % 30 : 0,
            };
            uint64_t ta, tb;
            SAME (waitqueue_add (qa, &w, now, &ta, &err), 0);
            SAME (waitqueue_add (qb, &w, now, &tb, &err), 0);
            SAME (ta, tb);
        } else if (kind == 3 && nheld) {
            int k = (r >> 4) % nheld;
            SAME (ledger_release (la, held[k], &err), 0);
            SAME (ledger_release (lb, held[k], &err), 0);
            held[k] = held[--nheld];
        } else if (kind == 4 && waitqueue_length (qa) && (r >> 4) % 3 == 0) {
            struct waitqueue_entry_info info;
            SAME (waitqueue_entry (qa, (r >> 8) % waitqueue_length (qa), &info), 0);
            SAME (waitqueue_cancel (qa, info.ticket, &err), 0);
            SAME (waitqueue_cancel (qb, info.ticket, &err), 0);
        }
        struct waitqueue_result *va, *vb;
        int na, nb;
        SAME (waitqueue_schedule (qa, now, &va, &na, &err), 0);
        SAME (waitqueue_schedule (qb, now, &vb, &nb, &err), 0);
        TRUE_MSG (na == nb, "op %d: %d grants quick, %d full", op, na, nb);
        for (int i = 0; i < na; i++) {
            SAME (va[i].ticket, vb[i].ticket);
            SAME (va[i].lease, vb[i].lease);
            same_placement (la, lb, va[i].lease);
            TRUE (nheld < 512);
            held[nheld++] = va[i].lease;
        }
        grants += na;
        free (va);
        free (vb);
        SAME (waitqueue_length (qa), waitqueue_length (qb));
        for (int i = 0; i < waitqueue_length (qa); i++) {
            struct waitqueue_entry_info ia, ib;
            waitqueue_entry (qa, i, &ia);
            waitqueue_entry (qb, i, &ib);
            SAME (ia.ticket, ib.ticket);
            SAME (ia.overtaken, ib.overtaken);
            TRUE_MSG (!strcmp (ia.reason, ib.reason), "op %d, #%d: '%s' quick, '%s' full",
                           op, i + 1, ia.reason, ib.reason);
        }
        /* keep the queue from growing without end */
        while (nheld > 40) {
            SAME (ledger_release (la, held[0], &err), 0);
            SAME (ledger_release (lb, held[0], &err), 0);
            held[0] = held[--nheld];
        }
    }
    TRUE (grants > ops / 10);
    waitqueue_destroy (qa);
    waitqueue_destroy (qb);
    ledger_destroy (la);
    ledger_destroy (lb);
}

/* One test each, so that each has its own time limit under ASan. */
START_TEST (quick_rounds_many_overtakes) { lockstep (16, -1, 11, 4000); } END_TEST
START_TEST (quick_rounds_wait_bound) { lockstep (3, 20.0, 12, 4000); } END_TEST
START_TEST (quick_rounds_one_overtake) { lockstep (1, 5.0, 13, 4000); } END_TEST
START_TEST (quick_rounds_strict_order) { lockstep (0, -1, 14, 2000); } END_TEST

int main (void)
{
    Suite *s = suite_create ("waitqueue");
    TCase *tc = tcase_create ("waitqueue");
    tcase_add_test (tc, order_and_backfill);
    tcase_add_test (tc, arrival_order);
    tcase_add_test (tc, resumed_keeps_its_place);
    tcase_add_test (tc, starvation_by_overtakes);
    tcase_add_test (tc, starvation_by_time);
    tcase_add_test (tc, starvation_holds_nodes);
    tcase_add_test (tc, durations_backfill_held_nodes);
    tcase_add_test (tc, durations_choose_held_nodes);
    tcase_add_test (tc, strict_order);
    tcase_add_test (tc, priority);
    tcase_add_test (tc, cancel_and_remove);
    tcase_add_test (tc, unplaceable_entry);
    tcase_add_test (tc, randomized);
    tcase_add_test (tc, quick_rounds_many_overtakes);
    tcase_add_test (tc, quick_rounds_wait_bound);
    tcase_add_test (tc, quick_rounds_one_overtake);
    tcase_add_test (tc, quick_rounds_strict_order);
    tcase_add_test (tc, reasons_explained_when_asked);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
