/* Reading an events log into steps, laying them out in lanes, and the
 * figures of a run. Grants are decoded with the protocol's own codec, so a
 * log the daemon wrote is read by the same rules its clients use. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

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
    int nwaits, capwaits, capsteps, capnodes;
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
        && strcmp (kind, "refused")) {
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
    if (r->nsteps == 0 && p->nwaits == 0 && r->refused == 0)
        r->t0 = r->t1 = ev.time;
    if (ev.time < r->t0)
        r->t0 = ev.time;
    if (ev.time > r->t1)
        r->t1 = ev.time;
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
        r->refused++;
        take_wait (p, ev.label, ev.time);
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

int report_set_allocation (struct report_run *run, const json_t *status,
                           berth_error_t *err)
{
    const json_t *alloc = json_object_get (status, "allocation");
    const json_t *nodes = json_object_get (alloc ? alloc : status, "nodes");
    if (!json_is_array (nodes) || json_array_size (nodes) == 0)
        return errprintf (err, "the allocation has no \"nodes\" array; give what "
                          "`berth status --json` printed during the run");
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

struct change {
    double time;
    int delta;
};

static int by_time (const void *a, const void *b)
{
    const struct change *x = a, *y = b;
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
    struct change *ch = malloc ((size_t) (2 * run->nsteps + 1) * sizeof (*ch));
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
            ch[nch++] = (struct change) { st->start, cores };
            ch[nch++] = (struct change) { st->end, -cores };
        }
    }
    if (s->cores > 0 && s->makespan > 0)
        s->utilisation = held / ((double) s->cores * s->makespan);
    if (ch) {
        qsort (ch, (size_t) nch, sizeof (*ch), by_time);
        int now = 0;
        for (int i = 0; i < nch; i++) {
            now += ch[i].delta;
            if (now > s->peak_cores)
                s->peak_cores = now;
        }
        free (ch);
    }
}
