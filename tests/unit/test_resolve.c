/* SPDX-License-Identifier: MIT */
/* Resolution against in-memory configs carrying the shipped machines'
 * targets (the shipped machine files). */
#include <string.h>

#include "config.h"
#include "machine.h"
#include "machine_select.h"
#include "resolve.h"
#include "resolve_view.h"
#include "wallclock.h"
#include "testutil.h"

static const char pm_cpu[] =
    "[parallel]\nsystem = slurm\naccount = e3sm\n"
    "qos = regular, debug, premium\nconstraints = cpu\n"
    "[qos.regular]\nmin_nodes = 1\nmax_wallclock = 48:00:00\n"
    "[qos.debug]\nmin_nodes = 1\nmax_nodes = 8\nmax_wallclock = 00:30:00\n"
    "[qos.premium]\nmin_nodes = 1\nmax_wallclock = 48:00:00\n";

static const char pm_gpu[] =
    "[parallel]\nsystem = slurm\ngpus_per_node = 4\n"
    "qos = regular, debug, premium\nconstraints = gpu\n"
    "[parallel.gnu]\ngpus_per_node = 0\n"
    "[qos.regular]\nmin_nodes = 1\nmax_nodes = 3072\nmax_wallclock = 48:00:00\n"
    "[qos.debug]\nmin_nodes = 1\nmax_nodes = 8\nmax_wallclock = 00:30:00\n"
    "[qos.premium]\nmin_nodes = 1\nmax_nodes = 3072\nmax_wallclock = 48:00:00\n";

static const char frontier[] =
    "[parallel]\nsystem = slurm\naccount = cli115\n"
    "partitions = batch, extended\nqos = normal, debug\n"
    "[partition.batch]\nmin_nodes = 1\nmax_nodes = 9472\n"
    "max_wallclock_bins = 91: 02:00:00, 183: 06:00:00, 9472: 12:00:00\n"
    "[partition.extended]\nmin_nodes = 1\nmax_nodes = 64\n"
    "max_wallclock = 24:00:00\n"
    "[qos.normal]\nmin_nodes = 1\n"
    "[qos.debug]\nmin_nodes = 1\nmax_wallclock = 02:00:00\n";

static const char chrysalis[] =
    "[parallel]\nsystem = slurm\npartitions = compute, debug\n"
    "[partition.compute]\nmin_nodes = 1\nmax_wallclock = 168:00:00\n"
    "[partition.debug]\nmin_nodes = 1\nmax_nodes = 10\n"
    "max_wallclock = 168:00:00\n";

static const char compy[] =
    "[parallel]\nsystem = slurm\naccount = e3sm\npartitions = slurm, short\n"
    "qos = regular\n"
    "[partition.slurm]\nmin_nodes = 1\nmax_nodes = 440\n"
    "max_wallclock = 36:00:00\n"
    "[partition.short]\nmin_nodes = 1\nmax_nodes = 50\n"
    "max_wallclock = 02:00:00\n";

static const char dane[] =
    "[parallel]\nsystem = slurm\npartitions = pbatch, pdebug\n";

static const char chicoma[] =
    "[parallel]\nsystem = slurm\npartitions = standard, gpu\n"
    "qos = standard, debug\n";

static const char aurora[] =
    "[parallel]\nsystem = pbs\nqueues = capacity, prod, debug\n"
    "filesystems = home, flare\naccount = E3SM_Dec\n"
    "[queue.capacity]\nmin_nodes = 1\nmax_nodes = 16\n"
    "max_wallclock = 168:00:00\n"
    "[queue.prod]\nmin_nodes = 256\nmax_wallclock = 12:00:00\n"
    "[queue.debug]\nmin_nodes = 1\nmax_nodes = 2\nmax_wallclock = 01:00:00\n";

static const char polaris[] =
    "[parallel]\nsystem = pbs\ngpus_per_node = 4\nqueues = prod, debug\n"
    "account = E3SMinput\npartitions = prod\n"
    "[queue.prod]\nmin_nodes = 1\nmax_nodes = 512\nmax_wallclock = 24:00:00\n"
    "[queue.debug]\nmin_nodes = 1\nmax_nodes = 2\nmax_wallclock = 01:00:00\n";

static const char improv[] =
    "[parallel]\nsystem = pbs\npartitions = compute, debug\n"
    "[partition.compute]\nmax_wallclock = 72:00:00\n"
    "[partition.debug]\nmin_nodes = 1\nmax_nodes = 8\n"
    "max_wallclock = 01:00:00\n";

static const char localhost[] = "[parallel]\nsystem = single_node\n";

static struct machine_targets *machine (const char *text, const char *compiler)
{
    berth_error_t err;
    struct machine_targets *t = NULL;
    struct config *cfg = config_create ();
    ck_assert_ptr_nonnull (cfg);
    ck_assert_msg (config_load_string (cfg, "m.cfg", text, &err) == 0, "%s",
                   err.text);
    ck_assert_msg (targets_load (cfg, compiler, &t, &err) == 0, "%s", err.text);
    config_destroy (cfg);
    return t;
}

/* ---- one axis ---- */

struct axis_case {
    const char *machine;
    const char *axis;          /* "partition", "qos" or "queue" */
    int nodes;
    int min_allowed;
    const char *request;
    const char *wall;
    const char *target;        /* expected; NULL: none */
    int eff;
    enum adjustment adj;
    bool honored;
    const char *reason1, *reason2;  /* substrings of the reason */
};

static const struct target_axis *axis_of (const struct machine_targets *t,
                                          const char *axis)
{
    return !strcmp (axis, "partition") ? &t->partition
         : !strcmp (axis, "qos") ? &t->qos : &t->queue;
}

/* A case's wall time in seconds (HH:MM:SS or any form), -1 for none. */
static long long wall_secs (const char *text)
{
    long long secs = -1;
    if (text && !resolve_no_request (text))
        ck_assert_msg (wallclock_read (text, WALLCLOCK_SLURM, &secs) == 0,
                       "bad wall time '%s' in a case", text);
    return secs;
}

static void check_axis (const struct axis_case *c)
{
    struct machine_targets *t = machine (c->machine, NULL);
    struct axis_resolution r;
    berth_error_t err;
    ck_assert_msg (resolve_submission (axis_of (t, c->axis), c->nodes,
                                       c->min_allowed, c->request,
                                       wall_secs (c->wall), &r, &err) == 0,
                   "%s", err.text);
    if (c->target)
        ck_assert_msg (r.target && !strcmp (r.target->name, c->target),
                       "%d nodes req %s: got %s want %s", c->nodes,
                       c->request, r.target ? r.target->name : "(none)",
                       c->target);
    else
        ck_assert_ptr_null (r.target);
    ck_assert_msg (r.nodes == c->eff, "%d nodes req %s: %d nodes, want %d",
                   c->nodes, c->request, r.nodes, c->eff);
    ck_assert_str_eq (adjustment_name (r.adjustment), adjustment_name (c->adj));
    ck_assert_int_eq (r.honored, c->honored);
    if (c->honored)
        ck_assert_ptr_null (r.reason);
    else {
        ck_assert_ptr_nonnull (r.reason);
        ck_assert_msg (strstr (r.reason, c->reason1), "'%s' lacks '%s'",
                       r.reason, c->reason1);
        ck_assert_msg (!c->reason2 || strstr (r.reason, c->reason2),
                       "'%s' lacks '%s'", r.reason, c->reason2);
    }
    axis_resolution_clear (&r);
    targets_destroy (t);
}

