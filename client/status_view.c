/* SPDX-License-Identifier: MIT */
/* The human view of berthd's status. Figures come from the status reply;
 * where a node does not state what is held on it, the leases say. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status_view.h"
#include "text.h"
#include "wallclock.h"

/* The first of the keys that o holds as a number; -1 when none. */
static long long num (const json_t *o, const char *k1, const char *k2)
{
    json_t *v = json_object_get (o, k1);
    if (!json_is_number (v) && k2)
        v = json_object_get (o, k2);
    return json_is_number (v) ? (long long) json_number_value (v) : -1;
}

static double real (const json_t *o, const char *k1, const char *k2)
{
    json_t *v = json_object_get (o, k1);
    if (!json_is_number (v) && k2)
        v = json_object_get (o, k2);
    return json_is_number (v) ? json_number_value (v) : -1;
}

static const char *str (const json_t *o, const char *k1, const char *k2)
{
    json_t *v = json_object_get (o, k1);
    if (!json_is_string (v) && k2)
        v = json_object_get (o, k2);
    return json_string_value (v);
}

static void bar (FILE *f, long long used, long long total, bool unicode)
{
    const int width = 8;
    int full = total > 0 ? (int) ((used * width + total / 2) / total) : 0;
    if (used > 0 && full == 0)
        full = 1;        /* anything held shows */
    for (int i = 0; i < width; i++)
        fputs (i < full ? (unicode ? "\u2588" : "#") : (unicode ? "\u2591" : "."), f);
}

/* Per node of the allocation: what the leases hold there. */
struct held {
    long long cores, gpus;
    long long found;        /* leases of the list on it */
    char leases[256];
};

static int by_name (const void *a, const void *b, void *arg)
{
    const json_t *nodes = arg;
    const char *x = str (json_array_get (nodes, (size_t) *(const int *) a), "name", "node");
    const char *y = str (json_array_get (nodes, (size_t) *(const int *) b), "name", "node");
    return strcmp (x ? x : "", y ? y : "");
}

struct name_key {
    const json_t *nodes;
    const char *name;
};

static int find_name (const void *key, const void *elem)
{
    const struct name_key *k = key;
    const char *nm = str (json_array_get (k->nodes, (size_t) *(const int *) elem), "name", "node");
    return strcmp (k->name, nm ? nm : "");
}

static void add_lease_name (struct held *h, const char *name, long long cores)
{
    size_t len = strlen (h->leases);
    if (len + 4 >= sizeof (h->leases))
        return;
    int n = snprintf (h->leases + len, sizeof (h->leases) - len, "%s%s (%lld)",
                      len ? ", " : "", name, cores);
    if (n < 0 || (size_t) n >= sizeof (h->leases) - len)
        snprintf (h->leases + sizeof (h->leases) - 4, 4, "...");
}

/* Nodes are found by name through a sorted index: 5,000 leases on 10,000
 * nodes must not cost a scan of the nodes per lease. */
static struct held *tally (const json_t *nodes, const json_t *leases)
{
    size_t nn = json_array_size (nodes), i;
    struct held *h = calloc (nn ? nn : 1, sizeof (*h));
    int *order = malloc ((nn ? nn : 1) * sizeof (int));
    json_t *l;
    if (!h || !order) {
        free (h);
        free (order);
        return NULL;
    }
    for (i = 0; i < nn; i++)
        order[i] = (int) i;
    qsort_r (order, nn, sizeof (int), by_name, (void *) nodes);
    json_array_foreach (leases, i, l) {
        json_t *p = json_object_get (l, "placement");
        json_t *names = json_object_get (p, "nodes"), *cores = json_object_get (p, "cores");
        const char *label = str (l, "label", "lease");
        size_t k;
        json_t *name;
        long long gpus = num (p, "gpus", NULL);
        size_t nnodes = json_array_size (names);
        json_array_foreach (names, k, name) {
            struct name_key key = { nodes, json_string_value (name) };
            const int *at = key.name ? bsearch (&key, order, nn, sizeof (int), find_name) : NULL;
            if (!at)
                continue;
            long long c = (long long) json_array_size (json_array_get (cores, k));
            h[*at].cores += c;
            if (gpus > 0 && nnodes)
                h[*at].gpus += gpus / (long long) nnodes + ((long long) k < gpus % (long long) nnodes);
            add_lease_name (&h[*at], label ? label : "?", c);
            h[*at].found++;
        }
    }
    free (order);
    return h;
}

