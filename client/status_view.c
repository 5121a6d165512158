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
    const char *leases;
};

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
    r->leases = h->leases;
}

static void node_line (FILE *f, const struct node_row *r, bool unicode)
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

/* Many nodes: a node is full (no core free), partly held or idle. */
static bool summarised (const json_t *nodes, const struct status_view_opts *o)
{
    return !o->all_nodes && json_array_size (nodes) > STATUS_VIEW_NODE_TABLE;
}

static void print_nodes (FILE *f, const json_t *nodes, const json_t *leases,
                         const struct section *sec, const struct status_view_opts *o)
{
    size_t nn = json_array_size (nodes), i;
    struct held *h = tally (nodes, leases);
    struct node_row *r = calloc (nn ? nn : 1, sizeof (*r));
    int *order = malloc ((nn ? nn : 1) * sizeof (int));
    json_t *n;
    long long tc = 0, hc = 0, tg = 0, hg = 0, tm = 0, bm = 0, full = 0, idle = 0;
    bool mem_known = true;
    if (!h || !r || !order) {
        fprintf (f, "nodes %zu (out of memory drawing them)\n", nn);
        free (h);
        free (r);
        free (order);
        return;
    }
    json_array_foreach (nodes, i, n) {
        node_figures (n, &h[i], &r[i]);
        order[i] = (int) i;
        tc += r[i].cores > 0 ? r[i].cores : 0;
        hc += r[i].used;
        tg += r[i].gpus > 0 ? r[i].gpus : 0;
        hg += r[i].gused;
        full += r[i].cores > 0 && r[i].used >= r[i].cores;
        idle += r[i].used <= 0 && r[i].gused <= 0;
        if (r[i].mem < 0 || r[i].unb < 0)
            mem_known = false;
        else {
            tm += r[i].mem;
            bm += r[i].mem - r[i].unb;
        }
    }
    fprintf (f, "nodes %zu \u00b7 cores %lld (%lld held, %lld free) \u00b7 gpus %lld",
             nn, tc, hc, tc - hc, tg);
    if (tg > 0)
        fprintf (f, " (%lld held, %lld free)", hg, tg - hg);
    if (mem_known && nn)
        fprintf (f, " \u00b7 memory %lld MB (%lld budgeted)", tm, bm);
    fputc ('\n', f);
    bool summary = summarised (nodes, o);
    if (summary) {
        fprintf (f, "by state: %lld full \u00b7 %lld partly held \u00b7 %lld idle"
                 " (--nodes all: a row each)\n",
                 full, nn - full - idle, idle);
        qsort_r (order, nn, sizeof (int), by_busy, r);
    }
    long long shown = rows_shown (sec);
    if (summary && shown > (long long) nn - idle)
        shown = (long long) nn - idle;      /* the busiest: none of the idle */
    if (nn && shown > 0) {
        cell (f, summary ? "BUSIEST" : "NODE", 14);
        fprintf (f, " %-18s %-9s %-19s %s\n", "CORES", "GPUS", "MEM MB", "LEASES");
    }
    for (long long k = 0; k < shown && k < (long long) nn; k++)
        node_line (f, &r[order[k]], o->unicode);
    more (f, (long long) nn - shown, "nodes", NULL);
    free (order);
    free (r);
    free (h);
}

static void print_leases (FILE *f, const json_t *leases, double now,
                          const struct section *sec)
{
    size_t i;
    json_t *l;
    if (json_array_size (leases) == 0) {
        fprintf (f, "no leases\n");
        return;
    }
    fprintf (f, "%-8s %-20s %-6s %-6s %-5s %-9s %-8s %s\n", "LEASE", "LABEL", "NODES",
             "CORES", "GPUS", "MEM MB", "AGE", "OWNER");
    long long shown = rows_shown (sec);
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
    more (f, (long long) json_array_size (leases) - shown, "leases",
          " (berth status --json lists them all)");
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
                         const struct section *sec, int width)
{
    size_t i;
    json_t *q;
    if (json_array_size (queue) == 0) {
        fprintf (f, "nothing waiting\n");
        return;
    }
    /* The head's story once, in full: the rows below say only their own
     * obstacle. */
    const json_t *head = json_array_get (queue, 0);
    const char *hwhy = str (head, "why", NULL), *hlabel = str (head, "label", NULL);
    long long over = num (head, "overtaken", NULL);
    long long bound = num (json_object_get (daemon, "starvation"), "overtakes", NULL);
    fprintf (f, "%zu waiting \u00b7 next: %s%s%s", json_array_size (queue),
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
    more (f, (long long) json_array_size (queue) - shown, "waiting", NULL);
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
    long long nn = (long long) json_array_size (nodes);
    long long nl = (long long) json_array_size (leases);
    long long nq = (long long) json_array_size (queue);
    bool summary = summarised (nodes, o);
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
    print_nodes (out, nodes, leases, &sec[0], o);
    print_leases (out, leases, now, &sec[1]);
    print_queue (out, queue, daemon, &sec[2], o->width);
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