#define E ADJUST_EXACT
#define D ADJUST_DECREASE
#define I ADJUST_INCREASE

/* The brief's examples on one axis. */
static const struct axis_case brief_axis[] = {
    { aurora, "queue", 200, 1, NULL, NULL, "capacity", 16, D, true, 0, 0 },
    { aurora, "queue", 200, 32, NULL, NULL, "prod", 256, I, true, 0, 0 },
    { compy, "partition", 500, 1, NULL, NULL, "slurm", 440, D, true, 0, 0 },
    { pm_gpu, "qos", 4000, 1, NULL, NULL, "regular", 3072, D, true, 0, 0 },
    { frontier, "partition", 8, 1, NULL, NULL, "batch", 8, E, true, 0, 0 },
    { frontier, "partition", 100, 1, NULL, NULL, "batch", 100, E, true, 0, 0 },
    { frontier, "partition", 200, 1, NULL, NULL, "batch", 200, E, true, 0, 0 },
    /* Clamping alone never denies. */
    { pm_cpu, "qos", 16, 1, "debug", NULL, "debug", 8, D, true, 0, 0 },
};

START_TEST (brief_examples_axis)
{
    check_axis (&brief_axis[_i]);
}
END_TEST

/* Edges of every shipped target, requested and by default. */
static const struct axis_case edges[] = {
    /* pm-cpu */
    { pm_cpu, "qos", 1, 1, NULL, NULL, "regular", 1, E, true, 0, 0 },
    { pm_cpu, "qos", 100000, 1, NULL, NULL, "regular", 100000, E, true, 0, 0 },
    { pm_cpu, "qos", 8, 1, "debug", "00:30:00", "debug", 8, E, true, 0, 0 },
    { pm_cpu, "qos", 9, 1, "debug", NULL, "debug", 8, D, true, 0, 0 },
    { pm_cpu, "qos", 1, 1, "debug", "00:30:01", "regular", 1, E, false,
      "qos 'debug' allows at most 00:30:00 on 1 node", "00:30:01 was requested" },
    { pm_cpu, "qos", 500, 1, "premium", "48:00:00", "premium", 500, E, true, 0, 0 },
    { pm_cpu, "qos", 500, 1, "premium", "48:00:01", "regular", 500, E, false,
      "qos 'premium' allows at most 48:00:00", 0 },
    /* pm-gpu */
    { pm_gpu, "qos", 3072, 1, NULL, NULL, "regular", 3072, E, true, 0, 0 },
    { pm_gpu, "qos", 3073, 1, NULL, NULL, "regular", 3072, D, true, 0, 0 },
    { pm_gpu, "qos", 3073, 1, "premium", NULL, "premium", 3072, D, true, 0, 0 },
    { pm_gpu, "qos", 8, 1, "debug", NULL, "debug", 8, E, true, 0, 0 },
    { pm_gpu, "qos", 9, 1, "debug", NULL, "debug", 8, D, true, 0, 0 },
    { pm_gpu, "qos", 9, 9, "debug", NULL, "regular", 9, E, false,
      "qos 'debug' would run on 8 nodes but at least 9 are required", 0 },
    /* frontier */
    { frontier, "partition", 9472, 1, NULL, NULL, "batch", 9472, E, true, 0, 0 },
    { frontier, "partition", 9473, 1, NULL, NULL, "batch", 9472, D, true, 0, 0 },
    { frontier, "partition", 64, 1, "extended", NULL, "extended", 64, E, true, 0, 0 },
    { frontier, "partition", 65, 1, "extended", NULL, "extended", 64, D, true, 0, 0 },
    { frontier, "partition", 65, 65, "extended", NULL, "batch", 65, E, false,
      "partition 'extended' would run on 64 nodes but at least 65", 0 },
    { frontier, "partition", 10, 1, "extended", "24:00:00", "extended", 10, E,
      true, 0, 0 },
    { frontier, "partition", 10, 1, "extended", "24:00:01", "batch", 10, E,
      false, "allows at most 24:00:00 on 10 nodes", 0 },
    { frontier, "partition", 90, 1, "batch", "02:00:00", "batch", 90, E, true, 0, 0 },
    { frontier, "partition", 91, 1, "batch", "02:00:00", "batch", 91, E, true, 0, 0 },
    { frontier, "partition", 91, 1, "batch", "02:00:01", "batch", 91, E, false,
      "partition 'batch' allows at most 02:00:00 on 91 nodes", 0 },
    { frontier, "partition", 92, 1, "batch", "06:00:00", "batch", 92, E, true, 0, 0 },
    { frontier, "partition", 183, 1, "batch", "06:00:00", "batch", 183, E, true, 0, 0 },
    { frontier, "partition", 183, 1, "batch", "06:00:01", "batch", 183, E, false,
      "allows at most 06:00:00 on 183 nodes", 0 },
    { frontier, "partition", 184, 1, "batch", "12:00:00", "batch", 184, E, true, 0, 0 },
    { frontier, "partition", 184, 1, "batch", "12:00:01", "batch", 184, E, false,
      "allows at most 12:00:00 on 184 nodes", 0 },
    /* The limit is taken at the clamped size. */
    { frontier, "partition", 20000, 1, "batch", "12:00:00", "batch", 9472, D,
      true, 0, 0 },
    { frontier, "qos", 100, 1, "debug", "02:00:00", "debug", 100, E, true, 0, 0 },
    /* chrysalis */
    { chrysalis, "partition", 10, 1, "debug", NULL, "debug", 10, E, true, 0, 0 },
    { chrysalis, "partition", 11, 1, "debug", NULL, "debug", 10, D, true, 0, 0 },
    { chrysalis, "partition", 11, 1, NULL, NULL, "compute", 11, E, true, 0, 0 },
    { chrysalis, "partition", 5, 1, "compute", "168:00:01", "compute", 5, E,
      false, "allows at most 168:00:00", 0 },
    /* compy */
    { compy, "partition", 440, 1, NULL, NULL, "slurm", 440, E, true, 0, 0 },
    { compy, "partition", 441, 1, NULL, NULL, "slurm", 440, D, true, 0, 0 },
    { compy, "partition", 50, 1, "short", "02:00:00", "short", 50, E, true, 0, 0 },
    { compy, "partition", 51, 1, "short", "02:00:00", "short", 50, D, true, 0, 0 },
    { compy, "partition", 50, 1, "short", "02:00:01", "slurm", 50, E, false,
      "partition 'short' allows at most 02:00:00 on 50 nodes", 0 },
    { compy, "qos", 500, 1, "regular", NULL, "regular", 500, E, true, 0, 0 },
    /* dane, chicoma: no limits */
    { dane, "partition", 1000, 1, "pdebug", "99:00:00", "pdebug", 1000, E,
      true, 0, 0 },
    { chicoma, "qos", 7, 1, "debug", NULL, "debug", 7, E, true, 0, 0 },
    { chicoma, "partition", 7, 1, NULL, NULL, "standard", 7, E, true, 0, 0 },
    /* aurora: capacity 1-16, prod 256-, debug 1-2, nothing for 17-255 */
    { aurora, "queue", 16, 1, NULL, NULL, "capacity", 16, E, true, 0, 0 },
    { aurora, "queue", 17, 1, NULL, NULL, "capacity", 16, D, true, 0, 0 },
    { aurora, "queue", 255, 1, NULL, NULL, "capacity", 16, D, true, 0, 0 },
    { aurora, "queue", 17, 17, NULL, NULL, "prod", 256, I, true, 0, 0 },
    { aurora, "queue", 255, 17, NULL, NULL, "prod", 256, I, true, 0, 0 },
    { aurora, "queue", 256, 1, NULL, NULL, "prod", 256, E, true, 0, 0 },
    { aurora, "queue", 2000, 1, NULL, NULL, "prod", 2000, E, true, 0, 0 },
    { aurora, "queue", 255, 1, "prod", NULL, "prod", 256, I, true, 0, 0 },
    { aurora, "queue", 1, 1, NULL, NULL, "capacity", 1, E, true, 0, 0 },
    { aurora, "queue", 2, 1, "debug", "01:00:00", "debug", 2, E, true, 0, 0 },
    { aurora, "queue", 3, 1, "debug", NULL, "debug", 2, D, true, 0, 0 },
    { aurora, "queue", 3, 3, "debug", NULL, "capacity", 3, E, false,
      "queue 'debug' would run on 2 nodes but at least 3 are required", 0 },
    { aurora, "queue", 16, 1, "capacity", "168:00:01", "capacity", 16, E,
      false, "queue 'capacity' allows at most 168:00:00 on 16 nodes", 0 },
    { aurora, "queue", 300, 1, "prod", "12:00:01", "prod", 300, E, false,
      "queue 'prod' allows at most 12:00:00", 0 },
    /* polaris */
    { polaris, "queue", 512, 1, NULL, NULL, "prod", 512, E, true, 0, 0 },
    { polaris, "queue", 513, 1, NULL, NULL, "prod", 512, D, true, 0, 0 },
    { polaris, "queue", 2, 1, "debug", NULL, "debug", 2, E, true, 0, 0 },
    { polaris, "queue", 3, 1, "debug", NULL, "debug", 2, D, true, 0, 0 },
    { polaris, "queue", 1, 1, "prod", "24:00:01", "prod", 1, E, false,
      "queue 'prod' allows at most 24:00:00", 0 },
    /* improv: no queues; a queue request is ignored */
    { improv, "queue", 5, 1, "debug", NULL, NULL, 5, E, true, 0, 0 },
    { improv, "partition", 9, 1, "debug", NULL, "debug", 8, D, true, 0, 0 },
    { improv, "partition", 9, 1, NULL, NULL, "compute", 9, E, true, 0, 0 },
    /* requests on an axis the machine does not use are ignored */
    { pm_cpu, "partition", 4, 1, "debug", "99:00:00", NULL, 4, E, true, 0, 0 },
    { localhost, "qos", 4, 1, "debug", NULL, NULL, 4, E, true, 0, 0 },
    /* not in the list: the reason lists what is available */
    { frontier, "partition", 4, 1, "debug", NULL, "batch", 4, E, false,
      "partition 'debug' is not available on this machine",
      "(available: batch, extended)" },
    { aurora, "queue", 4, 1, "Debug", NULL, "capacity", 4, E, false,
      "(available: capacity, prod, debug)", 0 },
    /* the first failure gives the reason: range before wall time */
    { aurora, "queue", 3, 3, "debug", "05:00:00", "capacity", 3, E, false,
      "would run on 2 nodes", 0 },
    /* a wall time in Slurm's D-HH:MM:SS is read, not passed over (it used
     * to slip past the debug limit as unparsable) */
    { pm_cpu, "qos", 1, 1, "debug", "1-00:00:00", "regular", 1, E, false,
      "qos 'debug' allows at most 00:30:00 on 1 node but 24:00:00 was "
      "requested", 0 },
    /* default: ties go to the earliest in the list */
    { pm_gpu, "qos", 5000, 1, NULL, NULL, "regular", 3072, D, true, 0, 0 },
    { frontier, "partition", 30, 1, NULL, NULL, "batch", 30, E, true, 0, 0 },
};

