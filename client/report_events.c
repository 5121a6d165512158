/* SPDX-License-Identifier: MIT */
/* Reading an events log into steps, laying them out in lanes, and the
 * figures of a run. Grants are decoded with the protocol's own codec, so a
 * log the daemon wrote is read by the same rules its clients use. */
#include <fnmatch.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"
#include "idset.h"
#include "report_events.h"

/* A wait not yet granted or refused. */
struct pending {
    char *label;
    double time;
    bool used;
};

struct parse {
    struct report_run run;
    struct pending *waits;
    int nwaits, capwaits, capsteps, capnodes, caprefusals, capallocs;
    bool timed;                 /* t0, t1 set */
};

static bool same_label (const char *a, const char *b)
{
    return a == b || (a && b && !strcmp (a, b));
}

static int cmp_int (const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

static void free_node (struct report_node *n)
{
    free (n->name);
    free (n->cores);
}

void report_run_free (struct report_run *run)
{
    for (int i = 0; i < run->nsteps; i++) {
        struct report_step *s = &run->steps[i];
        for (int j = 0; j < s->nspans; j++)
            free (s->spans[j].cores);
        free (s->spans);
        free (s->lease);
        free (s->label);
    }
    free (run->steps);
    for (int i = 0; i < run->nnodes; i++)
        free_node (&run->nodes[i]);
    free (run->nodes);
    for (int i = 0; i < run->refused; i++)
        free (run->refusals[i].label);
    free (run->refusals);
    for (int i = 0; i < run->nallocs; i++)
        json_decref (run->allocs[i].nodes);
    free (run->allocs);
    memset (run, 0, sizeof (*run));
}

static int grow (void **v, int *cap, int n, size_t size)
{
    if (n < *cap)
        return 0;
    int c = *cap ? *cap * 2 : 16;
    void *p = realloc (*v, (size_t) c * size);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

static int node_index (struct parse *p, const char *name)
{
    struct report_run *r = &p->run;
    for (int i = 0; i < r->nnodes; i++)
        if (!strcmp (r->nodes[i].name, name))
            return i;
    if (grow ((void **) &r->nodes, &p->capnodes, r->nnodes, sizeof (*r->nodes)) < 0)
        return -1;
    struct report_node *n = &r->nodes[r->nnodes];
    memset (n, 0, sizeof (*n));
    if (!(n->name = strdup (name)))
        return -1;
    return r->nnodes++;
}

/* Adds ids to a node's sorted set of core ids. */
static int node_add_cores (struct report_node *n, const int *ids, int count)
{
    int *c = realloc (n->cores, (size_t) (n->ncores + count) * sizeof (int));
    if (!c && n->ncores + count > 0)
        return -1;
    n->cores = c;
    int k = n->ncores;
    for (int i = 0; i < count; i++) {
        if (!bsearch (&ids[i], n->cores, (size_t) n->ncores, sizeof (int), cmp_int)) {
            bool dup = false;
            for (int j = n->ncores; j < k && !dup; j++)
                dup = n->cores[j] == ids[i];
            if (!dup)
                n->cores[k++] = ids[i];
        }
    }
    n->ncores = k;
    qsort (n->cores, (size_t) n->ncores, sizeof (int), cmp_int);
    return 0;
}

static double take_wait (struct parse *p, const char *label, double granted)
{
    for (int i = 0; i < p->nwaits; i++) {
        struct pending *w = &p->waits[i];
        if (!w->used && same_label (w->label, label) && w->time <= granted) {
            w->used = true;
            return w->time;
        }
    }
    return granted;
}

static int add_grant (struct parse *p, const struct proto_event *ev)
{
    struct report_run *r = &p->run;
    const struct placement *pl = &ev->lease.placement;
    if (grow ((void **) &r->steps, &p->capsteps, r->nsteps, sizeof (*r->steps)) < 0)
        return -1;
    struct report_step *s = &r->steps[r->nsteps];
    memset (s, 0, sizeof (*s));
    s->start = ev->time;
    s->end = -1;
    s->asked = take_wait (p, ev->lease.label, ev->time);
    s->gpus = pl->gpus;
    s->lease = strdup (ev->lease.id ? ev->lease.id : "?");
    s->label = ev->lease.label ? strdup (ev->lease.label) : NULL;
    s->spans = calloc ((size_t) (pl->nnodes ? pl->nnodes : 1), sizeof (*s->spans));
    r->nsteps++;          /* from here report_run_free cleans it up */
    if (!s->lease || (ev->lease.label && !s->label) || !s->spans)
        return -1;
    for (int i = 0; i < pl->nnodes; i++) {
        struct report_span *sp = &s->spans[i];
        int k = node_index (p, pl->nodes[i].name);
        if (k < 0)
            return -1;
        sp->node = k;
        sp->ncores = pl->nodes[i].ncores;
        sp->cores = malloc ((size_t) (sp->ncores ? sp->ncores : 1) * sizeof (int));
        if (!sp->cores)
            return -1;
        s->nspans++;
        memcpy (sp->cores, pl->nodes[i].cores, (size_t) sp->ncores * sizeof (int));
        qsort (sp->cores, (size_t) sp->ncores, sizeof (int), cmp_int);
        if (node_add_cores (&r->nodes[k], sp->cores, sp->ncores) < 0)
            return -1;
    }
    return 0;
}

/* The latest open step of that lease id (ids restart when a log holds
 * several runs of berthd). */
static void add_release (struct parse *p, const char *lease, double time)
{
    for (int i = p->run.nsteps - 1; i >= 0; i--) {
        struct report_step *s = &p->run.steps[i];
        if (!s->released && lease && !strcmp (s->lease, lease)) {
            s->released = true;
            s->end = time;
            return;
        }
    }
}

static int add_wait (struct parse *p, const char *label, double time)
{
    if (grow ((void **) &p->waits, &p->capwaits, p->nwaits, sizeof (*p->waits)) < 0)
        return -1;
    struct pending *w = &p->waits[p->nwaits];
    w->time = time;
    w->used = false;
    w->label = label ? strdup (label) : NULL;
    if (label && !w->label)
        return -1;
    p->nwaits++;
    return 0;
}

static int parse_line (struct parse *p, const char *line, size_t len, int lineno,
                       berth_error_t *err)
{
    json_error_t je;
    json_t *o = json_loadb (line, len, 0, &je);
    if (!o)
        return errprintf (err, "line %d is not JSON (%s at column %d); an events "
                          "log holds one JSON event per line", lineno, je.text, je.column);
    const char *kind = json_string_value (json_object_get (o, "event"));
    if (!json_is_object (o) || !kind) {
        json_decref (o);
        return errprintf (err, "line %d is not an event (no \"event\" member); is this "
                          "berthd's events.jsonl?", lineno);
    }
    if (strcmp (kind, "granted") && strcmp (kind, "waited") && strcmp (kind, "released")
        && strcmp (kind, "refused") && strcmp (kind, "allocation")) {
        json_decref (o);
        return 0;                     /* a kind of a later berthd */
    }
    struct proto_event ev;
    berth_error_t e;
    int rc = proto_decode_event (o, &ev, &e);
    json_decref (o);
    if (rc < 0)
        return errprintf (err, "line %d: %s", lineno, e.text);
    struct report_run *r = &p->run;
    if (ev.kind != PROTO_EV_ALLOCATION) {
        /* berthd's start is not part of the work: the timeline starts
         * with the first request */
        if (!p->timed)
            r->t0 = r->t1 = ev.time;
        p->timed = true;
        if (ev.time < r->t0)
            r->t0 = ev.time;
        if (ev.time > r->t1)
            r->t1 = ev.time;
    }
    switch (ev.kind) {
    case PROTO_EV_GRANTED:
        rc = add_grant (p, &ev);
        break;
    case PROTO_EV_WAITED:
        rc = add_wait (p, ev.label, ev.time);
        break;
    case PROTO_EV_RELEASED:
        add_release (p, ev.lease.id, ev.time);
        break;
    case PROTO_EV_REFUSED:
        take_wait (p, ev.label, ev.time);
        rc = grow ((void **) &r->refusals, &p->caprefusals, r->refused, sizeof (*r->refusals));
        if (rc == 0) {
            r->refusals[r->refused] = (struct report_refusal) { ev.time, ev.label };
            ev.label = NULL;          /* the run has it now */
            r->refused++;
        }
        break;
    case PROTO_EV_ALLOCATION:
        rc = grow ((void **) &r->allocs, &p->capallocs, r->nallocs, sizeof (*r->allocs));
        if (rc == 0)
            r->allocs[r->nallocs++] = (struct report_allocation) { ev.time,
                                                                   json_incref (ev.nodes) };
        break;
    }
    proto_event_free (&ev);
    if (rc < 0)
        return errprintf (err, "out of memory reading line %d", lineno);
    return 0;
}

int report_parse (const char *text, struct report_run *run, berth_error_t *err)
{
    struct parse p;
    memset (&p, 0, sizeof (p));
    int lineno = 0, rc = 0;
    bool any = false;
    for (const char *line = text; line && *line && rc == 0;) {
        const char *nl = strchr (line, '\n');
        size_t len = nl ? (size_t) (nl - line) : strlen (line);
        lineno++;
        if (strspn (line, " \t\r") < len) {
            rc = parse_line (&p, line, len, lineno, err);
            any = true;
        }
        line = nl ? nl + 1 : NULL;
    }
    for (int i = 0; i < p.nwaits; i++)
        free (p.waits[i].label);
    free (p.waits);
    if (rc == 0 && !any)
        rc = errprintf (err, "the events log is empty: berthd writes one line per "
                        "grant, wait, release and refusal, so no step ran");
    else if (rc == 0 && !p.timed)
        rc = errprintf (err, "the events log holds no request: berthd started (its "
                        "allocation is logged) but no step asked for room");
    if (rc < 0) {
        report_run_free (&p.run);
        return -1;
    }
    for (int i = 0; i < p.run.nsteps; i++)   /* still held: up to the log's end */
        if (!p.run.steps[i].released)
            p.run.steps[i].end = p.run.t1;
    *run = p.run;
    return 0;
}

/* strict: a node of the log that the allocation lacks is an error (the
 * status of another run was given); else it is kept after the others. */
static int merge_allocation (struct report_run *run, const json_t *nodes, bool strict,
                             berth_error_t *err)
{
    size_t n = json_array_size (nodes);
    struct report_node *out = calloc (n + (size_t) run->nnodes, sizeof (*out));
    int *map = calloc ((size_t) run->nnodes + 1, sizeof (int));
    int nout = 0;
    if (!out || !map) {
        free (out);
        free (map);
        return errprintf (err, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *node = json_array_get (nodes, i);
        const char *name = json_string_value (json_object_get (node, "name"));
        const char *cores = json_string_value (json_object_get (node, "cores"));
        berth_error_t e;
        if (!name || !cores) {
            errprintf (err, "allocation node %zu lacks a \"name\" or a \"cores\" id set", i + 1);
            goto fail;
        }
        out[nout].name = strdup (name);
        nout++;
        if (!out[nout - 1].name) {
            errprintf (err, "out of memory");
            goto fail;
        }
        if (idset_parse (cores, &out[nout - 1].cores, &out[nout - 1].ncores, &e) < 0) {
            errprintf (err, "allocation node %s: cores: %s", name, e.text);
            goto fail;
        }
    }
    for (int i = 0; i < run->nnodes; i++) {
        int k = 0;
        while (k < nout && strcmp (out[k].name, run->nodes[i].name))
            k++;
        bool used = false;
        for (int j = 0; j < run->nsteps && !used; j++)
            for (int m = 0; m < run->steps[j].nspans; m++)
                used |= run->steps[j].spans[m].node == i;
        if (k == nout && !used) {
            map[i] = -1;       /* an empty node of an earlier allocation */
            continue;
        }
        if (k == nout && !strict) {
            out[nout].name = strdup (run->nodes[i].name);
            if (!out[nout++].name) {
                errprintf (err, "out of memory");
                goto fail;
            }
        }
        if (k == nout) {
            errprintf (err, "the events log has steps on node %s, which the allocation "
                       "does not hold; give the status of the same run", run->nodes[i].name);
            goto fail;
        }
        map[i] = k;
        if (node_add_cores (&out[k], run->nodes[i].cores, run->nodes[i].ncores) < 0) {
            errprintf (err, "out of memory");
            goto fail;
        }
    }
    for (int i = 0; i < run->nsteps; i++)
        for (int j = 0; j < run->steps[i].nspans; j++)
            run->steps[i].spans[j].node = map[run->steps[i].spans[j].node];
    for (int i = 0; i < run->nnodes; i++)
        free_node (&run->nodes[i]);
    free (run->nodes);
    free (map);
    run->nodes = out;
    run->nnodes = nout;
    return 0;
fail:
    for (int i = 0; i < nout; i++)
        free_node (&out[i]);
    free (out);
    free (map);
    return -1;
}

int report_set_allocation (struct report_run *run, const json_t *status,
                           berth_error_t *err)
{
    const json_t *alloc = json_object_get (status, "allocation");
    const json_t *nodes = json_object_get (alloc ? alloc : status, "nodes");
    if (!json_is_array (nodes) || json_array_size (nodes) == 0)
        return errprintf (err, "the allocation has no \"nodes\" array; give what "
                          "`berth status --json` printed during the run");
    return merge_allocation (run, nodes, true, err);
}

int report_add_allocation (struct report_run *run, const json_t *nodes,
                           berth_error_t *err)
{
    if (!json_is_array (nodes) || json_array_size (nodes) == 0)
        return errprintf (err, "the log's allocation event has no nodes");
    return merge_allocation (run, nodes, false, err);
}

const json_t *report_log_allocation (const struct report_run *run)
{
    const json_t *best = NULL;
    for (int i = 0; i < run->nallocs; i++)
        if (!best || run->allocs[i].time <= run->t0)
            best = run->allocs[i].nodes;
    return best;
}

static int by_asked (const void *a, const void *b, void *arg)
{
    const struct report_step *s = arg;
    const struct report_step *x = &s[*(const int *) a], *y = &s[*(const int *) b];
    if (x->asked != y->asked)
        return x->asked < y->asked ? -1 : 1;
    return cmp_int (a, b);
}

void report_layout (struct report_run *run)
{
    int *order = malloc ((size_t) (run->nsteps ? run->nsteps : 1) * sizeof (int));
    double *lane_end = malloc ((size_t) (run->nsteps ? run->nsteps : 1) * sizeof (double));
    if (!order || !lane_end) {        /* everything in lane 0: still drawn */
        for (int i = 0; i < run->nnodes; i++)
            run->nodes[i].nlanes = 1;
        free (order);
        free (lane_end);
        return;
    }
    for (int i = 0; i < run->nsteps; i++)
        order[i] = i;
    qsort_r (order, (size_t) run->nsteps, sizeof (int), by_asked, run->steps);
    for (int n = 0; n < run->nnodes; n++) {
        int nlanes = 0;
        for (int k = 0; k < run->nsteps; k++) {
            struct report_step *s = &run->steps[order[k]];
            for (int j = 0; j < s->nspans; j++) {
                if (s->spans[j].node != n)
                    continue;
                int lane = 0;
                while (lane < nlanes && lane_end[lane] > s->asked)
                    lane++;
                if (lane == nlanes)
                    nlanes++;
                lane_end[lane] = s->end;
                s->spans[j].lane = lane;
            }
        }
        run->nodes[n].nlanes = nlanes ? nlanes : 1;
    }
    free (order);
    free (lane_end);
}

int report_change_cmp (const void *a, const void *b)
{
    const struct report_change *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->delta - y->delta;       /* releases first at the same instant */
}

void report_summarise (const struct report_run *run, struct report_summary *s)
{
    memset (s, 0, sizeof (*s));
    s->makespan = run->t1 - run->t0;
    for (int i = 0; i < run->nnodes; i++)
        s->cores += run->nodes[i].ncores;
    double held = 0;
    struct report_change *ch = malloc ((size_t) (2 * run->nsteps + 1) * sizeof (*ch));
    int nch = 0;
    for (int i = 0; i < run->nsteps; i++) {
        const struct report_step *st = &run->steps[i];
        int cores = 0;
        for (int j = 0; j < st->nspans; j++)
            cores += st->spans[j].ncores;
        held += cores * (st->end - st->start);
        double wait = st->start - st->asked;
        if (wait > 0) {
            s->waited++;
            if (wait > s->longest_wait) {
                s->longest_wait = wait;
                s->longest_wait_label = st->label;
            }
        }
        if (ch) {
            ch[nch++] = (struct report_change) { st->start, cores };
            ch[nch++] = (struct report_change) { st->end, -cores };
        }
    }
    if (s->cores > 0 && s->makespan > 0)
        s->utilisation = held / ((double) s->cores * s->makespan);
    if (ch) {
        qsort (ch, (size_t) nch, sizeof (*ch), report_change_cmp);
        int now = 0;
        for (int i = 0; i < nch; i++) {
            now += ch[i].delta;
            if (now > s->peak_cores)
                s->peak_cores = now;
        }
        free (ch);
    }
}

/* ---- batches, windows and labels --------------------------------------- */

static int by_start (const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

int report_batches (const struct report_run *run, double **spans, int *count)
{
    int n = run->nsteps + run->refused;
    double *v = malloc ((size_t) (n ? n : 1) * 2 * sizeof (double));
    *spans = NULL;
    *count = 0;
    if (!v)
        return -1;
    for (int i = 0; i < run->nsteps; i++) {
        v[2 * i] = run->steps[i].asked;
        v[2 * i + 1] = run->steps[i].end;
    }
    for (int i = 0; i < run->refused; i++)
        v[2 * (run->nsteps + i)] = v[2 * (run->nsteps + i) + 1] = run->refusals[i].time;
    qsort (v, (size_t) n, 2 * sizeof (double), by_start);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (k > 0 && v[2 * i] - v[2 * k - 1] < REPORT_RUN_GAP) {
            if (v[2 * i + 1] > v[2 * k - 1])
                v[2 * k - 1] = v[2 * i + 1];
        } else {
            v[2 * k] = v[2 * i];
            v[2 * k + 1] = v[2 * i + 1];
            k++;
        }
    }
    *spans = v;
    *count = k;
    return 0;
}

static bool label_kept (const struct report_filter *f, const char *label)
{
    if (f->nlabels == 0)
        return true;
    for (int i = 0; label && i < f->nlabels; i++)
        if (fnmatch (f->labels[i], label, 0) == 0)
            return true;
    return false;
}

/* (the CLI links no libm) */
static double lesser (double a, double b)
{
    return a < b ? a : b;
}

static double greater (double a, double b)
{
    return a > b ? a : b;
}

static double clamp (double t, double lo, double hi)
{
    return t < lo ? lo : t > hi ? hi : t;
}

int report_select (struct report_run *run, const struct report_filter *f,
                   berth_error_t *err)
{
    double lo = isnan (f->since) ? -INFINITY : f->since;
    double hi = isnan (f->until) ? INFINITY : f->until;
    bool window = !isnan (f->since) || !isnan (f->until) || f->run != 0;
    if (f->run != 0) {
        double *b;
        int nb;
        if (report_batches (run, &b, &nb) < 0)
            return errprintf (err, "out of memory");
        int k = f->run > 0 ? f->run - 1 : nb + f->run;
        if (k < 0 || k >= nb) {
            free (b);
            return errprintf (err, "--run %d: the log holds %d batch%s of steps (a batch "
                              "ends where nothing is held or waiting for %.0f s)",
                              f->run, nb, nb == 1 ? "" : "es", REPORT_RUN_GAP);
        }
        lo = lo > b[2 * k] ? lo : b[2 * k];
        hi = hi < b[2 * k + 1] ? hi : b[2 * k + 1];
        free (b);
    }
    if (!(lo <= hi))
        return errprintf (err, "the window ends before it starts (--since after --until)");
    int *keep = malloc ((size_t) (run->nsteps ? run->nsteps : 1) * sizeof (int));
    int *map = malloc ((size_t) (run->nnodes ? run->nnodes : 1) * sizeof (int));
    if (!keep || !map) {
        free (keep);
        free (map);
        return errprintf (err, "out of memory");
    }
    int nkeep = 0;
    double t0 = INFINITY, t1 = -INFINITY;
    for (int i = 0; i < run->nsteps; i++) {
        const struct report_step *s = &run->steps[i];
        bool inside = s->end >= lo && s->asked <= hi && (s->end > lo || s->asked == s->end);
        if (inside && label_kept (f, s->label)) {
            keep[nkeep++] = i;
            t0 = lesser (t0, greater (s->asked, lo));
            t1 = greater (t1, lesser (s->end, hi));
        }
    }
    if (nkeep == 0) {
        errprintf (err, "no step in the selection (%s%s%s); the log's %d steps run from "
                   "its start to %.0f s later", window ? "that window" : "",
                   window && f->nlabels ? ", " : "", f->nlabels ? "those labels" : "",
                   run->nsteps, run->t1 - run->t0);
        free (keep);
        free (map);
        return -1;
    }
    if (window) {                      /* the window's own ends, within the log */
        t0 = greater (lo, run->t0);
        t1 = lesser (hi, run->t1);
    }
    /* the steps kept, cut to the window, and the nodes they used */
    for (int i = 0; i < run->nnodes; i++)
        map[i] = -1;
    int nnodes = 0;
    for (int k = 0; k < nkeep; k++) {
        struct report_step *s = &run->steps[keep[k]];
        for (int j = 0; j < s->nspans; j++)
            if (map[s->spans[j].node] < 0)
                map[s->spans[j].node] = nnodes++;
    }
    for (int i = 0, k = 0; i < run->nsteps; i++) {
        struct report_step *s = &run->steps[i];
        if (k < nkeep && keep[k] == i) {
            s->asked = clamp (s->asked, t0, t1);
            s->start = clamp (s->start, t0, t1);
            s->end = clamp (s->end, t0, t1);
            for (int j = 0; j < s->nspans; j++)
                s->spans[j].node = map[s->spans[j].node];
            run->steps[k++] = *s;
            continue;
        }
        for (int j = 0; j < s->nspans; j++)
            free (s->spans[j].cores);
        free (s->spans);
        free (s->lease);
        free (s->label);
    }
    run->nsteps = nkeep;
    for (int i = 0; i < run->nnodes; i++) {
        if (map[i] < 0) {
            free (run->nodes[i].name);
            free (run->nodes[i].cores);
        }
    }
    struct report_node *nodes = run->nodes;
    struct report_node *kept = malloc ((size_t) (nnodes ? nnodes : 1) * sizeof (*kept));
    if (kept) {
        for (int i = 0; i < run->nnodes; i++)
            if (map[i] >= 0)
                kept[map[i]] = nodes[i];
        free (nodes);
        run->nodes = kept;
    } else {                           /* in place: the kept ones, in order */
        for (int i = 0; i < run->nnodes; i++)
            if (map[i] >= 0)
                nodes[map[i]] = nodes[i];
    }
    run->nnodes = nnodes;
    int nref = 0;
    for (int i = 0; i < run->refused; i++) {
        struct report_refusal *r = &run->refusals[i];
        if (r->time >= t0 && r->time <= t1 && label_kept (f, r->label))
            run->refusals[nref++] = *r;
        else
            free (r->label);
    }
    run->refused = nref;
    run->t0 = t0;
    run->t1 = t1;
    free (keep);
    free (map);
    return 0;
}

/* "90", "5m", "1h30m", "2m10.5s": seconds; -1 when it is none of these. */
static double duration (const char *s)
{
    double total = 0;
    bool any = false;
    while (*s) {
        char *end;
        double v = strtod (s, &end);
        if (end == s || v < 0)
            return -1;
        double unit = 1;
        if (*end == 'h')
            unit = 3600;
        else if (*end == 'm')
            unit = 60;
        else if (*end == 's' || *end == '\0')
            unit = 1;
        else
            return -1;
        total += v * unit;
        any = true;
        s = *end ? end + 1 : end;
    }
    return any ? total : -1;
}

int report_parse_when (const char *text, double t0, double t1, double *out,
                       berth_error_t *err)
{
    if (text[0] == '+' || text[0] == '-') {
        double d = duration (text + 1);
        if (d >= 0) {
            *out = text[0] == '+' ? t0 + d : t1 - d;
            return 0;
        }
    } else {
        char *end;
        double v = strtod (text, &end);
        if (end != text && *end == '\0' && v >= 0) {
            *out = v;
            return 0;
        }
        static const char *const forms[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S",
                                             "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M" };
        for (size_t i = 0; i < sizeof (forms) / sizeof (forms[0]); i++) {
            struct tm tm;
            memset (&tm, 0, sizeof (tm));
            const char *rest = strptime (text, forms[i], &tm);
            if (rest && *rest == '\0') {
                tm.tm_isdst = -1;
                time_t t = mktime (&tm);
                if (t != (time_t) -1) {
                    *out = (double) t;
                    return 0;
                }
            }
        }
    }
    return errprintf (err, "'%s' is not a time: give Unix seconds (1754300000), an offset "
                      "from the log's start or end (+90, +5m, -1h30m) or a local date and "
                      "time (2026-12-01 21:05[:30])", text);
}

size_t report_family_len (const char *label)
{
    size_t n = strlen (label);
    while (n > 1 && label[n - 1] >= '0' && label[n - 1] <= '9')
        n--;
    while (n > 1 && strchr ("_-.", label[n - 1]))
        n--;
    return n;
}

/* ---- the figures as JSON ------------------------------------------------ */

struct family {
    char *name;
    int steps, waited;
    double core_s, wait_total, wait_max;
};

json_t *report_json (const struct report_run *run, const struct report_summary *s)
{
    json_t *steps = json_array (), *labels = json_array ();
    struct family *fam = calloc ((size_t) (run->nsteps ? run->nsteps : 1), sizeof (*fam));
    int nfam = 0;
    bool oom = !steps || !labels || !fam;
    for (int i = 0; !oom && i < run->nsteps; i++) {
        const struct report_step *st = &run->steps[i];
        int cores = 0;
        json_t *nodes = json_array ();
        for (int j = 0; j < st->nspans; j++) {
            cores += st->spans[j].ncores;
            json_array_append_new (nodes, json_string (run->nodes[st->spans[j].node].name));
        }
        double wait = st->start - st->asked;
        oom |= json_array_append_new (steps, json_pack (
            "{s:s s:s? s:f s:f s:f s:f s:f s:i s:i s:o s:b}", "lease", st->lease,
            "label", st->label, "asked_s", st->asked - run->t0, "start_s",
            st->start - run->t0, "end_s", st->end - run->t0, "wait_s", wait,
            "run_s", st->end - st->start, "cores", cores, "gpus", st->gpus,
            "nodes", nodes, "released", st->released)) < 0;
        const char *label = st->label ? st->label : "(no label)";
        size_t len = st->label ? report_family_len (label) : strlen (label);
        int k = 0;
        while (k < nfam && (strlen (fam[k].name) != len || strncmp (fam[k].name, label, len)))
            k++;
        if (k == nfam && !(fam[nfam++].name = strndup (label, len))) {
            oom = true;
            break;
        }
        fam[k].steps++;
        fam[k].core_s += cores * (st->end - st->start);
        fam[k].wait_total += wait;
        fam[k].waited += wait > 0;
        if (wait > fam[k].wait_max)
            fam[k].wait_max = wait;
    }
    for (int k = 0; !oom && k < nfam; k++)
        oom |= json_array_append_new (labels, json_pack (
            "{s:s s:i s:f s:i s:f s:f s:f}", "family", fam[k].name, "steps",
            fam[k].steps, "core_seconds", fam[k].core_s, "waited", fam[k].waited,
            "wait_total_s", fam[k].wait_total, "wait_max_s", fam[k].wait_max,
            "wait_mean_s", fam[k].wait_total / fam[k].steps)) < 0;
    for (int k = 0; fam && k < nfam; k++)
        free (fam[k].name);
    free (fam);
    json_t *o = oom ? NULL : json_pack (
        "{s:f s:f s:i s:i s:I s:f s:f s:i s:i s:f s:s? s:i s:o s:o}",
        "start", run->t0, "end", run->t1, "steps_count", run->nsteps, "nodes", run->nnodes,
        "cores", (json_int_t) s->cores, "makespan_s", s->makespan, "utilisation",
        s->utilisation, "peak_cores", s->peak_cores, "waited", s->waited,
        "longest_wait_s", s->longest_wait, "longest_wait_label", s->longest_wait_label,
        "refused", run->refused, "labels", labels, "steps", steps);
    if (!o) {
        json_decref (steps);
        json_decref (labels);
    }
    return o;
}
