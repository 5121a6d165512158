/* SPDX-License-Identifier: MIT */
/* Resolution of a job request against a machine's scheduler targets. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve.h"
#include "text.h"
#include "wallclock.h"

const char *adjustment_name (enum adjustment a)
{
    switch (a) {
    case ADJUST_DECREASE: return "decrease";
    case ADJUST_INCREASE: return "increase";
    default: return "exact";
    }
}

/* "s" unless n is 1, for "1 node", "2 nodes". */
static const char *plural (long long n)
{
    return n == 1 ? "" : "s";
}

static enum adjustment adjustment_of (int asked, int got)
{
    return got == asked ? ADJUST_EXACT
         : got < asked ? ADJUST_DECREASE : ADJUST_INCREASE;
}

/* The trimmed request, or NULL for no request. */
static char *request_name (const char *text)
{
    if (!text)
        return NULL;
    size_t n = strlen (text);
    text_trim_span (&text, &n);
    /* Job-script templates leave <<<name>>> where nothing was filled in. */
    if (n == 0 || (n >= 6 && !strncmp (text, "<<<", 3)
                   && !strncmp (text + n - 3, ">>>", 3)))
        return NULL;
    return strndup (text, n);
}

bool resolve_no_request (const char *text)
{
    char *name = request_name (text);
    free (name);
    return name == NULL;
}

void axis_resolution_clear (struct axis_resolution *r)
{
    free (r->reason);
    memset (r, 0, sizeof (*r));
}

/* The default resolution: the target whose clamped count fits best. */
static int default_resolution (const struct target_axis *axis, int nodes,
                               int min_nodes_allowed,
                               struct axis_resolution *out, berth_error_t *err)
{
    int exact = -1, below = -1, above = -1;
    int below_n = 0, above_n = 0;

    out->target = NULL;
    out->nodes = nodes;
    if (axis->count == 0)
        return 0;
    for (int i = 0; i < axis->count; i++) {
        int n = target_clamp (&axis->targets[i], nodes);
        if (n < min_nodes_allowed)
            continue;
        if (n == nodes && exact < 0)
            exact = i;
        else if (n < nodes && (below < 0 || n > below_n))
            below = i, below_n = n;
        else if (n > nodes && (above < 0 || n < above_n))
            above = i, above_n = n;
    }
    int pick = exact >= 0 ? exact : below >= 0 ? below : above;
    if (pick < 0) {
        char checked[768] = "";
        size_t len = 0;
        for (int i = 0; i < axis->count && len < sizeof (checked); i++)
            len += snprintf (checked + len, sizeof (checked) - len,
                             "%s%s: %d nodes", i ? ", " : "",
                             axis->targets[i].name,
                             target_clamp (&axis->targets[i], nodes));
        return errprintf_code (err, "invalid_request",
                               "no %s can run a job of %d nodes on at least %d "
                               "nodes (checked %s); lower min_nodes_allowed "
                               "or change the node count", axis->name, nodes,
                               min_nodes_allowed, checked);
    }
    out->target = &axis->targets[pick];
    out->nodes = target_clamp (out->target, nodes);
    return 0;
}

/* Why the request for target t on `nodes` must be denied, or NULL. */
static char *denial (const struct target_axis *axis, const char *name,
                     int nodes, int min_nodes_allowed, long long wall,
                     const struct target **tp, int *np)
{
    char *reason = NULL;
    const struct target *t = target_axis_find (axis, name);
    int rc = 0;

    if (!t) {
        char *names = target_axis_names (axis);
        rc = asprintf (&reason, "%s '%s' is not available on this machine "
                       "(available: %s)", axis->name, name,
                       names ? names : "?");
        free (names);
        return rc < 0 ? strdup ("request not available") : reason;
    }
    int n = target_clamp (t, nodes);
    long long max = target_max_seconds (t, n);
    char want[32];
    if (n < min_nodes_allowed)
        rc = asprintf (&reason, "%s '%s' would run on %d node%s but at least "
                       "%d are required", axis->name, name, n, plural (n),
                       min_nodes_allowed);
    else if (wall >= 0 && max >= 0 && wall > max)
        rc = asprintf (&reason, "%s '%s' allows at most %s on %d node%s but "
                       "%s was requested", axis->name, name,
                       target_max_wallclock (t, n), n, plural (n),
                       wallclock_format (wall, want, sizeof (want)));
    if (rc < 0)
        return strdup ("request denied");
    *tp = t;
    *np = n;
    return reason;
}