START_TEST (target_edges)
{
    check_axis (&edges[_i]);
}
END_TEST

/* Anything that is no request gives the default resolution, honored. */
START_TEST (placeholders)
{
    static const char *none[] = {
        NULL, "", "   ", "\t\n", "<<<queue>>>", "<<<>>>", " <<<anything at all>>> ",
    };
    struct machine_targets *t = machine (aurora, NULL);
    for (size_t i = 0; i < sizeof (none) / sizeof (none[0]); i++) {
        struct axis_resolution r;
        berth_error_t err;
        ck_assert (resolve_no_request (none[i]));
        ck_assert_int_eq (resolve_submission (&t->queue, 200, 1, none[i],
                                              wall_secs (none[i]), &r, &err),
                          0);
        ck_assert_str_eq (r.target->name, "capacity");
        ck_assert_int_eq (r.nodes, 16);
        ck_assert (r.honored);
        ck_assert_ptr_null (r.reason);
        axis_resolution_clear (&r);
    }
    ck_assert (!resolve_no_request ("debug"));
    ck_assert (!resolve_no_request ("<<<debug"));
    ck_assert (!resolve_no_request ("debug>>>"));
    ck_assert (!resolve_no_request ("<<>>"));
    /* A request is trimmed before it is looked up. */
    struct axis_resolution r;
    berth_error_t err;
    ck_assert_int_eq (resolve_submission (&t->queue, 2, 1, " debug ", -1, &r,
                                          &err), 0);
    ck_assert_str_eq (r.target->name, "debug");
    axis_resolution_clear (&r);
    targets_destroy (t);
}
END_TEST