static void print_header (FILE *f, const json_t *st, const json_t *alloc, double now)
{
    const json_t *daemon = json_object_get (st, "daemon");
    const char *server = str (st, "server", NULL);
    const char *job = str (alloc, "job_id", NULL);
    const char *machine = str (alloc, "machine", NULL);
    const char *system = str (alloc, "system", NULL);
    const char *layout = str (alloc, "layout", NULL);
    char up[32] = "";
    double uptime = real (daemon, "uptime_s", NULL), started = real (daemon, "started", NULL);
    if (uptime >= 0)
        wallclock_format_brief (uptime, up, sizeof (up));
    else if (started > 0)
        wallclock_format_brief (now - started, up, sizeof (up));
    fprintf (f, "%s", server ? server : "berthd");
    if (job)
        fprintf (f, " \u00b7 job %s", job);
    if (machine)
        fprintf (f, " on %s", machine);
    /* What the launcher can place decides; the ledger's layout is also
     * cpu_binding where nothing is launched (a login node) */
    const char *support = str (alloc, "placement_support", NULL);
    if (system && support && !strcmp (support, "NONE"))
        fprintf (f, " (%s, no launcher placement: local steps only, bound by CPU "
                 "affinity)", system);
    else if (system && layout)
        fprintf (f, " (%s, placement by %s)", system,
                 !strcmp (layout, "scheduler") ? "scheduler" : "launcher binding");
    else if (system)
        fprintf (f, " (%s)", system);
    if (up[0])
        fprintf (f, " \u00b7 up %s", up);
    double left = real (alloc, "time_left_s", NULL);
    if (left >= 0) {
        char lbuf[32];
        wallclock_format_brief (left, lbuf, sizeof (lbuf));
        fprintf (f, " \u00b7 time left %s", lbuf);
    }
    if (json_is_true (json_object_get (daemon, "draining")))
        fprintf (f, " \u00b7 draining: no new leases");
    fputc ('\n', f);
    /* the one thing that stops every grant: said on a line of its own */
    const json_t *held = json_object_get (daemon, "grants_held");
    const char *why = str (held, "why", NULL);
    if (why) {
        char for_[32] = "";
        double since = real (held, "since", NULL);
        if (since > 0)
            wallclock_format_brief (now - since, for_, sizeof (for_));
        fprintf (f, "%s%s%s%s\n", why, for_[0] ? " (for " : "", for_,
                 for_[0] ? ")" : "");
    }
}

/* A column: s cut to w characters (the last one an ellipsis when cut),
 * padded to w, so that the next column starts where it should. */
static void cell (FILE *f, const char *s, int w)
{
    if (!s || !*s)
        s = "-";
    size_t n = text_utf8_chars (s);
    if (n > (size_t) w) {
        fwrite (s, 1, text_utf8_prefix (s, (size_t) w - 1), f);
        fputs ("\u2026", f);
        n = (size_t) w;
    } else
        fputs (s, f);
    for (; n < (size_t) w; n++)
        fputc (' ', f);
}

/* "... 12 more leases" (one line of a cut section). */
static void more (FILE *f, long long n, const char *what, const char *hint)
{
    if (n > 0)
        fprintf (f, "... %lld more %s%s\n", n, what, hint ? hint : "");
}

/* What one section would show and what the window lets it. */
struct section {
    long long total;    /* rows it has */
    int want;           /* lines it would show without a window, a "more" line included */
    int got;            /* lines the window gives it */
};

static int want_of (long long total, int cap)
{
    return total <= cap ? (int) total : cap + 1;
}

/* Shares the lines left among the sections, fairly: one that wants less
 * than an even share keeps what it wants and leaves the rest to others. */