int resolve_submission (const struct target_axis *axis, int nodes,
                        int min_nodes_allowed, const char *request,
                        long long desired_seconds,
                        struct axis_resolution *out, berth_error_t *err)
{
    memset (out, 0, sizeof (*out));
    if (nodes < 1)
        return errprintf_code (err, "invalid_request", "the node count must "
                               "be positive (got %d)", nodes);
    if (min_nodes_allowed < 1)
        return errprintf_code (err, "invalid_request", "min_nodes_allowed "
                               "must be positive (got %d)", min_nodes_allowed);
    char *name = request_name (request);
    const struct target *t = NULL;
    int n = nodes;
    char *reason = NULL;
    int rc = 0;

    /* A request on an axis the machine does not use is ignored. */
    if (name && axis->count > 0)
        reason = denial (axis, name, nodes, min_nodes_allowed,
                         desired_seconds, &t, &n);
    if (!name || axis->count == 0 || reason)
        rc = default_resolution (axis, nodes, min_nodes_allowed, out, err);
    else {
        out->target = t;
        out->nodes = n;
    }
    free (name);
    if (rc < 0) {
        free (reason);
        memset (out, 0, sizeof (*out));
        return -1;
    }
    out->adjustment = adjustment_of (nodes, out->nodes);
    out->honored = reason == NULL;
    out->reason = reason;
    return 0;
}

static void change_free (struct resolve_change *c)
{
    free (c->field);
    free (c->kind);
    free (c->from);
    free (c->to);
    free (c->why);
}

void resolution_clear (struct resolution *r)
{
    free (r->scheduler);
    free (r->partition);
    free (r->qos);
    free (r->queue);
    free (r->constraint);
    free (r->gpus_per_node);
    free (r->max_wallclock);
    free (r->max_wallclock_from);
    free (r->filesystems);
    free (r->wall_time);
    free (r->wall_time_from);
    free (r->requested_wall_time);
    free (r->account);
    free (r->account_from);
    free (r->reason);
    for (int i = 0; i < r->nchanges; i++)
        change_free (&r->changes[i]);
    free (r->changes);
    memset (r, 0, sizeof (*r));
}

/* Reasons in the order they are found, joined with "; ", and the changes;
 * `oom` records a failed allocation, reported once at the end. */
struct job_notes {
    char *reasons;
    struct resolve_change *changes;
    int nchanges;
    bool oom;
};

static void reasons_add (struct job_notes *jn, const char *reason)
{
    char *joined;
    if (!reason)
        return;
    if (!jn->reasons) {
        if (!(jn->reasons = strdup (reason)))
            jn->oom = true;
        return;
    }
    if (asprintf (&joined, "%s; %s", jn->reasons, reason) < 0) {
        jn->oom = true;
        return;
    }
    free (jn->reasons);
    jn->reasons = joined;
}

static void change_add (struct job_notes *jn, const char *field,
                        const char *kind, const char *from, const char *to,
                        long long from_n, long long to_n, const char *why)
{
    struct resolve_change *v = realloc (jn->changes, (jn->nchanges + 1)
                                                     * sizeof (*v));
    if (!v) {
        jn->oom = true;
        return;
    }
    jn->changes = v;
    struct resolve_change *c = &v[jn->nchanges];
    *c = (struct resolve_change) {
        .field = strdup (field), .kind = strdup (kind),
        .from = strdup (from ? from : ""), .to = strdup (to ? to : ""),
        .from_n = from_n, .to_n = to_n, .why = strdup (why ? why : ""),
    };
    if (!c->field || !c->kind || !c->from || !c->to || !c->why) {
        change_free (c);
        jn->oom = true;
        return;
    }
    jn->nchanges++;
}