START_TEST (axis_errors)
{
    struct machine_targets *t = machine (aurora, NULL);
    struct axis_resolution r;
    berth_error_t err;
    ck_assert_int_eq (resolve_submission (&t->queue, 8, 1024, NULL, -1, &r,
                                          &err), -1);
    ck_assert_str_eq (err.code, "invalid_request");
    ck_assert_ptr_nonnull (strstr (err.text, "no queue can run a job of 8 nodes "
                                   "on at least 1024 nodes"));
    ck_assert_ptr_nonnull (strstr (err.text, "capacity: 8 nodes, prod: 256 "
                                   "nodes, debug: 2 nodes"));
    struct machine_targets *g = machine (pm_gpu, NULL);
    ck_assert_int_eq (resolve_submission (&g->qos, 4000, 3073, NULL, -1, &r,
                                          &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "no qos can run a job of 4000 "
                                   "nodes on at least 3073 nodes (checked "
                                   "regular: 3072 nodes, debug: 8 nodes, "
                                   "premium: 3072 nodes)"));
    targets_destroy (g);
    g = machine (polaris, NULL);
    ck_assert_int_eq (resolve_submission (&g->queue, 513, 513, "debug", -1,
                                          &r, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "prod: 512 nodes, debug: 2 nodes"));
    targets_destroy (g);
    /* A denied request whose default fails is an error too. */
    ck_assert_int_eq (resolve_submission (&t->queue, 8, 1024, "prod", -1, &r,
                                          &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "no queue"));
    ck_assert_int_eq (resolve_submission (&t->queue, 0, 1, NULL, -1, &r,
                                          &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "node count must be positive "
                                   "(got 0)"));
    ck_assert_int_eq (resolve_submission (&t->queue, -3, 1, NULL, -1, &r,
                                          &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "(got -3)"));
    ck_assert_int_eq (resolve_submission (&t->queue, 4, 0, NULL, -1, &r,
                                          &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "min_nodes_allowed must be "
                                   "positive (got 0)"));
    /* Even an axis without targets checks the counts. */
    ck_assert_int_eq (resolve_submission (&t->partition, 0, 1, NULL, -1, &r,
                                          &err), -1);
    ck_assert_ptr_null (r.target);
    ck_assert_ptr_null (r.reason);
    targets_destroy (t);
}
END_TEST

/* ---- whole requests ---- */

struct job_case {
    const char *machine;
    const char *compiler;
    struct resolve_request req;
    const char *first;         /* partition (Slurm) or queue (PBS) */
    const char *qos;           /* Slurm only */
    const char *constraint;
    const char *max_wallclock;
    const char *wall_time;
    int eff;
    enum adjustment adj;
    bool honored;
    const char *reason;        /* the whole reason, or NULL */
};

static void check_job (const struct job_case *c)
{
    struct machine_targets *t = machine (c->machine, c->compiler);
    struct resolve_request req = c->req;
    struct resolution r;
    berth_error_t err;
    if (!req.min_nodes_allowed)
        req.min_nodes_allowed = 1;
    ck_assert_msg (resolve_job (t, &req, &r, &err) == 0, "%s", err.text);
    ck_assert_str_eq (r.pbs ? r.queue : r.partition, c->first);
    if (!r.pbs)
        ck_assert_str_eq (r.qos, c->qos);
    else
        ck_assert_ptr_null (r.partition);
    ck_assert_str_eq (r.constraint, c->constraint);
    ck_assert_str_eq (r.max_wallclock, c->max_wallclock);
    /* With no wall time asked for, the answer's is the limit in force. */
    ck_assert_str_eq (r.wall_time, *c->wall_time ? c->wall_time
                                                 : c->max_wallclock);
    ck_assert_int_eq (r.requested_nodes, c->req.nodes);
    ck_assert_int_eq (r.effective_nodes, c->eff);
    ck_assert_str_eq (adjustment_name (r.adjustment), adjustment_name (c->adj));
    ck_assert_int_eq (r.honored, c->honored);
    if (c->reason)
        ck_assert_str_eq (r.reason ? r.reason : "(null)", c->reason);
    else
        ck_assert_msg (r.reason == NULL, "unexpected reason '%s'", r.reason);
    resolution_clear (&r);
    targets_destroy (t);
}

/* min_nodes_allowed 0 in a case stands for 1. */
#define REQ(...) { __VA_ARGS__ }

