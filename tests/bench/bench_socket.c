/* SPDX-License-Identifier: MIT */
/* berthd over its socket, the real path: a berthd on a fake Slurm allocation
 * (128 nodes of 128 cores and 4 GPUs), driven by
 *  1. one client with libberth: acquire + release round trips (p50, p99);
 *  2. 64 concurrent clients (connections) from one event loop, each
 *     pipelining a few acquires then their releases as the protocol allows:
 *     operations per second in total and the slowest operation;
 *  3. 4,000 clients connected at once, each holding a one-core lease, with
 *     at least 100,000 grants behind the daemon: its resident memory.
 * The load generator of 2 and 3 writes prepared request lines and checks
 * each reply's id, "ok" and lease id by scanning the line, so that the client
 * spends its core on the sockets and the daemon's figure is the daemon's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "berth/berth.h"
#include "benchutil.h"
#include "stall_probe.h"

#define NODES 128

/* ---- the floor: two bare round trips over a Unix socket ---- */

/* A child echoes each message back over a socketpair; one "pair" is two
 * round trips, as acquire + release are, with no JSON and no work: what the
 * kernel and the scheduler cost on this machine, beside berth's figure. */
static void socket_floor (int pairs, double *p50, double *p99)
{
    int sv[2];
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        bench_die ("socketpair: %s", strerror (errno));
    pid_t pid = fork ();
    if (pid < 0)
        bench_die ("fork: %s", strerror (errno));
    if (pid == 0) {
        char b[256];
        close (sv[0]);
        for (;;) {
            ssize_t n = read (sv[1], b, sizeof (b));
            if (n <= 0 || write (sv[1], b, (size_t) n) != n)
                _exit (0);
        }
    }
    close (sv[1]);
    double *v = malloc (sizeof (double) * (size_t) pairs);
    if (!v)
        bench_die ("out of memory");
    char b[256];
    for (int i = -pairs / 10; i < pairs; i++) {
        double t0 = bench_now ();
        for (int k = 0; k < 2; k++)
            if (write (sv[0], "{}\n", 3) != 3 || read (sv[0], b, sizeof (b)) <= 0)
                bench_die ("the echo child is gone");
        if (i >= 0)
            v[i] = (bench_now () - t0) * 1e6;
    }
    close (sv[0]);
    waitpid (pid, NULL, 0);
    *p50 = bench_quantile (v, (size_t) pairs, 0.5);
    *p99 = bench_quantile (v, (size_t) pairs, 0.99);
    free (v);
}

/* ---- 1: one client, libberth ---- */

struct rtt {
    double pair_p50, pair_p99, pair_max, acq_p50, rel_p50;
    long pairs;
};

static void one_client (const char *socket, int pairs, struct rtt *out)
{
    berth_client_error_t err;
    berth_client_t *c = berth_connect (socket, &err);
    berth_request_t *r = berth_request_new ();
    if (!c || !r || berth_request_set_int (r, "cores", 1, &err) < 0)
        bench_die ("libberth: %s", err.message);
    double *pair = malloc (sizeof (double) * (size_t) pairs);
    double *acq = malloc (sizeof (double) * (size_t) pairs);
    double *rel = malloc (sizeof (double) * (size_t) pairs);
    if (!pair || !acq || !rel)
        bench_die ("out of memory");
    for (int i = -pairs / 10; i < pairs; i++) {     /* the first tenth warms */
        double t0 = bench_now ();
        berth_lease_t *l = berth_acquire (c, r, &err);
        if (!l)
            bench_die ("acquire: %s: %s", err.code, err.message);
        double t1 = bench_now ();
        if (berth_release (c, berth_lease_id (l), &err) < 0)
            bench_die ("release: %s: %s", err.code, err.message);
        double t2 = bench_now ();
        berth_lease_free (l);
        if (i >= 0) {
            pair[i] = (t2 - t0) * 1e6;
            acq[i] = (t1 - t0) * 1e6;
            rel[i] = (t2 - t1) * 1e6;
        }
    }
    out->pairs = pairs;
    out->pair_p50 = bench_quantile (pair, (size_t) pairs, 0.5);
    out->pair_p99 = bench_quantile (pair, (size_t) pairs, 0.99);
    out->pair_max = pair[pairs - 1];
    out->acq_p50 = bench_quantile (acq, (size_t) pairs, 0.5);
    out->rel_p50 = bench_quantile (rel, (size_t) pairs, 0.5);
    free (pair);
    free (acq);
    free (rel);
    berth_request_free (r);
    berth_close (c);
}