static void share_lines (struct section *s, int n, int avail)
{
    int left = avail < 0 ? 0 : avail, active = 0;
    bool *done = calloc ((size_t) n, sizeof (bool));
    for (int i = 0; i < n; i++) {
        s[i].got = 0;
        if (done)
            done[i] = s[i].want <= 0;
        active += s[i].want > 0;
    }
    while (done && active > 0 && left > 0) {
        int share = left / active;
        bool settled = false;
        for (int i = 0; i < n && share > 0; i++)
            if (!done[i] && s[i].want <= share) {
                s[i].got = s[i].want;
                left -= s[i].want;
                done[i] = true;
                active--;
                settled = true;
            }
        if (settled)
            continue;
        /* every one wants more than its share: the share each, the odd
         * lines to the first (nodes before leases before the queue) */
        int odd = left - share * active;
        for (int i = 0; i < n; i++)
            if (!done[i]) {
                s[i].got = share + (odd-- > 0);
                done[i] = true;
            }
        break;
    }
    free (done);
}

/* Rows a section shows for the lines it got: all of them, or one line
 * fewer than it got, the last being "... N more". */
static long long rows_shown (const struct section *s)
{
    if (s->got >= s->total)
        return s->total;
    return s->got > 0 ? s->got - 1 : 0;
}

struct node_row {
    const char *name;
    long long cores, used, gpus, gused, mem, unb;
    long long said;         /* leases the node says it holds; -1: not said */
    long long found;        /* of them, in the leases list */
    const char *leases;
};

/* The whole job's figures. A brief reply lists some nodes, leases and
 * waiting requests only, so what it states (allocation.totals, the daemon's
 * counts) wins over counting the lists; a reply that states nothing (an
 * older berthd's) is counted. */
struct counts {
    long long nodes, cores, cores_used, cores_free, gpus, gpus_used, gpus_free;
    long long full, partly, idle;
    bool memory_known;
    long long memory, budgeted;
    long long leases, waiting;
    bool leases_cut;        /* the leases list holds fewer than there are */
};

/* *v = o's member k when it is a number. */
static bool stated (const json_t *o, const char *k, long long *v)
{
    json_t *x = json_object_get (o, k);
    if (!json_is_number (x))
        return false;
    *v = (long long) json_number_value (x);
    return true;
}

/* A count stated, but never fewer than the list at hand holds. */
static long long at_least (long long stated_n, size_t listed)
{
    return stated_n > (long long) listed ? stated_n : (long long) listed;
}

static void counts_of (const json_t *st, const struct node_row *r, size_t nn,
                       struct counts *c)
{
    const json_t *alloc = json_object_get (st, "allocation");
    const json_t *t = json_object_get (alloc, "totals");
    const json_t *daemon = json_object_get (st, "daemon");
    memset (c, 0, sizeof (*c));
    c->memory_known = nn > 0;
    for (size_t i = 0; i < nn; i++) {
        c->cores += r[i].cores > 0 ? r[i].cores : 0;
        c->cores_used += r[i].used;
        c->gpus += r[i].gpus > 0 ? r[i].gpus : 0;
        c->gpus_used += r[i].gused;
        c->full += r[i].cores > 0 && r[i].used >= r[i].cores;
        c->idle += r[i].used <= 0 && r[i].gused <= 0;
        if (r[i].mem < 0 || r[i].unb < 0)
            c->memory_known = false;
        else {
            c->memory += r[i].mem;
            c->budgeted += r[i].mem - r[i].unb;
        }
    }
    c->nodes = (long long) nn;
    long long v;
    if (stated (t, "nodes", &v))
        c->nodes = at_least (v, nn);
    stated (t, "cores", &c->cores);
    stated (t, "cores_used", &c->cores_used);
    if (!stated (t, "cores_free", &c->cores_free))
        c->cores_free = c->cores - c->cores_used;
    stated (t, "gpus", &c->gpus);
    stated (t, "gpus_used", &c->gpus_used);
    if (!stated (t, "gpus_free", &c->gpus_free))
        c->gpus_free = c->gpus - c->gpus_used;
    stated (t, "nodes_full", &c->full);
    stated (t, "nodes_idle", &c->idle);
    if (!stated (t, "nodes_partly", &c->partly))
        c->partly = c->nodes - c->full - c->idle;
    /* null: some node's memory is not known, so neither is the sum */
    if (json_object_get (t, "memory_mb"))
        c->memory_known = c->nodes > 0 && stated (t, "memory_mb", &c->memory)
                          && stated (t, "memory_budgeted_mb", &c->budgeted);
    size_t nl = json_array_size (json_object_get (st, "leases"));
    size_t nq = json_array_size (json_object_get (st, "queue"));
    c->leases = stated (daemon, "leases", &v) ? at_least (v, nl) : (long long) nl;
    c->waiting = stated (daemon, "waiting", &v) ? at_least (v, nq) : (long long) nq;
    c->leases_cut = c->leases > (long long) nl;
}