static const struct job_case jobs[] = {
    /* The brief's Slurm examples. */
    { frontier, NULL, REQ (.nodes = 100), "batch", "normal", "", "06:00:00", "",
      100, E, true, NULL },
    { frontier, NULL, REQ (.nodes = 100, .scheduler_target = "debug",
                           .wall_time = "01:00:00"),
      "batch", "debug", "", "02:00:00", "01:00:00", 100, E, true, NULL },
    { frontier, NULL, REQ (.nodes = 100, .scheduler_target = "debug",
                           .wall_time = "03:00:00"),
      "batch", "normal", "", "06:00:00", "03:00:00", 100, E, false,
      "qos 'debug' allows at most 02:00:00 on 100 nodes but 03:00:00 was "
      "requested" },
    { chrysalis, NULL, REQ (.nodes = 4, .scheduler_target = "debug"),
      "debug", "", "", "168:00:00", "", 4, E, true, NULL },
    { pm_cpu, NULL, REQ (.nodes = 16, .qos = "debug"),
      "", "debug", "cpu", "00:30:00", "", 8, D, true, NULL },
    /* Frontier's bins at the final node count; the wall time is capped. */
    { frontier, NULL, REQ (.nodes = 8, .wall_time = "05:00:00"), "batch",
      "normal", "", "02:00:00", "02:00:00", 8, E, true, NULL },
    { frontier, NULL, REQ (.nodes = 200), "batch", "normal", "", "12:00:00", "",
      200, E, true, NULL },
    { frontier, NULL, REQ (.nodes = 20000, .wall_time = "13:00:00"), "batch",
      "normal", "", "12:00:00", "12:00:00", 9472, D, true, NULL },
    /* Explicit axis wins over the scheduler target. */
    { frontier, NULL, REQ (.nodes = 10, .scheduler_target = "debug",
                           .qos = "normal"),
      "batch", "normal", "", "02:00:00", "", 10, E, true, NULL },
    { chrysalis, NULL, REQ (.nodes = 4, .scheduler_target = "debug",
                            .partition = "compute"),
      "compute", "", "", "168:00:00", "", 4, E, true, NULL },
    /* ... but a placeholder is no explicit request. */
    { chrysalis, NULL, REQ (.nodes = 4, .scheduler_target = "debug",
                            .partition = "<<<partition>>>"),
      "debug", "", "", "168:00:00", "", 4, E, true, NULL },
    /* scheduler_target on every shipped machine. */
    { pm_cpu, NULL, REQ (.nodes = 2, .scheduler_target = "debug"), "", "debug",
      "cpu", "00:30:00", "", 2, E, true, NULL },
    { pm_gpu, NULL, REQ (.nodes = 2, .scheduler_target = "premium"), "",
      "premium", "gpu", "48:00:00", "", 2, E, true, NULL },
    { compy, NULL, REQ (.nodes = 60, .scheduler_target = "short"), "short",
      "regular", "", "02:00:00", "", 50, D, true, NULL },
    { compy, NULL, REQ (.nodes = 60, .scheduler_target = "regular"), "slurm",
      "regular", "", "36:00:00", "", 60, E, true, NULL },
    { dane, NULL, REQ (.nodes = 3, .scheduler_target = "pdebug"), "pdebug", "",
      "", "", "", 3, E, true, NULL },
    { chicoma, NULL, REQ (.nodes = 3, .scheduler_target = "debug"), "standard",
      "debug", "", "", "", 3, E, true, NULL },
    /* A name on both axes is taken as a partition first. */
    { chicoma, NULL, REQ (.nodes = 3, .scheduler_target = "standard"),
      "standard", "standard", "", "", "", 3, E, true, NULL },
    { aurora, NULL, REQ (.nodes = 1, .scheduler_target = "debug",
                         .wall_time = "00:10:00"),
      "debug", NULL, "", "01:00:00", "00:10:00", 1, E, true, NULL },
    { polaris, NULL, REQ (.nodes = 4, .scheduler_target = "debug"), "debug",
      NULL, "", "01:00:00", "", 2, D, true, NULL },
    /* On no axis. */
    { frontier, NULL, REQ (.nodes = 4, .scheduler_target = "premium"), "batch",
      "normal", "", "02:00:00", "", 4, E, false,
      "scheduler target 'premium' is neither a partition nor a qos on this "
      "machine (partitions: batch, extended, qos: normal, debug)" },
    { pm_cpu, NULL, REQ (.nodes = 4, .scheduler_target = "batch"), "",
      "regular", "cpu", "48:00:00", "", 4, E, false,
      "scheduler target 'batch' is neither a partition nor a qos on this "
      "machine (partitions: none, qos: regular, debug, premium)" },
    { dane, NULL, REQ (.nodes = 4, .scheduler_target = "debug"), "pbatch",
      "", "", "", "", 4, E, false,
      "scheduler target 'debug' is neither a partition nor a qos on this "
      "machine (partitions: pbatch, pdebug, qos: none)" },
    { localhost, NULL, REQ (.nodes = 1, .scheduler_target = "debug"), "", "",
      "", "", "", 1, E, false,
      "scheduler target 'debug' matches nothing: this machine defines no "
      "targets" },
    { aurora, NULL, REQ (.nodes = 1, .scheduler_target = "premium"),
      "capacity", NULL, "", "168:00:00", "", 1, E, false,
      "scheduler target 'premium' is not a queue on this machine (queues: "
      "capacity, prod, debug)" },
    /* improv: partitions but no queues: empty queue, requests ignored. */
    { improv, NULL, REQ (.nodes = 3, .queue = "debug", .partition = "debug"),
      "", NULL, "", "", "", 3, E, true, NULL },
    { improv, NULL, REQ (.nodes = 3, .scheduler_target = "debug"), "", NULL, "",
      "", "", 3, E, false,
      "scheduler target 'debug' matches nothing: this machine defines no "
      "queues" },
    /* Requests on axes the machine lacks are ignored. */
    { frontier, NULL, REQ (.nodes = 4, .queue = "nonsense"), "batch", "normal",
      "", "02:00:00", "", 4, E, true, NULL },
    { aurora, NULL, REQ (.nodes = 4, .partition = "x", .qos = "y"), "capacity",
      NULL, "", "168:00:00", "", 4, E, true, NULL },
    { frontier, NULL, REQ (.nodes = 4, .constraint = "gpu"), "batch", "normal",
      "", "02:00:00", "", 4, E, true, NULL },
    /* Constraints. */
    { pm_gpu, NULL, REQ (.nodes = 4, .constraint = "gpu"), "", "regular", "gpu",
      "48:00:00", "", 4, E, true, NULL },
    { pm_gpu, NULL, REQ (.nodes = 4, .constraint = "<<<constraint>>>"), "",
      "regular", "gpu", "48:00:00", "", 4, E, true, NULL },
    { pm_gpu, NULL, REQ (.nodes = 4, .constraint = "cpu"), "", "regular", "gpu",
      "48:00:00", "", 4, E, false,
      "constraint 'cpu' is not available on this machine (available: gpu)" },
    /* Every denial, joined in order target, partition, qos, constraint. */
    { frontier, NULL, REQ (.nodes = 100, .scheduler_target = "premium",
                           .partition = "extended", .qos = "debug",
                           .wall_time = "30:00:00", .constraint = "cpu"),
      "batch", "normal", "", "06:00:00", "06:00:00", 100, E, false,
      "scheduler target 'premium' is neither a partition nor a qos on this "
      "machine (partitions: batch, extended, qos: normal, debug); "
      "partition 'extended' allows at most 24:00:00 on 64 nodes but 30:00:00 "
      "was requested; qos 'debug' allows at most 02:00:00 on 100 nodes but "
      "30:00:00 was requested" },
    { pm_cpu, NULL, REQ (.nodes = 4, .qos = "urgent", .constraint = "knl"), "",
      "regular", "cpu", "48:00:00", "", 4, E, false,
      "qos 'urgent' is not available on this machine (available: regular, "
      "debug, premium); constraint 'knl' is not available on this machine "
      "(available: cpu)" },
    /* qos resolved on the partition's effective nodes. */
    { frontier, NULL, REQ (.nodes = 100, .partition = "extended"), "extended",
      "normal", "", "24:00:00", "", 64, D, true, NULL },
    { frontier, NULL, REQ (.nodes = 100, .partition = "extended",
                           .qos = "debug"),
      "extended", "debug", "", "02:00:00", "", 64, D, true, NULL },
    /* Compiler sections: pm-gpu's gnu build has no GPUs. */
    { pm_gpu, "gnu", REQ (.nodes = 1), "", "regular", "gpu", "48:00:00", "", 1,
      E, true, NULL },
    /* min_nodes_allowed flows through both axes. */
    { aurora, NULL, REQ (.nodes = 200, .min_nodes_allowed = 32), "prod", NULL,
      "", "12:00:00", "", 256, I, true, NULL },
    /* Slurm's D-HH:MM:SS is read and capped (it used to be passed through
     * untouched, past the limit). */
    { frontier, NULL, REQ (.nodes = 4, .wall_time = "1-00:00:00"), "batch",
      "normal", "", "02:00:00", "02:00:00", 4, E, true, NULL },
    { frontier, NULL, REQ (.nodes = 4, .wall_time = "<<<wall_time>>>"), "batch",
      "normal", "", "02:00:00", "", 4, E, true, NULL },
};

START_TEST (job_cases)
{
    check_job (&jobs[_i]);
}
END_TEST

static struct machine_targets *text_machine (const char *extra)
{
    char *text;
    ck_assert_int_ge (asprintf (&text, "[parallel]\nsystem = slurm\n"
                                "partitions = p\nqos = q\n%s", extra), 0);
    struct machine_targets *t = machine (text, NULL);
    free (text);
    return t;
}

static const char *max_of (const char *extra)
{
    static char buf[64];
    struct machine_targets *t = text_machine (extra);
    struct resolve_request req = REQ (.nodes = 4, .min_nodes_allowed = 1);
    struct resolution r;
    berth_error_t err;
    ck_assert_msg (resolve_job (t, &req, &r, &err) == 0, "%s", err.text);
    snprintf (buf, sizeof (buf), "%s", r.max_wallclock);
    resolution_clear (&r);
    targets_destroy (t);
    return buf;
}