/* ---- the load generator: raw connections ---- */

#define MAXDEPTH 16

struct lconn {
    int fd;
    char in[16384];
    size_t inlen;
    char out[MAXDEPTH * 96];
    size_t outlen, outoff;
    int depth;                /* requests per batch */
    int outstanding;          /* replies still due in this batch */
    bool releasing;           /* this batch is the releases */
    long next_id, first_id;   /* ids of the batch: first_id.. */
    char leases[MAXDEPTH][24];
    double sent;              /* when the batch went out */
    bool hold;                /* stop after the acquires (part 3) */
};

struct load {
    int ep;
    struct lconn *c;
    int n;
    long ops, errors;
    long over;                /* operations slower than 5 ms */
    double (*slow)[2];        /* when each of them was sent and answered: */
    long nslow, capslow;      /* the caller's array, none unless it gives one */
    double maxlat;            /* seconds */
    double *lat;              /* a sample of latencies, seconds */
    size_t nlat, caplat;
};

static int connect_to (const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf (sa.sun_path, sizeof (sa.sun_path), "%s", path);
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        bench_die ("socket: %s", strerror (errno));
    while (connect (fd, (struct sockaddr *) &sa, sizeof (sa)) < 0)
        if (errno != EINTR && errno != EAGAIN)
            bench_die ("connect %s: %s", path, strerror (errno));
    if (fcntl (fd, F_SETFL, O_NONBLOCK) < 0)
        bench_die ("fcntl: %s", strerror (errno));
    return fd;
}

static void batch (struct lconn *c)
{
    c->outlen = c->outoff = 0;
    c->first_id = c->next_id;
    for (int i = 0; i < c->depth; i++) {
        long id = c->next_id++;
        int w = c->releasing
            ? snprintf (c->out + c->outlen, sizeof (c->out) - c->outlen,
                        "{\"op\":\"release\",\"id\":%ld,\"lease\":\"%s\"}\n",
                        id, c->leases[i])
            : snprintf (c->out + c->outlen, sizeof (c->out) - c->outlen,
                        "{\"op\":\"acquire\",\"id\":%ld,\"cores\":1}\n", id);
        c->outlen += (size_t) w;
    }
    c->outstanding = c->depth;
    c->sent = bench_now ();
}

