/* SPDX-License-Identifier: MIT */
/* What status and resources report: the allocation with what is held and
 * free on each node, the leases with their ages, the queue with the reason
 * each request waits, and the daemon itself. Every figure `berth status`
 * prints comes from here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocation_json.h"
#include "berth_config.h"
#include "berthd.h"
#include "status.h"
#include "ops.h"
#include "queue.h"
#include "idset.h"

static json_t *mb (int64_t v)
{
    return v >= 0 ? json_integer (v) : json_null ();
}

/* What the ledger holds on node i, as status adds it to the node's entry. */
static json_t *node_state (struct berthd *d, int i)
{
    struct ledger_node_info in;
    ledger_node_info (d->ledger, i, &in);
    return json_pack ("{s:i s:i s:i s:i s:o s:o s:o s:i}",
                      "cores_used", in.cores - in.free_cores,
                      "cores_free", in.free_cores,
                      "gpus_used", in.gpus - in.free_gpus,
                      "gpus_free", in.free_gpus, "memory_mb", mb (in.memory),
                      "memory_budgeted_mb", mb (in.memory >= 0
                                                ? in.memory - in.unbudgeted
                                                : -1),
                      "memory_unbudgeted_mb", mb (in.unbudgeted),
                      "leases", in.leases);
}

/* The members both views add to the allocation: the sums the ledger keeps,
 * what the launcher can do, the job's end. */
static int allocation_finish (struct berthd *d, json_t *a)
{
    struct ledger_totals t;
    json_t *totals = json_object_get (a, "totals");
    ledger_totals (d->ledger, &t);
    if (!totals || json_object_update_new (totals, json_pack (
            "{s:I s:I s:I s:I s:I s:I s:i s:i s:i s:o s:o s:o}",
            "leases", (json_int_t) t.resident,
            "cores_used", (json_int_t) (t.cores - t.free_cores),
            "cores_free", (json_int_t) t.free_cores,
            "gpus_used", (json_int_t) (t.gpus - t.free_gpus),
            "gpus_free", (json_int_t) t.free_gpus,
            "nodes_held", (json_int_t) (t.nodes - t.idle),
            "nodes_full", t.full, "nodes_idle", t.idle,
            "nodes_partly", t.nodes - t.full - t.idle,
            "memory_mb", mb (t.memory),
            "memory_budgeted_mb", mb (t.memory >= 0
                                      ? t.memory - t.unbudgeted : -1),
            "memory_unbudgeted_mb", mb (t.unbudgeted))) < 0
        || json_object_set_new (a, "placement_support", json_string (
               placement_support_name (d->caps.placement))) < 0
        || json_object_set_new (a, "memory_caps", json_string (
               memcap_support_name (d->caps.memcap))) < 0
        || json_object_set_new (a, "launcher", json_string (d->caps.desc)) < 0
        || json_object_set_new (a, "layout", json_string (
               d->layout == LEDGER_SCHEDULER ? "scheduler"
                                             : "cpu_binding")) < 0)
        return -1;
    jobend_status (d->jobend, a);
    return 0;
}

json_t *status_allocation (struct berthd *d)
{
    json_t *a = allocation_to_json (d->alloc);
    json_t *nodes = a ? json_object_get (a, "nodes") : NULL;
    if (!nodes)
        goto fail;
    for (int i = 0; i < ledger_nnodes (d->ledger); i++) {
        json_t *n = json_array_get (nodes, (size_t) i);
        if (!n || json_object_update_new (n, node_state (d, i)) < 0)
            goto fail;
    }
    if (allocation_finish (d, a) < 0)
        goto fail;
    return a;
fail:
    json_decref (a);
    return NULL;
}