/* The more restrictive limit, compared by length whatever the form; an
 * unset side ignored; a tie gives the partition's. */
START_TEST (max_wallclock_choice)
{
    ck_assert_str_eq (max_of ("[partition.p]\nmax_wallclock = 05:00:00\n"
                              "[qos.q]\nmax_wallclock = 04:00:00\n"), "04:00:00");
    ck_assert_str_eq (max_of ("[partition.p]\nmax_wallclock = 03:00:00\n"
                              "[qos.q]\nmax_wallclock = 04:00:00\n"), "03:00:00");
    /* written back as HH:MM:SS */
    ck_assert_str_eq (max_of ("[partition.p]\nmax_wallclock = 1:00:00\n"
                              "[qos.q]\nmax_wallclock = 01:00:00\n"), "01:00:00");
    ck_assert_str_eq (max_of ("[qos.q]\nmax_wallclock = 04:00:00\n"), "04:00:00");
    ck_assert_str_eq (max_of ("[partition.p]\nmax_wallclock = 04:00:00\n"),
                      "04:00:00");
    /* a day in Slurm's form is longer than four hours (it used to win as
     * unparsable) */
    ck_assert_str_eq (max_of ("[partition.p]\nmax_wallclock = 1-00:00:00\n"
                              "[qos.q]\nmax_wallclock = 04:00:00\n"),
                      "04:00:00");
    ck_assert_str_eq (max_of ("[partition.p]\nmax_wallclock = 0-03:00\n"
                              "[qos.q]\nmax_wallclock = 04:00:00\n"),
                      "03:00:00");
    ck_assert_str_eq (max_of (""), "");
}
END_TEST

START_TEST (job_errors)
{
    struct machine_targets *t = machine (aurora, NULL);
    struct resolution r;
    berth_error_t err;
    struct resolve_request req = { .nodes = 8, .min_nodes_allowed = 1024 };
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "no queue can run a job of 8 "
                                   "nodes on at least 1024 nodes"));
    ck_assert_ptr_null (r.scheduler);
    ck_assert_ptr_null (r.reason);
    req = (struct resolve_request) { .nodes = 0, .min_nodes_allowed = 1 };
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "node count must be positive"));
    targets_destroy (t);
    /* On Slurm the qos axis can fail after the partition resolved. */
    t = text_machine ("[partition.p]\nmax_nodes = 100\n[qos.q]\nmax_nodes = 4\n");
    req = (struct resolve_request) { .nodes = 50, .min_nodes_allowed = 10,
                                          .scheduler_target = "nowhere" };
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "no qos can run a job of 50 nodes "
                                   "on at least 10 nodes (checked q: 4 nodes)"));
    targets_destroy (t);
}
END_TEST

START_TEST (json_fields)
{
    struct machine_targets *t = machine (pm_gpu, NULL);
    struct resolution r;
    berth_error_t err;
    struct resolve_request req = { .nodes = 16, .min_nodes_allowed = 1,
                                    .qos = "debug", .wall_time = "01:00:00" };
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), 0);
    json_t *o = resolution_to_json (&r);
    const char *sched, *part, *qos, *con, *max, *maxfrom, *adj, *wall, *wfrom,
        *rwall, *acct, *acctfrom;
    int reqn, effn, honored, gpus;
    json_t *reason, *maxs, *walls, *changes;
    /* every field, numbers as numbers (gpus_per_node was the string "4") */
    ck_assert_int_eq (json_unpack (o, "{s:s s:s s:s s:s s:i s:s s:o s:s s:s "
                                   "s:s s:o s:s s:i s:i s:s s:b s:o s:s s:s "
                                   "s:o !}",
                                   "scheduler", &sched, "partition", &part,
                                   "qos", &qos, "constraint", &con,
                                   "gpus_per_node", &gpus, "max_wallclock", &max,
                                   "max_wallclock_seconds", &maxs,
                                   "max_wallclock_from", &maxfrom,
                                   "requested_wall_time", &rwall,
                                   "wall_time", &wall,
                                   "wall_time_seconds", &walls,
                                   "wall_time_from", &wfrom,
                                   "requested_nodes", &reqn,
                                   "effective_nodes", &effn, "adjustment", &adj,
                                   "honored", &honored, "reason", &reason,
                                   "account", &acct, "account_from", &acctfrom,
                                   "changes", &changes), 0);
    ck_assert_str_eq (sched, "slurm");
    ck_assert_str_eq (part, "");
    /* debug allows 00:30:00 < 01:00:00: denied, default regular. */
    ck_assert_str_eq (qos, "regular");
    ck_assert_str_eq (con, "gpu");
    ck_assert_int_eq (gpus, 4);
    ck_assert_str_eq (max, "48:00:00");
    ck_assert_int_eq (json_integer_value (maxs), 48 * 3600);
    ck_assert_str_eq (maxfrom, "the limit of qos regular at 16 nodes");
    ck_assert_int_eq (reqn, 16);
    ck_assert_int_eq (effn, 16);
    ck_assert_str_eq (adj, "exact");
    ck_assert_str_eq (wall, "01:00:00");
    ck_assert_str_eq (rwall, "01:00:00");
    ck_assert_int_eq (json_integer_value (walls), 3600);
    ck_assert_str_eq (wfrom, "as asked");
    ck_assert_str_eq (acct, "");
    ck_assert (!honored);
    ck_assert_ptr_nonnull (strstr (json_string_value (reason),
                                   "at most 00:30:00 on 8 nodes"));
    /* the denial is a change too; nothing else changed */
    ck_assert_int_eq (json_array_size (changes), 1);
    const char *field, *kind, *from, *to, *why;
    ck_assert_int_eq (json_unpack (json_array_get (changes, 0),
                                   "{s:s s:s s:s s:s s:s !}", "field", &field,
                                   "kind", &kind, "from", &from, "to", &to,
                                   "why", &why), 0);
    ck_assert_str_eq (field, "qos");
    ck_assert_str_eq (kind, "denied");
    ck_assert_str_eq (from, "debug");
    ck_assert_str_eq (to, "regular");
    json_decref (o);
    char *s = resolution_script (&r);
    ck_assert_str_eq (s, "# berth resolve: time 01:00:00: as asked\n"
                      "# berth resolve: changed: qos 'debug' denied, regular: "
                      "qos 'debug' allows at most 00:30:00 on 8 nodes but "
                      "01:00:00 was requested\n"
                      "#SBATCH --qos=regular\n#SBATCH --constraint=gpu\n"
                      "#SBATCH --nodes=16\n#SBATCH --time=01:00:00\n");
    free (s);
    resolution_clear (&r);
    targets_destroy (t);

    t = machine (aurora, NULL);
    req = (struct resolve_request) { .nodes = 200, .min_nodes_allowed = 1 };
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), 0);
    o = resolution_to_json (&r);
    const char *queue, *fs;
    /* every field of a PBS answer, and no other */
    ck_assert_int_eq (json_unpack (o, "{s:s s:s s:s s:s s:i s:s s:o s:s s:s "
                                   "s:s s:o s:s s:i s:i s:s s:b s:o s:s s:s "
                                   "s:o !}",
                                   "scheduler", &sched, "queue", &queue,
                                   "filesystems", &fs,
                                   "constraint", &con, "gpus_per_node", &gpus,
                                   "max_wallclock", &max,
                                   "max_wallclock_seconds", &maxs,
                                   "max_wallclock_from", &maxfrom,
                                   "requested_wall_time", &rwall,
                                   "wall_time", &wall,
                                   "wall_time_seconds", &walls,
                                   "wall_time_from", &wfrom,
                                   "requested_nodes", &reqn,
                                   "effective_nodes", &effn, "adjustment", &adj,
                                   "honored", &honored, "reason", &reason,
                                   "account", &acct, "account_from", &acctfrom,
                                   "changes", &changes), 0);
    ck_assert_str_eq (sched, "pbs");
    ck_assert_str_eq (queue, "capacity");
    ck_assert_str_eq (fs, "home:flare");
    ck_assert_int_eq (gpus, 0);
    ck_assert_str_eq (max, "168:00:00");
    /* no wall time asked for: the limit, and which */
    ck_assert_str_eq (wall, "168:00:00");
    ck_assert_str_eq (wfrom, "the limit of queue capacity at 16 nodes (no "
                      "wall time asked for)");
    ck_assert_str_eq (acct, "E3SM_Dec");
    ck_assert_str_eq (acctfrom, "machine default");
    ck_assert (honored);
    ck_assert (json_is_null (reason));
    /* 200 nodes lowered to capacity's 16: said, numbers as numbers */
    ck_assert_int_eq (json_array_size (changes), 1);
    json_int_t nfrom, nto;
    ck_assert_int_eq (json_unpack (json_array_get (changes, 0),
                                   "{s:s s:s s:I s:I s:s !}", "field", &field,
                                   "kind", &kind, "from", &nfrom, "to", &nto,
                                   "why", &why), 0);
    ck_assert_str_eq (field, "nodes");
    ck_assert_str_eq (kind, "lowered");
    ck_assert_int_eq (nfrom, 200);
    ck_assert_int_eq (nto, 16);
    ck_assert_str_eq (why, "queue capacity takes at most 16 nodes");
    json_decref (o);
    s = resolution_script (&r);
    ck_assert_str_eq (s, "# berth resolve: time 168:00:00: the limit of queue "
                      "capacity at 16 nodes (no wall time asked for)\n"
                      "# berth resolve: changed: nodes 200 -> 16 (lowered: "
                      "queue capacity takes at most 16 nodes)\n"
                      "#PBS -A E3SM_Dec\n#PBS -q capacity\n"
                      "#PBS -l select=16\n#PBS -l walltime=168:00:00\n"
                      "#PBS -l filesystems=home:flare\n");
    free (s);
    resolution_clear (&r);
    resolution_clear (&r);
    targets_destroy (t);

    /* --account instead of the machine's */
    t = machine (frontier, NULL);
    req = (struct resolve_request) {
        .nodes = 100, .min_nodes_allowed = 1, .scheduler_target = "debug",
        .wall_time = "01:00:00", .account = "cli999" };
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), 0);
    ck_assert_str_eq (r.account_from, "--account");
    s = resolution_script (&r);
    ck_assert_str_eq (s, "# berth resolve: time 01:00:00: as asked\n"
                      "#SBATCH --account=cli999\n#SBATCH --partition=batch\n"
                      "#SBATCH --qos=debug\n#SBATCH --nodes=100\n"
                      "#SBATCH --time=01:00:00\n");
    free (s);
    resolution_clear (&r);
    targets_destroy (t);
}
END_TEST