static void flush_out (struct lconn *c)
{
    while (c->outoff < c->outlen) {
        ssize_t w = send (c->fd, c->out + c->outoff, c->outlen - c->outoff,
                          MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return;
        if (w <= 0)
            bench_die ("send: %s", strerror (errno));
        c->outoff += (size_t) w;
    }
}

/* Check one reply line against what is due next; keep the lease id. */
static void reply (struct load *ld, struct lconn *c, char *line, double now)
{
    int k = c->depth - c->outstanding;
    long want = c->first_id + k;
    char idtext[40];
    snprintf (idtext, sizeof (idtext), "\"id\":%ld", want);
    char *p = strstr (line, idtext);
    if (!p || (p[strlen (idtext)] != ',' && p[strlen (idtext)] != '}')
        || !strstr (line, "\"ok\":true")) {
        fprintf (stderr, "bench: unexpected reply (want id %ld): %.300s\n",
                 want, line);
        ld->errors++;
    }
    if (!c->releasing) {
        char *l = strstr (line, "\"lease\":\"");
        size_t n = l ? strcspn (l + 9, "\"") : 0;
        if (!l || n == 0 || n >= sizeof (c->leases[k]))
            bench_die ("acquire reply without a lease id: %.300s", line);
        memcpy (c->leases[k], l + 9, n);
        c->leases[k][n] = '\0';
    }
    double lat = now - c->sent;
    if (lat > ld->maxlat)
        ld->maxlat = lat;
    if (lat > 0.005) {
        if (ld->nslow < ld->capslow) {
            ld->slow[ld->nslow][0] = c->sent;
            ld->slow[ld->nslow++][1] = now;
        }
        ld->over++;
    }
    if (ld->nlat < ld->caplat)
        ld->lat[ld->nlat++] = lat;
    ld->ops++;
    c->outstanding--;
}

/* Read what is there; start the next batch when this one is answered.
 * Returns true when the connection asked for its next batch. */
static bool on_readable (struct load *ld, struct lconn *c, bool go_on)
{
    for (;;) {
        ssize_t r = read (c->fd, c->in + c->inlen, sizeof (c->in) - c->inlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            break;
        if (r <= 0)
            bench_die ("berthd closed a connection (%s)",
                       r < 0 ? strerror (errno) : "end of file");
        c->inlen += (size_t) r;
        if (c->inlen == sizeof (c->in))
            bench_die ("a reply line over %zu bytes", sizeof (c->in));
    }
    double now = bench_now ();
    char *start = c->in, *nl;
    while ((nl = memchr (start, '\n', c->inlen - (size_t) (start - c->in)))) {
        *nl = '\0';
        if (c->outstanding <= 0)
            bench_die ("a reply nobody asked for: %.200s", start);
        reply (ld, c, start, now);
        start = nl + 1;
    }
    c->inlen -= (size_t) (start - c->in);
    memmove (c->in, start, c->inlen);
    if (c->outstanding > 0)
        return false;
    if (c->hold && !c->releasing)
        return false;
    c->releasing = !c->releasing;
    if (!go_on && c->releasing == false)
        return false;         /* stopping: leave after the releases */
    batch (c);
    flush_out (c);
    return true;
}

static void load_open (struct load *ld, const char *socket, int n, int depth,
                       size_t sample)
{
    memset (ld, 0, sizeof (*ld));
    ld->ep = epoll_create1 (EPOLL_CLOEXEC);
    ld->c = calloc ((size_t) n, sizeof (*ld->c));
    ld->lat = malloc (sizeof (double) * (sample ? sample : 1));
    ld->caplat = sample;
    if (ld->ep < 0 || !ld->c || !ld->lat)
        bench_die ("out of memory");
    ld->n = n;
    for (int i = 0; i < n; i++) {
        struct lconn *c = &ld->c[i];
        c->fd = connect_to (socket);
        c->depth = depth;
        c->next_id = 1;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl (ld->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
            bench_die ("epoll_ctl: %s", strerror (errno));
    }
}

static void load_close (struct load *ld)
{
    for (int i = 0; i < ld->n; i++)
        close (ld->c[i].fd);
    close (ld->ep);
    free (ld->c);
    free (ld->lat);
}

/* Run every connection's acquire/release cycle for seconds; then let each
 * finish its releases. */
static void load_run (struct load *ld, double seconds)
{
    for (int i = 0; i < ld->n; i++) {
        ld->c[i].releasing = false;
        batch (&ld->c[i]);
        flush_out (&ld->c[i]);
    }
    double end = bench_now () + seconds;
    int busy = ld->n;
    struct epoll_event evs[256];
    while (busy > 0) {
        bool go_on = bench_now () < end;
        int k = epoll_wait (ld->ep, evs, 256, 10000);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            bench_die ("no reply from berthd for 10 s");
        for (int i = 0; i < k; i++) {
            struct lconn *c = evs[i].data.ptr;
            if (c->outstanding == 0)
                continue;
            if (!on_readable (ld, c, go_on) && c->outstanding == 0)
                busy--;
        }
    }
}

/* ---- 3: many clients holding leases ---- */

static double hold_many (struct load *ld)
{
    double t0 = bench_now ();
    for (int i = 0; i < ld->n; i++) {
        ld->c[i].hold = true;
        batch (&ld->c[i]);
        flush_out (&ld->c[i]);
    }
    int due = ld->n;
    struct epoll_event evs[256];
    while (due > 0) {
        int k = epoll_wait (ld->ep, evs, 256, 10000);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            bench_die ("no grant from berthd for 10 s (%d due)", due);
        for (int i = 0; i < k; i++) {
            struct lconn *c = evs[i].data.ptr;
            if (c->outstanding == 0)
                continue;
            on_readable (ld, c, false);
            if (c->outstanding == 0)
                due--;
        }
    }
    return bench_now () - t0;
}

int main (int argc, char **argv)
{
    struct bench_args a;
    bench_parse_args (argc, argv, &a);
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit (RLIMIT_NOFILE, &rl);
    }
    const int runs = a.quick ? 1 : 5, pairs = a.quick ? 2000 : 20000;
    const int nconc = 64, depth = 4;
    const double seconds = a.quick ? 0.5 : 3;
    int nhold = a.quick ? 500 : 4000;
    if ((rlim_t) nhold + 64 > rl.rlim_cur)
        nhold = (int) rl.rlim_cur - 64;
    struct bench_daemon d;
    bench_daemon_prepare (&d);
    char maxconn[16];
    snprintf (maxconn, sizeof (maxconn), "%d", nhold + 16);
    const char *extra[] = { "--max-connections", maxconn, NULL };
    bench_daemon_start (&d, a.berthd, NODES, extra);
    long rss0 = bench_proc_kib (d.pid, "VmRSS");

    /* 1 */
    double p50[8], p99[8], mx[8], ap50[8], rp50[8];
    for (int i = 0; i < runs; i++) {
        struct rtt r;
        one_client (d.socket, pairs, &r);
        p50[i] = r.pair_p50;
        p99[i] = r.pair_p99;
        mx[i] = r.pair_max;
        ap50[i] = r.acq_p50;
        rp50[i] = r.rel_p50;
    }
    double rtt50 = bench_median (p50, runs), rtt99 = bench_median (p99, runs);
    double floor50, floor99;
    socket_floor (pairs, &floor50, &floor99);
    double rttmax = bench_median (mx, runs), acq50 = bench_median (ap50, runs);
    double rel50 = bench_median (rp50, runs);
    long grants = (long) runs * (pairs + pairs / 10);

    /* 2 */
    double tput[8], worst[8], lat50[8], lat99[8], lat999[8], dcpu[8], ccpu[8];
    long all_ops = 0, all_over = 0;
    /* the machine's own speed, witnessed beside the operations; the slow
     * operations of every run are kept to be set against it */
    struct stall_probe probe;
    bool probing = stall_probe_start (&probe, 2000000);
    double (*slow)[2] = malloc (sizeof (*slow) * 500000);
    long nslow = 0;
    if (!slow)
        bench_die ("out of memory");
    for (int i = 0; i < runs; i++) {
        struct load ld;
        load_open (&ld, d.socket, nconc, depth, 2000000);
        ld.slow = slow + nslow;
        ld.capslow = 500000 - nslow;
        double c0 = bench_proc_cpu (d.pid), s0 = bench_proc_cpu (getpid ());
        double t0 = bench_now ();
        load_run (&ld, seconds);
        double el = bench_now () - t0;
        dcpu[i] = (bench_proc_cpu (d.pid) - c0) / (double) ld.ops * 1e6;
        ccpu[i] = (bench_proc_cpu (getpid ()) - s0) / (double) ld.ops * 1e6;
        if (ld.errors)
            bench_die ("%ld operations failed", ld.errors);
        tput[i] = (double) ld.ops / el;
        worst[i] = ld.maxlat * 1e3;
        lat50[i] = bench_quantile (ld.lat, ld.nlat, 0.5) * 1e6;
        lat99[i] = bench_quantile (ld.lat, ld.nlat, 0.99) * 1e6;
        lat999[i] = bench_quantile (ld.lat, ld.nlat, 0.999) * 1e6;
        all_ops += ld.ops;
        all_over += ld.over;
        nslow += ld.nslow;
        grants += ld.ops / 2;
        load_close (&ld);
    }
    /* A slow operation "ran on slowed CPUs" when the witnesses' loop took, on
     * average over its time in flight, 5 times its full-speed time or more;
     * the same measure over every 5 ms of the runs is the base rate. */
    long windows = 0, slowed = 0, over_slowed = 0;
    double most = 0, usual_us = 0, slowdown_sum = 0;
    bool probe_rt = false;
    if (probing) {
        stall_probe_stop (&probe);
        stall_probe_summary (&probe, 5, 0.005, &windows, &slowed, &most);
        for (long k = 0; k < nslow; k++) {
            double f = stall_probe_slowdown (&probe, slow[k][0], slow[k][1]);
            slowdown_sum += f;
            over_slowed += f >= 5;
        }
        usual_us = probe.usual * 1e6;
        probe_rt = probe.realtime;
        stall_probe_free (&probe);
    }
    free (slow);
    double ops = bench_median (tput, runs), slowest = 0;
    for (int i = 0; i < runs; i++)
        if (worst[i] > slowest)
            slowest = worst[i];
    double olat50 = bench_median (lat50, runs), olat99 = bench_median (lat99, runs);
    double olat999 = bench_median (lat999, runs);
    double over_pct = all_ops ? 100.0 * (double) all_over / (double) all_ops : 0;
    double dcpu_op = bench_median (dcpu, runs), ccpu_op = bench_median (ccpu, runs);

    /* 3: the grants so far are behind the daemon; make them 100,000 */
    struct load more;
    while (!a.quick && grants < 100000) {
        load_open (&more, d.socket, nconc, depth, 0);
        load_run (&more, 1);
        grants += more.ops / 2;
        load_close (&more);
    }
    struct load held;
    load_open (&held, d.socket, nhold, 1, 0);
    double hold_s = hold_many (&held);
    grants += nhold;
    long rss = bench_proc_kib (d.pid, "VmRSS");
    long hwm = bench_proc_kib (d.pid, "VmHWM");
    /* the daemon still serves with them all held */
    struct rtt busy;
    one_client (d.socket, a.quick ? 200 : 2000, &busy);
    load_close (&held);
    bench_daemon_stop (&d);

    printf ("berthd over its socket (%d nodes x %d cores; medians of %d runs)\n",
            NODES, BENCH_CORES_PER_NODE, runs);
    printf ("  one client (libberth): acquire+release p50 %.1f us, p99 %.1f us "
            "(max %.0f us; acquire %.1f, release %.1f)   targets: p50 < 50, "
            "p99 < 250\n", rtt50, rtt99, rttmax, acq50, rel50);
    printf ("    beside it, two bare round trips over a Unix socket (an echo "
            "child, no JSON): p50 %.1f us, p99 %.1f us\n", floor50, floor99);
    printf ("  %d clients, %d pipelined each: %.0f ops/s, slowest op %.2f ms "
            "(p50 %.0f us, p99 %.0f us)   targets: >= 100000 ops/s, none over "
            "5 ms\n", nconc, depth, ops, slowest, olat50, olat99);
    printf ("    p99.9 %.0f us; %ld of %ld operations (%.3f%%) over 5 ms\n", olat999,
            all_over, all_ops, over_pct);
    if (probing) {
        printf ("    the machine's own speed: %s witnesses, one per CPU, timed a fixed "
                "loop every 1 ms (%.1f us at full speed); in %.1f%% of the runs' 5 ms "
                "windows it ran 5 or more times slower (at worst %.0f times)\n",
                probe_rt ? "real-time (SCHED_FIFO)" : "normal-priority", usual_us,
                windows ? 100.0 * (double) slowed / (double) windows : 0.0, most);
        printf ("    %ld of the %ld operations over 5 ms (%.0f%%) ran while it did: the "
                "CPUs slowed under the VM (on average %.1f times over those "
                "operations)\n", over_slowed, nslow,
                nslow ? 100.0 * (double) over_slowed / (double) nslow : 0.0,
                nslow ? slowdown_sum / (double) nslow : 0.0);
    }
    printf ("    CPU per operation: berthd %.2f us, load generator %.2f us "
            "(one core each would allow %.0f ops/s)\n", dcpu_op, ccpu_op,
            1e6 / (dcpu_op > ccpu_op ? dcpu_op : ccpu_op));
    printf ("  %d clients each holding a lease (all granted in %.2f s), %ld "
            "grants behind it: RSS %.1f MiB (peak %.1f, at start %.1f)   "
            "target: < 64 MiB\n", nhold, hold_s, grants, rss / 1024.0,
            hwm / 1024.0, rss0 / 1024.0);
    printf ("  one client with them all held: acquire+release p50 %.1f us\n",
            busy.pair_p50);
    bench_write_json (a.json, json_pack (
        "{s:s s:b s:i s:i s:{s:i s:f s:f s:f s:f s:f s:f s:f} "
        "s:{s:i s:i s:f s:f s:f s:f s:f s:f s:I s:I s:f s:f "
        "s:{s:b s:b s:I s:f s:I s:f s:I s:f}} "
        "s:{s:i s:I s:f s:f s:f s:f s:f} s:{s:b s:b s:b s:b}}",
        "benchmark", "socket", "quick", a.quick, "runs", runs, "nodes", NODES,
        "one_client", "pairs", pairs, "pair_p50_us", rtt50, "pair_p99_us",
        rtt99, "pair_max_us", rttmax, "acquire_p50_us", acq50,
        "release_p50_us", rel50, "socket_floor_p50_us", floor50,
        "socket_floor_p99_us", floor99,
        "concurrent", "clients", nconc, "depth", depth, "seconds", seconds,
        "ops_per_s", ops, "slowest_ms", slowest, "p50_us", olat50, "p99_us",
        olat99, "p999_us", olat999, "over_5ms", (json_int_t) all_over,
        "ops_total", (json_int_t) all_ops, "berthd_cpu_us_per_op", dcpu_op, "client_cpu_us_per_op",
        ccpu_op, "machine_speed", "witnessed", probing, "realtime", probe_rt,
        "windows_5ms", (json_int_t) windows, "loop_full_speed_us", usual_us,
        "windows_slowed_5x", (json_int_t) slowed, "worst_slowdown", most,
        "slow_ops_on_slowed_cpus", (json_int_t) over_slowed,
        "mean_slowdown_over_slow_ops", nslow ? slowdown_sum / (double) nslow : 0.0,
        "held", "clients", nhold, "grants_behind", (json_int_t) grants,
        "rss_mib", rss / 1024.0, "peak_rss_mib", hwm / 1024.0,
        "start_rss_mib", rss0 / 1024.0, "grant_all_s", hold_s,
        "pair_p50_us_while_held", busy.pair_p50,
        "meets", "rtt", rtt50 < 50 && rtt99 < 250, "throughput",
        ops >= 100000 && slowest <= 5, "rss", hwm < 64 * 1024 && nhold >= 4000,
        "grants", grants >= 100000));
    return 0;
}