static void node_figures (const json_t *n, const struct held *h, struct node_row *r)
{
    long long cores = num (n, "ncores", "cores"), free_cores = num (n, "cores_free", NULL);
    long long gpus = num (n, "gpus", NULL), free_gpus = num (n, "gpus_free", NULL);
    r->name = str (n, "name", "node");
    r->cores = cores;
    r->gpus = gpus;
    r->used = free_cores >= 0 && cores >= 0 ? cores - free_cores : h->cores;
    r->gused = free_gpus >= 0 && gpus >= 0 ? gpus - free_gpus : h->gpus;
    r->mem = num (n, "memory_mb", NULL);
    r->unb = num (n, "memory_unbudgeted_mb", NULL);
    r->said = num (n, "leases", NULL);
    r->found = h->found;
    r->leases = h->leases;
}

/* leases_cut: the leases list lacks some, so a node may hold more than the
 * list names; it says how many more. */
static void node_line (FILE *f, const struct node_row *r, bool unicode, bool leases_cut)
{
    char cbuf[48], gbuf[48], mbuf[48];
    snprintf (cbuf, sizeof (cbuf), "%lld/%lld", r->used, r->cores > 0 ? r->cores : 0);
    snprintf (gbuf, sizeof (gbuf), "%lld/%lld", r->gused, r->gpus > 0 ? r->gpus : 0);
    if (r->mem >= 0 && r->unb >= 0)
        snprintf (mbuf, sizeof (mbuf), "%lld/%lld", r->mem - r->unb, r->mem);
    else
        snprintf (mbuf, sizeof (mbuf), "-");
    cell (f, r->name ? r->name : "?", 14);
    fputc (' ', f);
    cell (f, cbuf, 9);
    fputc (' ', f);
    bar (f, r->used, r->cores, unicode);
    fputc (' ', f);
    cell (f, gbuf, 9);
    fputc (' ', f);
    cell (f, mbuf, 19);
    long long unlisted = leases_cut && r->said > r->found ? r->said - r->found : 0;
    const char *leases_word = unlisted == 1 ? "lease" : "leases";
    if (unlisted && r->leases[0])
        fprintf (f, " %s, +%lld %s\n", r->leases, unlisted, leases_word);
    else if (unlisted)
        fprintf (f, " %lld %s\n", unlisted, leases_word);
    else
        fprintf (f, " %s\n", r->leases[0] ? r->leases : "-");
}

static int by_busy (const void *a, const void *b, void *arg)
{
    const struct node_row *r = arg;
    const struct node_row *x = &r[*(const int *) a], *y = &r[*(const int *) b];
    if (x->used != y->used)
        return x->used > y->used ? -1 : 1;
    if (x->gused != y->gused)
        return x->gused > y->gused ? -1 : 1;
    return (*(const int *) a > *(const int *) b) - (*(const int *) a < *(const int *) b);
}

/* Many nodes: a node is full (no core free), partly held or idle. The
 * job's count decides, not the list's (a brief one lists the busiest). */
static bool summarised (const struct counts *c, const struct status_view_opts *o)
{
    return !o->all_nodes && c->nodes > STATUS_VIEW_NODE_TABLE;
}

/* The rows of the nodes the reply lists, with what its leases hold there. */
struct table {
    size_t n;
    struct held *h;
    struct node_row *r;
};

/* t->r NULL when memory runs short. */
static void table_build (struct table *t, const json_t *nodes, const json_t *leases)
{
    size_t i;
    json_t *n;
    t->n = json_array_size (nodes);
    t->h = tally (nodes, leases);
    t->r = calloc (t->n ? t->n : 1, sizeof (*t->r));
    if (!t->h || !t->r) {
        free (t->h);
        free (t->r);
        t->h = NULL;
        t->r = NULL;
        return;
    }
    json_array_foreach (nodes, i, n)
        node_figures (n, &t->h[i], &t->r[i]);
}

static void table_free (struct table *t)
{
    free (t->h);
    free (t->r);
}

