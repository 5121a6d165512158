/* Resolution of a job request against a machine's scheduler targets. */
#include <ctype.h>
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
                     int nodes, int min_nodes_allowed, const char *wall,
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
    const char *max = target_max_wallclock (t, n);
    int cmp;
    if (n < min_nodes_allowed)
        rc = asprintf (&reason, "%s '%s' would run on %d nodes but at least "
                       "%d are required", axis->name, name, n,
                       min_nodes_allowed);
    else if (wall && max && wallclock_compare (wall, max, &cmp) == 0 && cmp > 0)
        rc = asprintf (&reason, "%s '%s' allows at most %s on %d nodes but "
                       "%s was requested", axis->name, name, max, n, wall);
    if (rc < 0)
        return strdup ("request denied");
    *tp = t;
    *np = n;
    return reason;
}

int resolve_submission (const struct target_axis *axis, int nodes,
                        int min_nodes_allowed, const char *request,
                        const char *desired_wall_time,
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
    char *wall = request_name (desired_wall_time);
    const struct target *t = NULL;
    int n = nodes;
    char *reason = NULL;
    int rc = 0;

    /* A request on an axis the machine does not use is ignored. */
    if (name && axis->count > 0)
        reason = denial (axis, name, nodes, min_nodes_allowed, wall, &t, &n);
    if (!name || axis->count == 0 || reason)
        rc = default_resolution (axis, nodes, min_nodes_allowed, out, err);
    else {
        out->target = t;
        out->nodes = n;
    }
    free (name);
    free (wall);
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

void resolution_clear (struct resolution *r)
{
    free (r->scheduler);
    free (r->partition);
    free (r->qos);
    free (r->queue);
    free (r->constraint);
    free (r->gpus_per_node);
    free (r->max_wallclock);
    free (r->filesystems);
    free (r->wall_time);
    free (r->reason);
    memset (r, 0, sizeof (*r));
}

/* Reasons in the order they are found, joined with "; ". */
struct reasons {
    char *text;
};

static void reasons_add (struct reasons *rs, const char *reason)
{
    char *joined;
    if (!reason)
        return;
    if (!rs->text) {
        rs->text = strdup (reason);
        return;
    }
    if (asprintf (&joined, "%s; %s", rs->text, reason) < 0)
        return;
    free (rs->text);
    rs->text = joined;
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

/* The constraint to use; adds a reason when the request is unknown. */
static const char *pick_constraint (const struct machine_targets *t,
                                    const char *request, struct reasons *rs,
                                    bool *honored)
{
    char *name = request_name (request);
    const char *pick = t->nconstraints ? t->constraints[0] : "";
    if (name && t->nconstraints) {
        int i = 0;
        while (i < t->nconstraints && strcmp (t->constraints[i], name))
            i++;
        if (i < t->nconstraints)
            pick = t->constraints[i];
        else {
            char *avail = NULL, *reason = NULL;
            size_t len = 0;
            FILE *f = open_memstream (&avail, &len);
            for (int j = 0; f && j < t->nconstraints; j++)
                fprintf (f, "%s%s", j ? ", " : "", t->constraints[j]);
            if (f)
                fclose (f);
            if (asprintf (&reason, "constraint '%s' is not available on this "
                          "machine (available: %s)", name,
                          avail ? avail : "?") >= 0) {
                reasons_add (rs, reason);
                free (reason);
            }
            free (avail);
            *honored = false;
        }
    }
    free (name);
    return pick;
}

/* The more restrictive of two limits; an unset side is ignored; ties and
 * unparsable values keep the first (the partition's). */
static const char *tighter (const char *first, const char *second)
{
    int cmp;
    if (!first)
        return second;
    if (!second)
        return first;
    if (wallclock_compare (second, first, &cmp) == 0 && cmp < 0)
        return second;
    return first;
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

static char *dup_or_empty (const char *s)
{
    return strdup (s ? s : "");
}

int resolve_job (const struct machine_targets *t,
                 const struct resolve_request *req, struct resolution *out,
                 berth_error_t *err)
{
    struct axis_resolution pr = { 0 }, qr = { 0 };
    struct reasons rs = { 0 };
    bool pbs = t->system && !strcmp (t->system, "pbs");
    bool honored = true;
    char *st = request_name (req->scheduler_target);
    char *wall = request_name (req->wall_time);
    const char *preq = pbs ? req->queue : req->partition;
    const char *qreq = req->qos;

    memset (out, 0, sizeof (*out));
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
            reasons_add (&rs, reason);
            free (reason);
            honored = false;
        }
    }
    if (resolve_submission (pbs ? &t->queue : &t->partition, req->nodes,
                            req->min_nodes_allowed, preq, wall, &pr, err) < 0)
        goto fail;
    if (!pbs && resolve_submission (&t->qos, pr.nodes, req->min_nodes_allowed,
                                    qreq, wall, &qr, err) < 0)
        goto fail;
    int nodes = pbs ? pr.nodes : qr.nodes;
    reasons_add (&rs, pr.reason);
    reasons_add (&rs, qr.reason);
    honored = honored && pr.honored && (pbs || qr.honored);
    const char *constraint = pick_constraint (t, req->constraint, &rs,
                                              &honored);
    const char *pmax = pr.target ? target_max_wallclock (pr.target, nodes)
                                 : NULL;
    const char *qmax = qr.target ? target_max_wallclock (qr.target, nodes)
                                 : NULL;
    const char *max = tighter (pmax, qmax);
    const char *capped = cap_wall_time (wall, max);

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
    out->gpus_per_node = dup_or_empty (t->gpus_per_node);
    out->max_wallclock = dup_or_empty (max);
    out->requested_nodes = req->nodes;
    out->effective_nodes = nodes;
    out->adjustment = adjustment_of (req->nodes, nodes);
    out->wall_time = dup_or_empty (capped);
    out->honored = honored;
    out->reason = rs.text;
    rs.text = NULL;
    axis_resolution_clear (&pr);
    axis_resolution_clear (&qr);
    free (st);
    free (wall);
    if (!out->scheduler || (pbs ? !out->queue || !out->filesystems
                                : !out->partition || !out->qos)
        || !out->constraint || !out->gpus_per_node || !out->max_wallclock
        || !out->wall_time || (!honored && !out->reason)) {
        resolution_clear (out);
        return errprintf (err, "out of memory resolving the request");
    }
    return 0;
fail:
    axis_resolution_clear (&pr);
    axis_resolution_clear (&qr);
    free (rs.text);
    free (st);
    free (wall);
    return -1;
}

json_t *resolution_to_json (const struct resolution *r)
{
    if (r->pbs)
        return json_pack ("{s:s s:s s:s s:s s:s s:s s:i s:i s:s s:s s:b s:s?}",
                          "scheduler", r->scheduler, "queue", r->queue,
                          "constraint", r->constraint,
                          "gpus_per_node", r->gpus_per_node,
                          "max_wallclock", r->max_wallclock,
                          "filesystems", r->filesystems,
                          "requested_nodes", r->requested_nodes,
                          "effective_nodes", r->effective_nodes,
                          "adjustment", adjustment_name (r->adjustment),
                          "wall_time", r->wall_time, "honored", r->honored,
                          "reason", r->reason);
    return json_pack ("{s:s s:s s:s s:s s:s s:s s:i s:i s:s s:s s:b s:s?}",
                      "scheduler", r->scheduler, "partition", r->partition,
                      "qos", r->qos, "constraint", r->constraint,
                      "gpus_per_node", r->gpus_per_node,
                      "max_wallclock", r->max_wallclock,
                      "requested_nodes", r->requested_nodes,
                      "effective_nodes", r->effective_nodes,
                      "adjustment", adjustment_name (r->adjustment),
                      "wall_time", r->wall_time, "honored", r->honored,
                      "reason", r->reason);
}

char *resolution_script (const struct resolution *r,
                         const struct machine_targets *t)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&s, &len);
    const char *time = *r->wall_time ? r->wall_time : r->max_wallclock;

    if (!f)
        return NULL;
    if (r->pbs) {
        /* PBS has no portable node-feature directive: the constraint is not
         * written. */
        if (t->account)
            fprintf (f, "#PBS -A %s\n", t->account);
        if (*r->queue)
            fprintf (f, "#PBS -q %s\n", r->queue);
        fprintf (f, "#PBS -l select=%d\n", r->effective_nodes);
        if (*time)
            fprintf (f, "#PBS -l walltime=%s\n", time);
        if (*r->filesystems)
            fprintf (f, "#PBS -l filesystems=%s\n", r->filesystems);
    } else {
        if (t->account)
            fprintf (f, "#SBATCH --account=%s\n", t->account);
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
