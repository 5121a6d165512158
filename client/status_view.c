/* The human view of berthd's status. Figures come from the status reply;
 * where a node does not state what is held on it, the leases say. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status_view.h"
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
    long long cores, gpus, memory;
    char leases[256];
};

static int node_index (const json_t *nodes, const char *name)
{
    size_t i;
    json_t *n;
    json_array_foreach (nodes, i, n) {
        const char *nm = str (n, "name", "node");
        if (nm && name && !strcmp (nm, name))
            return (int) i;
    }
    return -1;
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

static struct held *tally (const json_t *nodes, const json_t *leases)
{
    size_t nn = json_array_size (nodes), i;
    struct held *h = calloc (nn ? nn : 1, sizeof (*h));
    json_t *l;
    if (!h)
        return NULL;
    json_array_foreach (leases, i, l) {
        json_t *p = json_object_get (l, "placement");
        json_t *names = json_object_get (p, "nodes"), *cores = json_object_get (p, "cores");
        const char *label = str (l, "label", "lease");
        size_t k;
        json_t *name;
        long long gpus = num (p, "gpus", NULL);
        size_t nnodes = json_array_size (names);
        json_array_foreach (names, k, name) {
            int at = node_index (nodes, json_string_value (name));
            if (at < 0)
                continue;
            long long c = (long long) json_array_size (json_array_get (cores, k));
            h[at].cores += c;
            if (gpus > 0 && nnodes)
                h[at].gpus += gpus / (long long) nnodes + ((long long) k < gpus % (long long) nnodes);
            add_lease_name (&h[at], label ? label : "?", c);
        }
    }
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
}

static void print_nodes (FILE *f, const json_t *nodes, const json_t *leases, bool unicode)
{
    struct held *h = tally (nodes, leases);
    size_t i;
    json_t *n;
    long long tc = 0, hc = 0, tg = 0, hg = 0, tm = 0, bm = 0;
    bool mem_known = true;
    if (!h)
        return;
    json_array_foreach (nodes, i, n) {
        long long cores = num (n, "ncores", "cores"), free_cores = num (n, "cores_free", NULL);
        long long gpus = num (n, "gpus", NULL), free_gpus = num (n, "gpus_free", NULL);
        long long mem = num (n, "memory_mb", NULL);
        long long unb = num (n, "memory_unbudgeted_mb", NULL);
        long long used = free_cores >= 0 && cores >= 0 ? cores - free_cores : h[i].cores;
        long long gused = free_gpus >= 0 && gpus >= 0 ? gpus - free_gpus : h[i].gpus;
        tc += cores > 0 ? cores : 0;
        hc += used;
        tg += gpus > 0 ? gpus : 0;
        hg += gused;
        if (mem < 0 || unb < 0)
            mem_known = false;
        else {
            tm += mem;
            bm += mem - unb;
        }
    }
    fprintf (f, "nodes %zu \u00b7 cores %lld (%lld held, %lld free) \u00b7 gpus %lld",
             json_array_size (nodes), tc, hc, tc - hc, tg);
    if (tg > 0)
        fprintf (f, " (%lld held, %lld free)", hg, tg - hg);
    if (mem_known && json_array_size (nodes))
        fprintf (f, " \u00b7 memory %lld MB (%lld budgeted)", tm, bm);
    fprintf (f, "\n%-14s %-18s %-9s %-19s %s\n", "NODE", "CORES", "GPUS", "MEM MB", "LEASES");
    json_array_foreach (nodes, i, n) {
        const char *name = str (n, "name", "node");
        long long cores = num (n, "ncores", "cores"), free_cores = num (n, "cores_free", NULL);
        long long gpus = num (n, "gpus", NULL), free_gpus = num (n, "gpus_free", NULL);
        long long mem = num (n, "memory_mb", NULL);
        long long unb = num (n, "memory_unbudgeted_mb", NULL);
        long long used = free_cores >= 0 && cores >= 0 ? cores - free_cores : h[i].cores;
        long long gused = free_gpus >= 0 && gpus >= 0 ? gpus - free_gpus : h[i].gpus;
        char cbuf[32], gbuf[32], mbuf[48];
        snprintf (cbuf, sizeof (cbuf), "%lld/%lld", used, cores > 0 ? cores : 0);
        snprintf (gbuf, sizeof (gbuf), "%lld/%lld", gused, gpus > 0 ? gpus : 0);
        if (mem >= 0 && unb >= 0)
            snprintf (mbuf, sizeof (mbuf), "%lld/%lld", mem - unb, mem);
        else
            snprintf (mbuf, sizeof (mbuf), "-");
        fprintf (f, "%-14s %-9s ", name ? name : "?", cbuf);
        bar (f, used, cores, unicode);
        fprintf (f, " %-9s %-19s %s\n", gbuf, mbuf, h[i].leases[0] ? h[i].leases : "-");
    }
    free (h);
}

static void print_leases (FILE *f, const json_t *leases, double now)
{
    size_t i;
    json_t *l;
    if (json_array_size (leases) == 0) {
        fprintf (f, "no leases\n");
        return;
    }
    fprintf (f, "%-8s %-20s %-6s %-6s %-5s %-9s %-8s %s\n", "LEASE", "LABEL", "NODES",
             "CORES", "GPUS", "MEM MB", "AGE", "OWNER");
    json_array_foreach (leases, i, l) {
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
        char mem[32] = "-", age[32] = "-", own[160] = "-", orphan[96];
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
        const char *id = str (l, "lease", NULL), *label = str (l, "label", NULL);
        fprintf (f, "%-8s %-20s %-6zu %-6lld %-5lld %-9s %-8s %s\n", id ? id : "?",
                 label ? label : "-", json_array_size (json_object_get (p, "nodes")),
                 ncores, num (p, "gpus", NULL) > 0 ? num (p, "gpus", NULL) : 0, mem, age,
                 own);
    }
}

static void print_queue (FILE *f, const json_t *queue)
{
    size_t i;
    json_t *q;
    if (json_array_size (queue) == 0) {
        fprintf (f, "nothing waiting\n");
        return;
    }
    fprintf (f, "%-8s %-20s %-30s %-8s %s\n", "WAITING", "LABEL", "NEEDS", "WAITED", "WHY");
    json_array_foreach (queue, i, q) {
        char waited[32] = "-";
        long long pos = num (q, "position", NULL);
        double w = real (q, "waited_s", NULL);
        if (w >= 0)
            wallclock_format_brief (w, waited, sizeof (waited));
        const char *label = str (q, "label", NULL), *why = str (q, "why", NULL);
        const char *need = str (q, "needs", NULL);
        fprintf (f, "%-8lld %-20s %-30s %-8s %s\n", pos > 0 ? pos : (long long) i + 1,
                 label ? label : "-", need ? need : "-", waited, why && *why ? why : "-");
    }
}

void status_view_print (FILE *f, const json_t *status, double now, bool unicode)
{
    const json_t *alloc = json_object_get (status, "allocation");
    const json_t *nodes = json_object_get (alloc, "nodes");
    const json_t *leases = json_object_get (status, "leases");
    const json_t *queue = json_object_get (status, "queue");
    print_header (f, status, alloc, now);
    print_nodes (f, json_is_array (nodes) ? nodes : NULL, leases, unicode);
    print_leases (f, leases, now);
    print_queue (f, queue);
}