/* t->r NULL: the rows could not be drawn (memory), the figures stand. */
static void print_nodes (FILE *f, const struct table *t, const struct counts *c,
                         const struct section *sec, const struct status_view_opts *o)
{
    size_t nn = t->r ? t->n : 0;
    int *order = malloc ((nn ? nn : 1) * sizeof (int));
    fprintf (f, "nodes %lld \u00b7 cores %lld (%lld held, %lld free) \u00b7 gpus %lld",
             c->nodes, c->cores, c->cores_used, c->cores_free, c->gpus);
    if (c->gpus > 0)
        fprintf (f, " (%lld held, %lld free)", c->gpus_used, c->gpus_free);
    if (c->memory_known)
        fprintf (f, " \u00b7 memory %lld MB (%lld budgeted)", c->memory, c->budgeted);
    fputc ('\n', f);
    if (!t->r || !order) {
        fprintf (f, "(out of memory drawing the nodes)\n");
        free (order);
        return;
    }
    for (size_t i = 0; i < nn; i++)
        order[i] = (int) i;
    bool summary = summarised (c, o);
    if (summary) {
        fprintf (f, "by state: %lld full \u00b7 %lld partly held \u00b7 %lld idle"
                 " (--nodes all: a row each)\n",
                 c->full, c->partly, c->idle);
        qsort_r (order, nn, sizeof (int), by_busy, t->r);
    }
    long long shown = rows_shown (sec);
    if (summary && shown > c->nodes - c->idle)
        shown = c->nodes - c->idle;         /* the busiest: none of the idle */
    if (shown > (long long) nn)
        shown = (long long) nn;             /* a brief list has no more */
    if (shown < 0)
        shown = 0;
    if (shown > 0) {
        cell (f, summary ? "BUSIEST" : "NODE", 14);
        fprintf (f, " %-18s %-9s %-19s %s\n", "CORES", "GPUS", "MEM MB", "LEASES");
    }
    for (long long k = 0; k < shown; k++)
        node_line (f, &t->r[order[k]], o->unicode, c->leases_cut);
    more (f, c->nodes - shown, "nodes", NULL);
    free (order);
}

static void print_leases (FILE *f, const json_t *leases, const struct counts *c,
                          double now, const struct section *sec)
{
    size_t i;
    json_t *l;
    const char *hint = " (berth status --json lists them all)";
    if (json_array_size (leases) == 0) {
        /* none listed is not none held: one line either way */
        if (c->leases > 0)
            more (f, c->leases, "leases", hint);
        else
            fprintf (f, "no leases\n");
        return;
    }
    fprintf (f, "%-8s %-20s %-6s %-6s %-5s %-9s %-8s %s\n", "LEASE", "LABEL", "NODES",
             "CORES", "GPUS", "MEM MB", "AGE", "OWNER");
    long long shown = rows_shown (sec);
    if (shown > (long long) json_array_size (leases))
        shown = (long long) json_array_size (leases);
    json_array_foreach (leases, i, l) {
        if ((long long) i >= shown)
            break;
        json_t *p = json_object_get (l, "placement");
        json_t *cores = json_object_get (p, "cores"), *c;
        size_t k;
        long long ncores = 0;
        json_array_foreach (cores, k, c)
            ncores += (long long) json_array_size (c);
        long long cap = num (l, "memory_cap", NULL), budget = num (l, "budget_mb", NULL);
        double age_s = real (l, "age_s", NULL), granted = real (l, "granted", NULL);
        long long owner = num (l, "owner_pid", "peer_pid");
        const char *holder = str (l, "holder", NULL);
        char mem[32] = "-", age[32] = "-", own[160] = "-", orphan[96], nodes[24], nc[24], ng[24];
        /* after a restart: held while its holder lives, or (berthd cannot
         * watch it) freed at reclaim_by unless reclaimed */
        json_t *watched = json_object_get (l, "holder_watched");
        double by = real (l, "reclaim_by", NULL);
        if (holder && !strcmp (holder, "orphaned") && json_is_true (watched)) {
            snprintf (orphan, sizeof (orphan), "orphaned, held while it runs");
            holder = orphan;
        } else if (holder && !strcmp (holder, "orphaned") && json_is_false (watched)) {
            char left[32] = "now";
            if (by > now)
                wallclock_format_brief (by - now, left, sizeof (left));
            snprintf (orphan, sizeof (orphan), "orphaned, cannot be watched: freed in %s "
                      "unless reclaimed", left);
            holder = orphan;
        }
        if (cap >= 0)
            snprintf (mem, sizeof (mem), "%lld cap", cap);
        else if (budget >= 0)
            snprintf (mem, sizeof (mem), "%lld", budget);
        if (age_s >= 0)
            wallclock_format_brief (age_s, age, sizeof (age));
        else if (granted > 0)
            wallclock_format_brief (now - granted, age, sizeof (age));
        if (owner > 0)
            snprintf (own, sizeof (own), "pid %lld%s%s", owner, holder ? ", " : "",
                      holder ? holder : "");
        else if (holder)
            snprintf (own, sizeof (own), "%s", holder);
        snprintf (nodes, sizeof (nodes), "%zu", json_array_size (json_object_get (p, "nodes")));
        snprintf (nc, sizeof (nc), "%lld", ncores);
        snprintf (ng, sizeof (ng), "%lld", num (p, "gpus", NULL) > 0 ? num (p, "gpus", NULL) : 0);
        cell (f, str (l, "lease", NULL), 8);
        fputc (' ', f);
        cell (f, str (l, "label", NULL), 20);
        fputc (' ', f);
        cell (f, nodes, 6);
        fputc (' ', f);
        cell (f, nc, 6);
        fputc (' ', f);
        cell (f, ng, 5);
        fputc (' ', f);
        cell (f, mem, 9);
        fputc (' ', f);
        cell (f, age, 8);
        fprintf (f, " %s\n", own);
    }
    more (f, c->leases - shown, "leases", hint);
}