json_t *status_allocation_brief (struct berthd *d, int k)
{
    int *busy = malloc ((size_t) k * sizeof (int));
    json_t *a = NULL, *nodes = json_array ();
    if (!d->alloc_head)
        d->alloc_head = allocation_head_json (d->alloc);
    if (!busy || !nodes || !d->alloc_head
        || !(a = json_deep_copy (d->alloc_head)))
        goto fail;
    int n = ledger_busiest (d->ledger, busy, k);
    for (int j = 0; j < n; j++) {
        json_t *o = allocation_node_json (d->alloc, busy[j]);
        if (!o || json_object_update_new (o, node_state (d, busy[j])) < 0
            || json_array_append_new (nodes, o) < 0) {
            json_decref (o);
            goto fail;
        }
    }
    free (busy);
    if (json_object_set_new (a, "nodes", nodes) < 0) {
        json_decref (a);
        return NULL;
    }
    if (allocation_finish (d, a) < 0) {
        json_decref (a);
        return NULL;
    }
    return a;
fail:
    free (busy);
    json_decref (nodes);
    json_decref (a);
    return NULL;
}

static json_t *lease_status (struct berthd *d, const struct lease *ls,
                             double now)
{
    bool held = lease_book_holder (d->book, ls->id) != NULL;
    struct proto_lease pl;
    char needs[256];
    lease_to_proto (ls, false, &pl);
    step_shape_describe (&ls->shape, needs, sizeof (needs));
    json_t *o = proto_lease_json (&pl);
    if (!o)
        return NULL;
    bool orphaned = !ls->detached && !held;
    if (json_object_update_new (o, json_pack (
            "{s:f s:s s:b s:s s:i s:i s:o s:s s:o s:o}", "age_s",
            now - ls->granted,
            "holder", ls->detached ? "detached" : held ? "connection"
                                                           : "orphaned",
            "local", ls->local, "needs", needs, "uid", (int) ls->uid,
            "peer_pid", (int) ls->peer_pid,
            "expires", ls->expires >= 0 ? json_real (ls->expires) : json_null (),
            "layout", ls->layout == LEDGER_SCHEDULER ? "scheduler"
                                                     : "cpu_binding",
            /* orphaned: held while berthd watches its holder's pid, or (it
             * cannot) until reclaim_by */
            "holder_watched", orphaned ? json_boolean (ls->reclaim_by < 0)
                                       : json_null (),
            "reclaim_by", orphaned && ls->reclaim_by >= 0
                          ? json_real (ls->reclaim_by) : json_null ())) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

/* The status of each of n leases, as an array (v is freed). */
static json_t *leases_json (struct berthd *d, const struct lease **v, size_t n)
{
    json_t *arr = v ? json_array () : NULL;
    double now = now_wall ();
    for (size_t i = 0; arr && i < n; i++) {
        json_t *o = lease_status (d, v[i], now);
        if (o)
            json_array_append_new (arr, o);
    }
    free (v);
    return arr;
}

json_t *status_leases (struct berthd *d)
{
    size_t n;
    uint64_t *ids = lease_book_ids (d->book, &n);
    const struct lease **v = ids ? malloc ((n ? n : 1) * sizeof (*v)) : NULL;
    for (size_t i = 0; v && i < n; i++)
        v[i] = lease_book_find (d->book, ids[i]);
    free (ids);
    return leases_json (d, v, v ? n : 0);
}

json_t *status_leases_oldest (struct berthd *d, int k)
{
    const struct lease **v = malloc ((size_t) k * sizeof (*v));
    return leases_json (d, v, v ? lease_book_oldest (d->book, v, (size_t) k)
                                : 0);
}

#define STATUS_ESTIMATES 8

static json_t *queue_entry_json (struct berthd *d,
                                 const struct waitqueue_entry_info *in,
                                 double now)
{
    char needs[256];
    const struct waiter *p = queue_waiter_of (in->owner);
    step_shape_describe (in->shape, needs, sizeof (needs));
    /* Each estimate walks the leases: the first few only, where it means
     * something (further back, those before them decide). */
    double start = in->position <= STATUS_ESTIMATES
                   ? ledger_start_estimate (d->ledger, in->shape,
                                            p ? p->layout : d->layout, now)
                   : -1;
    return json_pack (
        "{s:i s:s? s:s s:f s:s s:i s:i s:i s:o s:i s:i s:o s:b}", "position",
        in->position, "label", in->label, "needs", needs, "waited_s",
        now - in->added, "why", in->reason ? in->reason : "", "priority",
        in->priority, "overtaken", in->overtaken, "pid",
        p ? (int) p->pid : 0,
        "timeout", p && p->acq.step.timeout >= 0
                   ? json_real (p->acq.step.timeout) : json_null (),
        "cores", in->shape->cores, "gpus", in->shape->gpus,
        "start_in_s", start >= 0 ? json_real (start - now) : json_null (),
        "restored", p && p->restored);
}

json_t *status_queue_head (struct berthd *d, int k)
{
    json_t *arr = json_array ();
    struct waitqueue_entry_info in;
    double now = now_mono ();
    for (int i = 0; arr && (k < 0 || i < k)
                    && queue_entry (d->queue, i, &in) == 0; i++)
        json_array_append_new (arr, queue_entry_json (d, &in, now));
    return arr;
}

json_t *status_queue (struct berthd *d)
{
    return status_queue_head (d, -1);
}

#define STATUS_PID_ENTRIES 64

static int by_position (const void *a, const void *b)
{
    return ((const struct waitqueue_entry_info *) a)->position
           - ((const struct waitqueue_entry_info *) b)->position;
}

json_t *status_queue_of_pid (struct berthd *d, pid_t pid)
{
    struct waitqueue_entry_info in[STATUS_PID_ENTRIES];
    int n = queue_entries_of_pid (d->queue, pid, in, STATUS_PID_ENTRIES);
    double now = now_mono ();
    json_t *arr = json_array ();
    qsort (in, (size_t) n, sizeof (in[0]), by_position);
    for (int i = 0; arr && i < n; i++)
        json_array_append_new (arr, queue_entry_json (d, &in[i], now));
    return arr;
}

json_t *status_daemon (struct berthd *d)
{
    struct journal_stats js;
    journal_stats (d->journal, &js);
    double since = 0;
    const char *held = queue_held (d->queue, &since);
    json_t *grants_held = held ? json_pack ("{s:f s:s}", "since", since,
                                            "why", held)
                               : json_null ();
    return json_pack ("{s:s s:i s:f s:f s:s s:s s:b s:i s:i s:I s:i s:{s:i s:f} "
                      "s:s s:s? s:{s:s s:I s:i s:I s:b} s:o?}",
                      "version", BERTH_VERSION, "pid", (int) getpid (),
                      "started", d->started, "uptime_s", now_wall () - d->started,
                      "socket", d->socket_path, "state_dir", d->state_dir,
                      "draining", d->draining,
                      "connections", d->connections,
                      "max_connections", d->cfg.max_connections,
                      "leases", (json_int_t) lease_book_count (d->book),
                      "waiting", queue_waiting (d->queue),
                      "starvation", "overtakes", d->cfg.starvation_overtakes,
                      "seconds", d->cfg.starvation_seconds,
                      "machine", d->machine->name,
                      "job_id", d->alloc->job_id,
                      "journal", "path", js.path,
                      "bytes", (json_int_t) js.bytes,
                      "records", js.records,
                      "compactions", (json_int_t) js.compactions,
                      "dirty", js.dirty, "grants_held", grants_held);
}

/* ---- the steps that failed ---- */

void status_note_failure (struct berthd *d, const char *lease, const char *label,
                          double time, const struct proto_outcome *o)
{
    struct recent_failure *f = &d->failed[d->nfailed % BERTHD_RECENT_FAILED];
    proto_outcome_destroy (f->outcome);
    snprintf (f->lease, sizeof (f->lease), "%s", lease ? lease : "");
    snprintf (f->label, sizeof (f->label), "%s", label ? label : "");
    f->time = time;
    f->outcome = proto_outcome_copy (o);   /* NULL when out of memory: shown bare */
    d->nfailed++;
}

void status_failures_free (struct berthd *d)
{
    for (int i = 0; i < BERTHD_RECENT_FAILED; i++) {
        proto_outcome_destroy (d->failed[i].outcome);
        d->failed[i].outcome = NULL;
    }
}

/* {"count": all since start, "recent": the latest first} */
json_t *status_failed (struct berthd *d)
{
    json_t *recent = json_array ();
    uint64_t n = d->nfailed < BERTHD_RECENT_FAILED ? d->nfailed : BERTHD_RECENT_FAILED;
    for (uint64_t i = 0; recent && i < n; i++) {
        const struct recent_failure *f =
            &d->failed[(d->nfailed - 1 - i) % BERTHD_RECENT_FAILED];
        json_t *o = f->outcome ? proto_outcome_json (f->outcome) : NULL;
        json_t *e = json_pack ("{s:s s:s? s:f s:o?}", "lease", f->lease, "label",
                               f->label[0] ? f->label : NULL, "time", f->time,
                               "outcome", o);
        if (!e || json_array_append_new (recent, e) < 0) {
            json_decref (recent);
            return NULL;
        }
    }
    return recent ? json_pack ("{s:I s:o}", "count", (json_int_t) d->nfailed,
                               "recent", recent) : NULL;
}

/* ---- resources ---- */

json_t *resources_lease (struct berthd *d, const struct lease *ls)
{
    const struct ledger_lease *ll = ledger_lease_find (d->ledger, ls->id);
    json_t *nodes = json_array ();
    int cores = 0, gpus = 0;
    int64_t mem = 0;
    if (!ll || !nodes) {
        json_decref (nodes);
        return NULL;
    }
    for (int i = 0; i < ll->nnodes; i++) {
        const struct ledger_lease_node *ln = &ll->nodes[i];
        /* the lease's ids: the ledger's, or those a local step srun placed
         * reported (op placed) */
        const int *cids = ls->placement.nodes[i].cores;
        const int *gids = ll->nnodes == 1 && ls->placement.gpu_ids
                          ? ls->placement.gpu_ids : ln->gpus;
        char *ids = malloc ((size_t) ln->ncores * 9 + 1);
        json_t *g = json_array ();
        for (int k = 0; g && k < ln->ngpus; k++)
            json_array_append_new (g, json_integer (gids[k]));
        int64_t m = ls->shape.memory >= 0 ? ls->shape.memory
                    : ls->shape.budget >= 0 ? ln->memory : -1;
        if (!ids || !g
            || idset_format (cids, ln->ncores, ids,
                             (size_t) ln->ncores * 9 + 1) < 0
            || json_array_append_new (nodes, json_pack (
                   "{s:s s:s s:i s:i s:o s:o}", "name",
                   ls->placement.nodes[i].name, "cores", ids, "ncores",
                   ln->ncores, "gpus", ln->ngpus, "gpu_ids", g,
                   "memory_mb", mb (m))) < 0) {
            free (ids);
            json_decref (nodes);
            return NULL;
        }
        free (ids);
        cores += ln->ncores;
        gpus += ln->ngpus;
        mem = mem < 0 || m < 0 ? -1 : mem + m;
    }
    return json_pack ("{s:s s:o s:{s:i s:i s:i s:o} s:o s:o}", "lease",
                      ls->name, "nodes", nodes, "totals", "nodes", ll->nnodes,
                      "cores", cores, "gpus", gpus, "memory_mb", mb (mem),
                      "memory_cap", mb (ls->shape.memory),
                      "budget_mb", mb (ls->shape.budget));
}

json_t *resources_allocation (struct berthd *d)
{
    return allocation_to_json (d->alloc);
}

void status_key_of (struct berthd *d, struct status_key *key)
{
    struct journal_stats js;
    double since = 0;
    journal_stats (d->journal, &js);
    *key = (struct status_key) {
        .changes = d->changes, .ledger = ledger_generation (d->ledger),
        .journal_bytes = js.bytes, .compactions = js.compactions,
        .leases = lease_book_count (d->book),
        .waiting = queue_waiting (d->queue), .draining = d->draining,
        .held_since = queue_held (d->queue, &since) ? since : 0,
        .job_end = jobend_get (d->jobend), .failed = d->nfailed,
    };
}