/* The issue-17 case and its kin: every change the resolution makes is said,
 * with from, to and why; wall times in every form the schedulers take. */
static void one_change (const char *text, const struct resolve_request *req,
                        const char *field, const char *kind, const char *from,
                        const char *to, const char *why)
{
    struct machine_targets *t = machine (text, NULL);
    struct resolution r;
    berth_error_t err;
    ck_assert_msg (resolve_job (t, req, &r, &err) == 0, "%s", err.text);
    ck_assert_msg (r.nchanges == 1, "%d changes", r.nchanges);
    const struct resolve_change *c = &r.changes[0];
    ck_assert_str_eq (c->field, field);
    ck_assert_str_eq (c->kind, kind);
    ck_assert_str_eq (c->from, from);
    ck_assert_str_eq (c->to, to);
    ck_assert_msg (strstr (c->why, why), "'%s' lacks '%s'", c->why, why);
    resolution_clear (&r);
    targets_destroy (t);
}

START_TEST (changes_said)
{
    /* capped: honored, but said (it used to read "everything asked for was
     * honored") */
    struct resolve_request req = { .nodes = 4, .min_nodes_allowed = 1,
                                   .wall_time = "100:00:00" };
    one_change (pm_cpu, &req, "wall_time", "capped", "100:00:00", "48:00:00",
                "qos regular allows at most 48:00:00 on 4 nodes");
    /* the same in Slurm's D-HH:MM:SS, and days-hours */
    req.wall_time = "4-04:00:00";
    one_change (pm_cpu, &req, "wall_time", "capped", "100:00:00", "48:00:00",
                "qos regular");
    req.wall_time = "3-00";
    one_change (pm_cpu, &req, "wall_time", "capped", "72:00:00", "48:00:00",
                "qos regular");
    /* raised to a minimum */
    req = (struct resolve_request) { .nodes = 200, .min_nodes_allowed = 32 };
    one_change (aurora, &req, "nodes", "raised", "200", "256",
                "queue prod takes at least 256 nodes");
    /* dropped: an axis the machine does not use */
    static const struct {
        const char *machine, *field, *why;
        struct resolve_request req;
    } dropped[] = {
        { pm_cpu, "queue", "a slurm machine has no queues",
          { .nodes = 4, .min_nodes_allowed = 1, .queue = "debug" } },
        { pm_cpu, "partition", "lists no partitions",
          { .nodes = 4, .min_nodes_allowed = 1, .partition = "debug" } },
        { aurora, "qos", "a pbs machine has no qos",
          { .nodes = 4, .min_nodes_allowed = 1, .qos = "debug" } },
        { improv, "queue", "lists no queues",
          { .nodes = 4, .min_nodes_allowed = 1, .queue = "debug" } },
        { frontier, "constraint", "lists no constraints",
          { .nodes = 4, .min_nodes_allowed = 1, .constraint = "debug" } },
    };
    for (size_t i = 0; i < sizeof (dropped) / sizeof (dropped[0]); i++)
        one_change (dropped[i].machine, &dropped[i].req, dropped[i].field,
                    "dropped", "debug", "", dropped[i].why);

    /* a bare number is minutes to Slurm, seconds to PBS */
    struct machine_targets *t = machine (pm_cpu, NULL);
    struct resolution r;
    berth_error_t err;
    req = (struct resolve_request) { .nodes = 1, .min_nodes_allowed = 1,
                                     .wall_time = "90" };
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), 0);
    ck_assert_str_eq (r.wall_time, "01:30:00");
    ck_assert_str_eq (r.wall_time_from, "as asked (90)");
    ck_assert_int_eq (r.nchanges, 0);
    resolution_clear (&r);
    /* refused: no scheduler's form, and the message names the forms */
    req.wall_time = "4 hours";
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), -1);
    ck_assert_msg (strstr (err.text, "'4 hours'") && strstr (err.text,
                   "D-HH:MM:SS") && strstr (err.text, "SECONDS"), "%s",
                   err.text);
    ck_assert_ptr_null (r.scheduler);
    targets_destroy (t);
    t = machine (polaris, NULL);
    req.wall_time = "5400";
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), 0);
    ck_assert_str_eq (r.wall_time, "01:30:00");
    resolution_clear (&r);
    targets_destroy (t);
}
END_TEST