void status_view_short_why (const char *why, char *buf, size_t size)
{
    if (!size)
        return;
    if (!why || !*why) {
        snprintf (buf, size, "-");
        return;
    }
    if (!strncmp (why, "cannot be placed", 16)) {
        snprintf (buf, size, "never fits");
        return;
    }
    size_t n = strlen (why);
    const char *behind = strstr (why, "; behind #");
    if (behind)
        n = (size_t) (behind - why);
    /* "held for #2 (overtaken 16 of 16 times)": the head line says why */
    const char *paren = strstr (why, " (");
    if (paren && (size_t) (paren - why) < n)
        n = (size_t) (paren - why);
    const char *semi = strstr (why, "; ");
    if (semi && (size_t) (semi - why) < n)
        n = (size_t) (semi - why);
    /* "the daemon's node vm has 0 free cores, 0 free GPUs, ...": the first */
    const char *comma = !strncmp (why, "the daemon's node", 17) ? strchr (why, ',') : NULL;
    if (comma && (size_t) (comma - why) < n)
        n = (size_t) (comma - why);
    if (n >= size)
        n = size - 1;
    memcpy (buf, why, n);
    buf[n] = '\0';
}

static void print_queue (FILE *f, const json_t *queue, const json_t *daemon,
                         const struct counts *c, const struct section *sec, int width)
{
    size_t i;
    json_t *q;
    if (json_array_size (queue) == 0) {
        if (c->waiting > 0)
            more (f, c->waiting, "waiting", NULL);
        else
            fprintf (f, "nothing waiting\n");
        return;
    }
    /* The head's story once, in full: the rows below say only their own
     * obstacle. */
    const json_t *head = json_array_get (queue, 0);
    const char *hwhy = str (head, "why", NULL), *hlabel = str (head, "label", NULL);
    long long over = num (head, "overtaken", NULL);
    long long bound = num (json_object_get (daemon, "starvation"), "overtakes", NULL);
    fprintf (f, "%lld waiting \u00b7 next: %s%s%s", c->waiting,
             hlabel ? "'" : "", hlabel ? hlabel : "an unlabelled request", hlabel ? "'" : "");
    if (hwhy && *hwhy)
        fprintf (f, ", %s", hwhy);
    if (over > 0 && bound > 0)
        fprintf (f, " \u00b7 overtaken %lld of %lld times", over, bound);
    else if (over > 0)
        fprintf (f, " \u00b7 overtaken %lld times", over);
    fputc ('\n', f);
    /* a narrow window keeps room for the reason */
    bool narrow = width > 0 && width < 120;
    int wp = narrow ? 4 : 8, wl = narrow ? 15 : 20, wn = narrow ? 24 : 30, ww = narrow ? 6 : 8;
    cell (f, narrow ? "#" : "WAITING", wp);
    fputc (' ', f);
    cell (f, "LABEL", wl);
    fputc (' ', f);
    cell (f, "NEEDS", wn);
    fputc (' ', f);
    cell (f, "WAITED", ww);
    fputs (" WHY\n", f);
    long long shown = rows_shown (sec);
    if (shown > (long long) json_array_size (queue))
        shown = (long long) json_array_size (queue);
    json_array_foreach (queue, i, q) {
        if ((long long) i >= shown)
            break;
        char waited[32] = "-", pos[24], why[128];
        long long p = num (q, "position", NULL);
        double w = real (q, "waited_s", NULL);
        if (w >= 0)
            wallclock_format_brief (w, waited, sizeof (waited));
        snprintf (pos, sizeof (pos), "%lld", p > 0 ? p : (long long) i + 1);
        status_view_short_why (str (q, "why", NULL), why, sizeof (why));
        cell (f, pos, wp);
        fputc (' ', f);
        cell (f, str (q, "label", NULL), wl);
        fputc (' ', f);
        cell (f, str (q, "needs", NULL), wn);
        fputc (' ', f);
        cell (f, waited, ww);
        fprintf (f, " %s\n", why);
    }
    more (f, c->waiting - shown, "waiting", NULL);
}