static void job_notes_free (struct job_notes *jn)
{
    free (jn->reasons);
    for (int i = 0; i < jn->nchanges; i++)
        change_free (&jn->changes[i]);
    free (jn->changes);
}

/* The denial of a scheduler target found on no axis of the machine. */
static char *target_nowhere (const struct machine_targets *t, bool pbs,
                             const char *name)
{
    char *reason = NULL;
    int rc;
    if (pbs) {
        char *q = target_axis_names (&t->queue);
        rc = t->queue.count
            ? asprintf (&reason, "scheduler target '%s' is not a queue on "
                        "this machine (queues: %s)", name, q ? q : "?")
            : asprintf (&reason, "scheduler target '%s' matches nothing: this "
                        "machine defines no queues", name);
        free (q);
    } else if (t->partition.count + t->qos.count == 0) {
        rc = asprintf (&reason, "scheduler target '%s' matches nothing: this "
                       "machine defines no targets", name);
    } else {
        char *p = target_axis_names (&t->partition);
        char *q = target_axis_names (&t->qos);
        rc = asprintf (&reason, "scheduler target '%s' is neither a partition "
                       "nor a qos on this machine (partitions: %s, qos: %s)",
                       name, t->partition.count && p ? p : "none",
                       t->qos.count && q ? q : "none");
        free (p);
        free (q);
    }
    return rc < 0 ? strdup ("scheduler target not found") : reason;
}

static char *join_list (char **items, int n, const char *sep)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&s, &len);
    if (!f)
        return NULL;
    for (int i = 0; i < n; i++)
        fprintf (f, "%s%s", i ? sep : "", items[i]);
    fclose (f);
    return s;
}

/* The constraint to use; notes a denial when the request is unknown and a
 * dropped request when the machine lists none. */
static const char *pick_constraint (const struct machine_targets *t,
                                    const char *request,
                                    struct job_notes *jn, bool *honored)
{
    char *name = request_name (request);
    const char *pick = t->nconstraints ? t->constraints[0] : "";
    if (name && !t->nconstraints)
        change_add (jn, "constraint", "dropped", name, "", -1, -1,
                    "this machine lists no constraints");
    else if (name) {
        int i = 0;
        while (i < t->nconstraints && strcmp (t->constraints[i], name))
            i++;
        if (i < t->nconstraints)
            pick = t->constraints[i];
        else {
            char *avail = join_list (t->constraints, t->nconstraints, ", ");
            char *reason = NULL;
            if (asprintf (&reason, "constraint '%s' is not available on this "
                          "machine (available: %s)", name,
                          avail ? avail : "?") >= 0) {
                reasons_add (jn, reason);
                change_add (jn, "constraint", "denied", name, pick, -1, -1,
                            reason);
                free (reason);
            } else
                jn->oom = true;
            free (avail);
            *honored = false;
        }
    }
    free (name);
    return pick;
}

/* A request on an axis the machine does not use: dropped, and said. */
static void note_dropped (struct job_notes *jn, const char *field,
                          const char *request, const char *why)
{
    char *name = request_name (request);
    if (name)
        change_add (jn, field, "dropped", name, "", -1, -1, why);
    free (name);
}

/* An axis's answer against what was asked of it: a denial, and a node count
 * moved into the target's range. */