/* ---- the shipped machine files carry the same targets ---- */

static const struct {
    const char *name;
    const char *fixture;
} shipped[] = {
    { "pm-cpu", pm_cpu }, { "pm-gpu", pm_gpu }, { "frontier", frontier },
    { "chrysalis", chrysalis }, { "compy", compy }, { "dane", dane },
    { "chicoma-cpu", chicoma }, { "aurora", aurora }, { "polaris", polaris },
    { "improv", improv }, { "localhost", localhost },
};

static struct machine_targets *shipped_targets (const char *name,
                                                const char *compiler,
                                                struct machine **mp)
{
    struct machine_options opts = { .name = name, .compiler = compiler };
    struct machine_targets *t;
    berth_error_t err;
    ck_assert_msg (machine_load (&opts, mp, &err) == 0, "%s: %s", name,
                   err.text);
    ck_assert_msg (targets_load_machine (*mp, &t, &err) == 0, "%s: %s", name,
                   err.text);
    return t;
}

static void same_axis (const char *m, const struct target_axis *a,
                       const struct target_axis *b)
{
    static const int sizes[] = { 1, 2, 3, 8, 9, 10, 11, 16, 17, 50, 51, 64,
                                 65, 90, 91, 92, 183, 184, 255, 256, 440, 441,
                                 512, 513, 3072, 3073, 9472, 9473, 100000 };
    ck_assert_msg (a->count == b->count, "%s %s: %d targets shipped, %d in "
                   "the table", m, a->name, a->count, b->count);
    for (int i = 0; i < a->count; i++) {
        const struct target *x = &a->targets[i], *y = &b->targets[i];
        ck_assert_msg (!strcmp (x->name, y->name), "%s %s %d: %s vs %s", m,
                       a->name, i, x->name, y->name);
        for (size_t j = 0; j < sizeof (sizes) / sizeof (sizes[0]); j++) {
            const char *wx = target_max_wallclock (x, sizes[j]);
            const char *wy = target_max_wallclock (y, sizes[j]);
            bool same = target_max_seconds (x, sizes[j])
                        == target_max_seconds (y, sizes[j]);
            ck_assert_msg (target_clamp (x, sizes[j]) == target_clamp (y, sizes[j])
                           && same, "%s %s %s at %d nodes: %d nodes %s "
                           "shipped, %d nodes %s in the table", m, a->name,
                           x->name, sizes[j], target_clamp (x, sizes[j]), wx,
                           target_clamp (y, sizes[j]), wy);
        }
    }
}

START_TEST (shipped_match_table)
{
    struct machine *m;
    struct machine_targets *t = shipped_targets (shipped[_i].name, NULL, &m);
    struct machine_targets *f = machine (shipped[_i].fixture, NULL);
    ck_assert_str_eq (t->system, f->system);
    /* localhost's GPUs are detected on the host running the tests. */
    if (strcmp (shipped[_i].name, "localhost") != 0)
        ck_assert_str_eq (t->gpus_per_node, f->gpus_per_node);
    same_axis (shipped[_i].name, &t->partition, &f->partition);
    same_axis (shipped[_i].name, &t->qos, &f->qos);
    same_axis (shipped[_i].name, &t->queue, &f->queue);
    ck_assert_int_eq (t->nconstraints, f->nconstraints);
    for (int i = 0; i < f->nconstraints; i++)
        ck_assert_str_eq (t->constraints[i], f->constraints[i]);
    if (f->account)
        ck_assert_str_eq (t->account, f->account);
    targets_destroy (f);
    targets_destroy (t);
    machine_destroy (m);
}
END_TEST

/* The brief's examples straight from the shipped files. */
START_TEST (shipped_examples)
{
    struct machine *m;
    struct machine_targets *t = shipped_targets ("frontier", NULL, &m);
    struct resolve_request req = { .nodes = 100, .min_nodes_allowed = 1,
                                   .scheduler_target = "debug",
                                   .wall_time = "01:00:00" };
    struct resolution r;
    berth_error_t err;
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), 0);
    ck_assert_str_eq (r.partition, "batch");
    ck_assert_str_eq (r.qos, "debug");
    ck_assert_str_eq (r.max_wallclock, "02:00:00");
    ck_assert_str_eq (r.wall_time, "01:00:00");
    ck_assert (r.honored);
    resolution_clear (&r);
    targets_destroy (t);
    machine_destroy (m);

    t = shipped_targets ("aurora", NULL, &m);
    req = (struct resolve_request) { .nodes = 200, .min_nodes_allowed = 1 };
    ck_assert_int_eq (resolve_job (t, &req, &r, &err), 0);
    ck_assert_str_eq (r.queue, "capacity");
    ck_assert_int_eq (r.effective_nodes, 16);
    resolution_clear (&r);
    targets_destroy (t);
    machine_destroy (m);

    /* pm-gpu's gnu build has no GPUs. */
    t = shipped_targets ("pm-gpu", "gnu", &m);
    ck_assert_str_eq (t->gpus_per_node, "0");
    targets_destroy (t);
    machine_destroy (m);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("resolve");
    TCase *tc = tcase_create ("resolve");
    tcase_add_loop_test (tc, brief_examples_axis, 0,
                         sizeof (brief_axis) / sizeof (brief_axis[0]));
    tcase_add_loop_test (tc, target_edges, 0, sizeof (edges) / sizeof (edges[0]));
    tcase_add_test (tc, placeholders);
    tcase_add_test (tc, axis_errors);
    tcase_add_loop_test (tc, job_cases, 0, sizeof (jobs) / sizeof (jobs[0]));
    tcase_add_test (tc, max_wallclock_choice);
    tcase_add_test (tc, job_errors);
    tcase_add_test (tc, json_fields);
    tcase_add_test (tc, changes_said);
    tcase_add_loop_test (tc, shipped_match_table, 0,
                         sizeof (shipped) / sizeof (shipped[0]));
    tcase_add_test (tc, shipped_examples);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