void status_view_clip_line (FILE *f, const char *line, size_t len, int width)
{
    char *copy = strndup (line, len);
    if (!copy)
        return;
    if (width > 0 && text_utf8_chars (copy) > (size_t) width) {
        fwrite (copy, 1, text_utf8_prefix (copy, (size_t) width - 1), f);
        fputs ("\u2026", f);
    } else
        fputs (copy, f);
    free (copy);
}

static void clip (FILE *f, const char *text, int width)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr (line, '\n');
        status_view_clip_line (f, line, nl ? (size_t) (nl - line) : strlen (line), width);
        if (nl)
            fputc ('\n', f);
        line = nl ? nl + 1 : NULL;
    }
}

void status_view_render (FILE *f, const json_t *status, double now,
                         const struct status_view_opts *o)
{
    const json_t *alloc = json_object_get (status, "allocation");
    const json_t *nodes = json_object_get (alloc, "nodes");
    const json_t *leases = json_object_get (status, "leases");
    const json_t *queue = json_object_get (status, "queue");
    const json_t *daemon = json_object_get (status, "daemon");
    if (!json_is_array (nodes))
        nodes = NULL;
    struct table t;
    struct counts c;
    table_build (&t, nodes, leases);
    counts_of (status, t.r, t.r ? t.n : 0, &c);
    long long nn = c.nodes, nl = c.leases, nq = c.waiting;
    bool summary = summarised (&c, o);
    struct section sec[3] = {
        { nn, summary ? want_of (nn, STATUS_VIEW_BUSIEST)
                      : o->all_nodes ? (int) (nn < 1000000 ? nn : 1000000)
                                     : want_of (nn, STATUS_VIEW_NODE_TABLE), 0 },
        { nl, want_of (nl, STATUS_VIEW_ROWS), 0 },
        { nq, want_of (nq, STATUS_VIEW_ROWS), 0 },
    };
    if (o->height > 0) {
        /* the lines every view has: header, totals, (states), the column
         * heads or "no leases", "nothing waiting", the queue's head */
        int fixed = 1 + 1 + (summary ? 1 : 0) + (nn ? 1 : 0) + 1 + 1 + (nq ? 1 : 0);
        share_lines (sec, 3, o->height - fixed);
    } else
        for (int i = 0; i < 3; i++)
            sec[i].got = sec[i].want;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = o->width > 0 ? open_memstream (&buf, &len) : NULL;
    FILE *out = m ? m : f;
    print_header (out, status, alloc, now);
    print_nodes (out, &t, &c, &sec[0], o);
    print_leases (out, leases, &c, now, &sec[1]);
    print_queue (out, queue, daemon, &c, &sec[2], o->width);
    table_free (&t);
    if (m) {
        fclose (m);
        if (buf)
            clip (f, buf, o->width);
        free (buf);
    }
}

void status_view_print (FILE *f, const json_t *status, double now, bool unicode)
{
    struct status_view_opts o = { 0, 0, unicode, false };
    status_view_render (f, status, now, &o);
}