static void note_axis (struct job_notes *jn, const struct target_axis *axis,
                       const char *request, int asked,
                       const struct axis_resolution *ar)
{
    char *name = request_name (request);
    char why[512];
    if (ar->reason)
        change_add (jn, axis->name, "denied", name,
                    ar->target ? ar->target->name : "", -1, -1, ar->reason);
    free (name);
    if (ar->target && ar->nodes != asked) {
        bool raised = ar->nodes > asked;
        snprintf (why, sizeof (why), "%s %s takes at %s %d node%s",
                  axis->name, ar->target->name, raised ? "least" : "most",
                  ar->nodes, plural (ar->nodes));
        char a[32], b[32];
        snprintf (a, sizeof (a), "%d", asked);
        snprintf (b, sizeof (b), "%d", ar->nodes);
        change_add (jn, "nodes", raised ? "raised" : "lowered", a, b, asked,
                    ar->nodes, why);
    }
}

static char *dup_or_empty (const char *s)
{
    return strdup (s ? s : "");
}

static char *printf_dup (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
static char *printf_dup (const char *fmt, ...)
{
    char *s;
    va_list ap;
    va_start (ap, fmt);
    int rc = vasprintf (&s, fmt, ap);
    va_end (ap);
    return rc < 0 ? NULL : s;
}

int resolve_job (const struct machine_targets *t,
                 const struct resolve_request *req, struct resolution *out,
                 berth_error_t *err)
{
    struct axis_resolution pr = { 0 }, qr = { 0 };
    struct job_notes jn = { 0 };
    bool pbs = t->system && !strcmp (t->system, "pbs");
    bool honored = true;
    char *st = request_name (req->scheduler_target);
    char *wall_req = request_name (req->wall_time);
    char *account = request_name (req->account);
    const char *preq = pbs ? req->queue : req->partition;
    const char *qreq = req->qos;
    long long wall = -1;
    char *endp;
    long gpus;

    memset (out, 0, sizeof (*out));
    if (wall_req && wallclock_read (wall_req, wallclock_dialect_of (t->system),
                                    &wall) < 0) {
        errprintf_code (err, "invalid_request", "wall time '%s' is in no form "
                        "the schedulers take: write " WALLCLOCK_FORMS,
                        wall_req);
        goto fail;
    }
    errno = 0;
    gpus = t->gpus_per_node ? strtol (t->gpus_per_node, &endp, 10) : 0;
    if (t->gpus_per_node && (endp == t->gpus_per_node || *endp || errno
                             || gpus < 0 || gpus > 1000000)) {
        errprintf (err, "[parallel] gpus_per_node = '%s' is not a whole "
                   "number of GPUs", t->gpus_per_node);
        goto fail;
    }
    /* Requests on axes the machine does not use are dropped, and said. */
    if (pbs) {
        note_dropped (&jn, "partition", req->partition, "berth resolves a "
                      "pbs machine's queues, not its partitions");
        note_dropped (&jn, "qos", req->qos, "a pbs machine has no qos");
        if (!t->queue.count)
            note_dropped (&jn, "queue", req->queue, "this machine lists no "
                          "queues");
    } else {
        note_dropped (&jn, "queue", req->queue, "a slurm machine has no "
                      "queues (partitions and qos instead)");
        if (!t->partition.count)
            note_dropped (&jn, "partition", req->partition, "this machine "
                          "lists no partitions");
        if (!t->qos.count)
            note_dropped (&jn, "qos", req->qos, "this machine lists no qos");
    }
    /* A scheduler target becomes the request on the axis that lists it,
     * unless that axis was asked for explicitly. */
    if (st) {
        const struct target_axis *first = pbs ? &t->queue : &t->partition;
        if (target_axis_find (first, st)) {
            if (resolve_no_request (preq))
                preq = st;
        } else if (!pbs && target_axis_find (&t->qos, st)) {
            if (resolve_no_request (qreq))
                qreq = st;
        } else {
            char *reason = target_nowhere (t, pbs, st);
            reasons_add (&jn, reason);
            change_add (&jn, "scheduler_target", "denied", st, "", -1, -1,
                        reason);
            free (reason);
            honored = false;
        }
    }
    const struct target_axis *paxis = pbs ? &t->queue : &t->partition;
    if (resolve_submission (paxis, req->nodes, req->min_nodes_allowed, preq,
                            wall, &pr, err) < 0)
        goto fail;
    if (!pbs && resolve_submission (&t->qos, pr.nodes, req->min_nodes_allowed,
                                    qreq, wall, &qr, err) < 0)
        goto fail;
    int nodes = pbs ? pr.nodes : qr.nodes;
    reasons_add (&jn, pr.reason);
    reasons_add (&jn, qr.reason);
    note_axis (&jn, paxis, preq, req->nodes, &pr);
    if (!pbs)
        note_axis (&jn, &t->qos, qreq, pr.nodes, &qr);
    honored = honored && pr.honored && (pbs || qr.honored);
    const char *constraint = pick_constraint (t, req->constraint, &jn,
                                              &honored);

    /* The limit: the more restrictive of partition's and qos's at the final
     * count (an unset side ignored, a tie the partition's). */
    const struct target *limit_t = NULL;
    const char *limit_axis = NULL;
    long long max = -1;
    long long ps = pr.target ? target_max_seconds (pr.target, nodes) : -1;
    long long qs = qr.target ? target_max_seconds (qr.target, nodes) : -1;
    if (ps >= 0)
        limit_t = pr.target, limit_axis = paxis->name, max = ps;
    if (qs >= 0 && (max < 0 || qs < max))
        limit_t = qr.target, limit_axis = "qos", max = qs;
    char limit[320] = "", wbuf[32], asked[32];
    if (limit_t)
        snprintf (limit, sizeof (limit), "the limit of %s %s at %d node%s",
                  limit_axis, limit_t->name, nodes, plural (nodes));

    out->max_wallclock = dup_or_empty (limit_t ? target_max_wallclock (limit_t,
                                                                      nodes)
                                               : NULL);
    out->max_wallclock_s = max;
    out->max_wallclock_from = strdup (limit);
    out->requested_wall_time = dup_or_empty (wall_req);
    if (wall >= 0 && max >= 0 && wall > max) {
        char why[512];
        wallclock_format (wall, asked, sizeof (asked));
        snprintf (why, sizeof (why), "%s %s allows at most %s on %d node%s",
                  limit_axis, limit_t->name, out->max_wallclock
                  ? out->max_wallclock : "?", nodes, plural (nodes));
        change_add (&jn, "wall_time", "capped", asked,
                    out->max_wallclock, wall, max, why);
        out->wall_time = dup_or_empty (out->max_wallclock);
        out->wall_time_s = max;
        out->wall_time_from = printf_dup ("capped at %s; %s was asked",
                                          limit, wall_req);
    } else if (wall >= 0) {
        out->wall_time = strdup (wallclock_format (wall, wbuf, sizeof (wbuf)));
        out->wall_time_s = wall;
        out->wall_time_from = strcmp (wbuf, wall_req)
            ? printf_dup ("as asked (%s)", wall_req) : strdup ("as asked");
    } else if (max >= 0) {
        out->wall_time = dup_or_empty (out->max_wallclock);
        out->wall_time_s = max;
        out->wall_time_from = printf_dup ("%s (no wall time asked for)",
                                          limit);
    } else {
        out->wall_time = strdup ("");
        out->wall_time_s = -1;
        out->wall_time_from = strdup ("");
    }

    out->pbs = pbs;
    out->scheduler = dup_or_empty (t->system);
    if (pbs) {
        out->queue = dup_or_empty (pr.target ? pr.target->name : NULL);
        out->filesystems = join_list (t->filesystems, t->nfilesystems, ":");
    } else {
        out->partition = dup_or_empty (pr.target ? pr.target->name : NULL);
        out->qos = dup_or_empty (qr.target ? qr.target->name : NULL);
    }
    out->constraint = dup_or_empty (constraint);
    out->gpus_per_node = dup_or_empty (t->gpus_per_node ? t->gpus_per_node
                                                        : "0");
    out->gpus = (int) gpus;
    out->account = dup_or_empty (account ? account : t->account);
    out->account_from = strdup (account ? "--account"
                                : t->account ? "machine default" : "");
    out->requested_nodes = req->nodes;
    out->effective_nodes = nodes;
    out->adjustment = adjustment_of (req->nodes, nodes);
    out->honored = honored;
    out->reason = jn.reasons;
    out->changes = jn.changes;
    out->nchanges = jn.nchanges;
    bool oom = jn.oom;
    jn = (struct job_notes) { 0 };
    axis_resolution_clear (&pr);
    axis_resolution_clear (&qr);
    free (st);
    free (wall_req);
    free (account);
    if (oom || !out->scheduler || (pbs ? !out->queue || !out->filesystems
                                       : !out->partition || !out->qos)
        || !out->constraint || !out->gpus_per_node || !out->max_wallclock
        || !out->max_wallclock_from || !out->wall_time
        || !out->wall_time_from || !out->requested_wall_time
        || !out->account || !out->account_from
        || (!honored && !out->reason)) {
        resolution_clear (out);
        return errprintf (err, "out of memory resolving the request");
    }
    return 0;
fail:
    axis_resolution_clear (&pr);
    axis_resolution_clear (&qr);
    job_notes_free (&jn);
    free (st);
    free (wall_req);
    free (account);
    return -1;
}

char *resolve_change_text (const struct resolve_change *c)
{
    if (!strcmp (c->kind, "dropped"))
        return printf_dup ("%s '%s' dropped: %s", c->field, c->from, c->why);
    if (!strcmp (c->kind, "denied"))
        return printf_dup ("%s '%s' denied, %s: %s", c->field, c->from,
                           *c->to ? c->to : "none", c->why);
    return printf_dup ("%s %s -> %s (%s: %s)", c->field, c->from, c->to,
                       c->kind, c->why);
}

char *resolution_script (const struct resolution *r)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&s, &len);
    const char *time = r->wall_time;

    if (!f)
        return NULL;
    /* Comments first: which limit the time came from, and every change. */
    if (*time)
        fprintf (f, "# berth resolve: time %s: %s\n", time, r->wall_time_from);
    else
        fprintf (f, "# berth resolve: no time line: none asked for and the "
                 "machine states no limit\n");
    for (int i = 0; i < r->nchanges; i++) {
        char *c = resolve_change_text (&r->changes[i]);
        fprintf (f, "# berth resolve: changed: %s\n", c ? c : "?");
        free (c);
    }
    if (r->pbs) {
        /* PBS has no portable node-feature directive: the constraint is not
         * written. */
        if (*r->account)
            fprintf (f, "#PBS -A %s\n", r->account);
        if (*r->queue)
            fprintf (f, "#PBS -q %s\n", r->queue);
        fprintf (f, "#PBS -l select=%d\n", r->effective_nodes);
        if (*time)
            fprintf (f, "#PBS -l walltime=%s\n", time);
        if (*r->filesystems)
            fprintf (f, "#PBS -l filesystems=%s\n", r->filesystems);
    } else {
        if (*r->account)
            fprintf (f, "#SBATCH --account=%s\n", r->account);
        if (*r->partition)
            fprintf (f, "#SBATCH --partition=%s\n", r->partition);
        if (*r->qos)
            fprintf (f, "#SBATCH --qos=%s\n", r->qos);
        if (*r->constraint)
            fprintf (f, "#SBATCH --constraint=%s\n", r->constraint);
        fprintf (f, "#SBATCH --nodes=%d\n", r->effective_nodes);
        if (*time)
            fprintf (f, "#SBATCH --time=%s\n", time);
    }
    if (fclose (f) != 0) {
        free (s);
        return NULL;
    }
    return s;
}
