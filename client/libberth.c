/* SPDX-License-Identifier: MIT */
/* libberth: the connection to berthd and one function per operation. Each
 * call sends one request line (the codec encodes it) and reads lines until
 * its reply comes; events that arrive meanwhile wait for berth_next_event. */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "libberth_private.h"
#include "reply_fast.h"
#include "socket_path.h"
#include "text.h"

/* ---- errors ------------------------------------------------------------ */

/* berth.h's codes of berthd are the protocol's (codec.h): each public name
 * must exist and have its PROTO_ERR_*'s length; test_error_codes compares
 * the text. */
#define SAME_CODE(name)                                                     \
    _Static_assert (sizeof (BERTH_ERR_##name) == sizeof (PROTO_ERR_##name), \
                    "BERTH_ERR_" #name " differs from PROTO_ERR_" #name);
PROTO_ERROR_NAMES (SAME_CODE)
#undef SAME_CODE

int client_error (berth_client_error_t *err, const berth_error_t *e, const char *code)
{
    if (err) {
        const char *c = code ? code : e && e->code ? e->code : "error";
        snprintf (err->code, sizeof (err->code), "%s", c);
        snprintf (err->message, sizeof (err->message), "%s",
                  e && e->text[0] ? e->text : "unknown error");
    }
    return -1;
}

int client_errorf (berth_client_error_t *err, const char *code, const char *fmt, ...)
{
    if (err) {
        int saved = errno;
        va_list ap;
        snprintf (err->code, sizeof (err->code), "%s", code);
        va_start (ap, fmt);
        vsnprintf (err->message, sizeof (err->message), fmt, ap);
        va_end (ap);
        errno = saved;
    }
    return -1;
}

/* ---- connecting -------------------------------------------------------- */

int client_default_socket (char *buf, size_t size, berth_client_error_t *err)
{
    berth_error_t e = { 0 };
    const char *job = getenv ("SLURM_JOB_ID");
    if (!job || !*job)
        job = getenv ("PBS_JOBID");
    if (socket_default_path (getenv ("XDG_RUNTIME_DIR"), getuid (), job, buf, size,
                              &e) < 0)
        return client_error (err, &e, BERTH_ERR_CONNECT);
    return 0;
}

/* An idle berthd answers in tens of microseconds. Polling the socket that
 * long before sleeping saves a sleep and a wakeup on both sides, which cost
 * more than that on a virtual machine (measured: one client's acquire +
 * release p50 66 -> 47 us), and at most this much CPU per reply. Only where
 * another CPU can run berthd meanwhile. BERTH_CLIENT_SPIN_US overrides
 * (0: sleep at once; values other than 0..10000 are ignored). */
#define DEFAULT_SPIN_US 50

static double spin_seconds (void)
{
    const char *v = getenv ("BERTH_CLIENT_SPIN_US");
    if (v && *v) {
        char *end;
        long us = strtol (v, &end, 10);
        if (!*end && us >= 0 && us <= 10000)
            return (double) us * 1e-6;
    }
    cpu_set_t set;
    if (sched_getaffinity (0, sizeof (set), &set) == 0 && CPU_COUNT (&set) < 2)
        return 0;
    return DEFAULT_SPIN_US * 1e-6;
}

/* How long a handle keeps trying to reconnect after berthd went away
 * (PROTOCOL.md "Reconnecting after a restart"): about a minute covers a
 * restart by systemd or by hand. BERTH_RECONNECT_S overrides (0: never;
 * values other than 0..86400 are ignored). */
#define DEFAULT_RECONNECT_S 60.0
#define MAX_RECONNECT_S 86400.0

static double reconnect_seconds (void)
{
    return text_seconds_or (getenv ("BERTH_RECONNECT_S"), 0, MAX_RECONNECT_S,
                            DEFAULT_RECONNECT_S);
}

/* Request ids start at a random point (below 2^40), so that the handles of
 * one process do not share ids: an acquire sent again after a restart is
 * known by its process and its id (PROTOCOL.md "Reconnecting after a
 * restart"). */
static long long first_id (void)
{
    uint64_t v = 0;
    if (getrandom (&v, sizeof (v), GRND_NONBLOCK) != (ssize_t) sizeof (v)) {
        struct timespec ts;
        clock_gettime (CLOCK_REALTIME, &ts);
        v = (uint64_t) ts.tv_nsec * 2654435761u ^ (uint64_t) getpid () << 20
            ^ (uint64_t) (uintptr_t) &ts;
    }
    return (long long) (v & ((UINT64_C (1) << 40) - 1)) + 1;
}

static void pause_s (double s)
{
    struct timespec ts = { (time_t) s, (long) ((s - (time_t) s) * 1e9) };
    while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* How long a connect may wait for berthd to take it off its backlog: a
 * berthd that is stopped (SIGSTOP, a debugger) or wedged accepts nothing,
 * and a blocking connect to its full backlog would wait for ever.
 * BERTH_CONNECT_S overrides (values other than 0.1..86400 are ignored). */
#define DEFAULT_CONNECT_S 10.0

static double connect_seconds (void)
{
    return text_seconds_or (getenv ("BERTH_CONNECT_S"), 0.1, MAX_RECONNECT_S,
                            DEFAULT_CONNECT_S);
}

/* A socket connected to path (its length already checked), trying while
 * berthd's backlog is full until deadline (monotonic); -1 with errno
 * (EAGAIN: still full then). */
static int dial (const char *path, double deadline)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    memcpy (sa.sun_path, path, strlen (path) + 1);
    /* non-blocking only to connect: a Unix socket says EAGAIN at once when
     * the backlog is full, where a blocking one would wait */
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    double wait = 0.001;
    while (connect (fd, (struct sockaddr *) &sa, sizeof (sa)) < 0) {
        if (errno == EINTR)
            continue;
        int e = errno;
        double left = deadline - now_mono ();
        if (e == EAGAIN && left > 0) {
            pause_s (wait < left ? wait : left);
            wait = wait * 2 > 0.1 ? 0.1 : wait * 2;
            continue;
        }
        close (fd);
        errno = e;
        return -1;
    }
    int fl = fcntl (fd, F_GETFL);
    if (fl < 0 || fcntl (fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        close (fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The pid berthd wrote in its lock beside the socket (PROTOCOL.md
 * "Transport"), 0 if none can be read. */
static pid_t lock_pid (const char *path)
{
    char lock[sizeof (((struct sockaddr_un *) 0)->sun_path) + 8], buf[32];
    snprintf (lock, sizeof (lock), "%s" SOCKET_LOCK_SUFFIX, path);
    int fd = open (lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    ssize_t n = read (fd, buf, sizeof (buf));
    close (fd);
    return n > 0 ? lock_text_pid (buf, (size_t) n) : 0;
}

/* Why berthd at path takes no connection: named by its pid and, where
 * /proc says so, that it is stopped. */
static void say_not_accepting (const char *path, const char *whence,
                               double waited, berth_client_error_t *err)
{
    pid_t pid = lock_pid (path);
    char state = 0, stat[64], buf[512];
    snprintf (stat, sizeof (stat), "/proc/%d/stat", (int) pid);
    FILE *f = pid ? fopen (stat, "re") : NULL;
    if (f) {
        size_t n = fread (buf, 1, sizeof (buf) - 1, f);
        buf[n] = '\0';
        char *p = strrchr (buf, ')');
        if (p && p[1] == ' ')
            state = p[2];
        fclose (f);
    }
    if (pid && (state == 'T' || state == 't'))
        client_errorf (err, BERTH_ERR_CONNECT,
                       "berthd at %s%s (pid %d) is stopped (state %c) and took "
                       "no connection within %g s; resume it (kill -CONT %d) "
                       "or stop it (BERTH_CONNECT_S sets the wait)", path,
                       whence, (int) pid, state, waited, (int) pid);
    else if (pid)
        client_errorf (err, BERTH_ERR_CONNECT,
                       "berthd at %s%s (pid %d) took no connection within %g s "
                       "(its backlog is full: it is hung or overloaded; "
                       "BERTH_CONNECT_S sets the wait)", path, whence,
                       (int) pid, waited);
    else
        client_errorf (err, BERTH_ERR_CONNECT,
                       "berthd at %s%s took no connection within %g s (its "
                       "backlog is full: it is stopped, hung or overloaded; "
                       "BERTH_CONNECT_S sets the wait)", path, whence, waited);
}

berth_client_t *berth_connect (const char *path, berth_client_error_t *err)
{
    char dflt[sizeof (((struct sockaddr_un *) 0)->sun_path) + 1];
    struct sockaddr_un sa;
    bool from_env = false;

    if (!path || !*path) {
        path = getenv ("BERTH_SOCKET");
        from_env = path && *path;
        if (!from_env) {
            if (client_default_socket (dflt, sizeof (dflt), err) < 0)
                return NULL;
            path = dflt;
        }
    }
    if (strlen (path) >= sizeof (sa.sun_path)) {
        client_errorf (err, BERTH_ERR_CONNECT,
                       "socket path %s is %zu bytes, over the %zu a Unix socket "
                       "allows; start berthd with a shorter --socket",
                       path, strlen (path), sizeof (sa.sun_path) - 1);
        return NULL;
    }

    berth_client_t *c = calloc (1, sizeof (*c));
    if (c)
        c->fd = -1;
    if (!c || !(c->path = strdup (path)) || !(c->events = json_array ())) {
        client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
        goto fail;
    }
    c->next_id = first_id ();
    c->spin = spin_seconds ();
    c->reconnect = reconnect_seconds ();
    double waited = connect_seconds ();
    if ((c->fd = dial (path, now_mono () + waited)) < 0) {
        const char *whence = from_env ? " (from BERTH_SOCKET)" : "";
        if (errno == EAGAIN)
            say_not_accepting (path, whence, waited, err);
        else if (errno == ENOENT)
            client_errorf (err, BERTH_ERR_CONNECT,
                           "no berthd socket at %s%s; start berthd first "
                           "(eval \"$(berthd --detach --print-env)\") or set "
                           "BERTH_SOCKET to its socket", path, whence);
        else if (errno == ECONNREFUSED)
            client_errorf (err, BERTH_ERR_CONNECT,
                           "berthd is not running at %s%s (the socket is left "
                           "over from one that stopped); start it again", path,
                           whence);
        else
            client_errorf (err, BERTH_ERR_CONNECT, "cannot connect to berthd at %s%s: %s",
                           path, whence, strerror (errno));
        goto fail;
    }
    return c;
fail:
    if (c) {
        free (c->path);
        json_decref (c->events);
        free (c);
    }
    return NULL;
}

static void strv_free (char **v, int n)
{
    for (int i = 0; i < n; i++)
        free (v[i]);
    free (v);
}

void berth_close (berth_client_t *c)
{
    if (!c)
        return;
    int saved = errno;
    if (c->fd >= 0)
        close (c->fd);
    free (c->path);
    free (c->buf);
    json_decref (c->events);
    strv_free (c->held, c->nheld);
    strv_free (c->lost, c->nlost);
    free (c);
    errno = saved;
}

int berth_fd (const berth_client_t *c)
{
    return c ? c->fd : -1;
}

const char *berth_socket_path (const berth_client_t *c)
{
    return c ? c->path : NULL;
}

/* ---- lines ------------------------------------------------------------- */

static int send_all (berth_client_t *c, const char *data, size_t len,
                     berth_client_error_t *err)
{
    while (len > 0) {
        ssize_t n = send (c->fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
            return client_errorf (err, BERTH_ERR_CLOSED,
                                  "berthd at %s closed the connection", c->path);
        if (n < 0)
            return client_errorf (err, BERTH_ERR_SYSTEM, "cannot write to berthd at %s: %s",
                                  c->path, strerror (errno));
        data += n;
        len -= (size_t) n;
    }
    return 0;
}

/* Is a complete line in the buffer? 1 with its length (the newline left
 * out) in *n, 0 when not yet, -1 when the partial line is already too long. */
static int have_line (berth_client_t *c, size_t *n, berth_client_error_t *err)
{
    char *nl = c->len ? memchr (c->buf, '\n', c->len) : NULL;
    if (!nl) {
        if (c->len > PROTO_MAX_REPLY)
            return client_errorf (err, BERTH_ERR_PROTOCOL,
                                  "berthd sent a line of more than %d bytes",
                                  PROTO_MAX_REPLY);
        return 0;
    }
    *n = (size_t) (nl - c->buf);
    return 1;
}

/* Remove the first line (n bytes and its newline) from the buffer. */
static void drop_line (berth_client_t *c, size_t n)
{
    memmove (c->buf, c->buf + n + 1, c->len - n - 1);
    c->len -= n + 1;
}

/* Parse the first line (n bytes) as a message and remove it. */
static int parse_line (berth_client_t *c, size_t n, json_t **msg,
                       berth_client_error_t *err)
{
    berth_error_t e = { 0 };
    int rc = proto_parse_message (c->buf, n, msg, &e);
    drop_line (c, n);
    if (rc < 0)
        return client_error (err, &e, BERTH_ERR_PROTOCOL);
    return 1;
}

/* Wait for the next complete line: 1 with its length in *len (the line is
 * at c->buf), 0 when deadline (monotonic; < 0: none) passed first, -1 on
 * error. */
static int wait_line (berth_client_t *c, double deadline, size_t *len,
                      berth_client_error_t *err)
{
    for (;;) {
        int rc = have_line (c, len, err);
        if (rc != 0)
            return rc;
        if (c->cap - c->len < 4096) {
            size_t cap = c->cap ? c->cap * 2 : 16384;
            char *b = realloc (c->buf, cap);
            if (!b)
                return client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
            c->buf = b;
            c->cap = cap;
        }
        /* first poll without sleeping for a while (spin_seconds) */
        double spin_end = now_mono () + c->spin;
        if (deadline >= 0 && deadline < spin_end)
            spin_end = deadline;
        ssize_t n;
        do
            n = recv (c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
        while (n < 0 && errno == EAGAIN && now_mono () < spin_end);
        if (n < 0 && errno == EAGAIN && deadline >= 0) {
            double left = deadline - now_mono ();
            if (left <= 0)
                return 0;
            struct pollfd p = { .fd = c->fd, .events = POLLIN };
            int ms = left > 1e6 ? 1000000000 : (int) (left * 1000) + 1;   /* round up */
            int k = poll (&p, 1, ms);
            if (k < 0 && errno != EINTR)
                return client_errorf (err, BERTH_ERR_SYSTEM, "poll: %s", strerror (errno));
            if (k <= 0)
                continue;
        }
        if (n < 0 && errno == EAGAIN)
            n = read (c->fd, c->buf + c->len, c->cap - c->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != ECONNRESET)
            return client_errorf (err, BERTH_ERR_SYSTEM, "cannot read from berthd at %s: %s",
                                  c->path, strerror (errno));
        if (n <= 0)
            return client_errorf (err, BERTH_ERR_CLOSED,
                                  "berthd at %s closed the connection%s", c->path,
                                  c->len ? " in the middle of a line" : "");
        c->len += (size_t) n;
    }
}

/* Read the next message: 1 and *msg, 0 when deadline (monotonic; < 0: none)
 * passed first, -1 on error. */
static int read_message (berth_client_t *c, double deadline, json_t **msg,
                         berth_client_error_t *err)
{
    size_t n;
    int rc = wait_line (c, deadline, &n, err);
    return rc <= 0 ? rc : parse_line (c, n, msg, err);
}

static bool is_our_reply (const json_t *msg, long long id)
{
    json_t *v = json_object_get (msg, "id");
    /* null: berthd could not read the request (only one is ever in flight) */
    return json_is_null (v) || (json_is_integer (v) && json_integer_value (v) == id);
}

/* A reply the caller would take from the fast lane (reply_fast.h), which
 * tries each line first; the jansson path reads what it declines. */
enum fast_kind { FAST_LEASE, FAST_RELEASE };

struct fast_reply {
    enum fast_kind kind;
    struct proto_lease lease;   /* FAST_LEASE: the lease */
    char *line;                 /* FAST_LEASE: a copy of the reply line */
    size_t len;
};

/* The first line (n bytes) through the fast lane: 0 when it is the reply
 * to request id (then f holds it and the line is removed), 1 when it was
 * another request's reply (removed: the jansson path skips those too), 2
 * when declined. */
static int fast_line (berth_client_t *c, size_t n, long long id, struct fast_reply *f)
{
    struct proto_fast_reply r;
    if (f->kind == FAST_RELEASE) {
        if (proto_fast_release_reply (c->buf, n, &r))
            return 2;
    } else {
        if (proto_fast_lease_reply (c->buf, n, &r, &f->lease))
            return 2;
        if (r.id != id)
            proto_lease_free (&f->lease);
        else if (!(f->line = malloc (n ? n : 1))) {
            proto_lease_free (&f->lease);
            return 2;           /* the jansson path words the shortage */
        } else {
            memcpy (f->line, c->buf, n);
            f->len = n;
        }
    }
    drop_line (c, n);
    return r.id == id ? 0 : 1;
}

/* The request line: written directly for the common acquire and release,
 * by the codec otherwise. NULL when out of memory. */
static char *request_line (struct proto_request *req, long long id)
{
    char *line = request_line_fast (req, id);
    if (line)
        return line;
    req->id = json_integer (id);
    json_t *o = req->id ? proto_encode_request (req) : NULL;
    line = o ? proto_line (o) : NULL;
    json_decref (o);
    json_decref (req->id);
    req->id = NULL;
    return line;
}

/* Send req under id and wait for its reply, until deadline
 * (monotonic; < 0: none; then the error is closed); events that come first
 * are kept for berth_next_event. With fast (may be NULL), the fast lane
 * tries each line first. 0 with *reply (the caller's), 1 when the fast lane
 * read it (into *fast), -1 on error. */
static int exchange (berth_client_t *c, struct proto_request *req, long long id,
                     struct fast_reply *fast, json_t **reply, double deadline,
                     berth_client_error_t *err)
{
    if (c->fd < 0)
        return client_errorf (err, BERTH_ERR_CLOSED, "berthd at %s went away and "
                              "is not connected again", c->path);
    char *line = request_line (req, id);
    if (!line)
        return client_errorf (err, BERTH_ERR_SYSTEM, "cannot encode the %s request "
                              "(out of memory)", proto_op_name (req->op));
    if (strlen (line) > PROTO_MAX_LINE + 1) {
        client_errorf (err, BERTH_ERR_TOO_LARGE, "the %s request is %zu bytes, over "
                       "berthd's limit of %d per line; shorten the argv",
                       proto_op_name (req->op), strlen (line) - 1, PROTO_MAX_LINE);
        free (line);
        return -1;
    }
    double sent = now_mono ();
    if (deadline < 0 && c->answer > 0)
        deadline = sent + c->answer;
    int rc = send_all (c, line, strlen (line), err);
    free (line);
    if (rc < 0)
        return -1;
    for (;;) {
        json_t *msg;
        size_t n;
        rc = wait_line (c, deadline, &n, err);
        if (rc == 0) {
            pid_t pid = lock_pid (c->path);
            char who[32] = "";
            if (pid)
                snprintf (who, sizeof (who), " (pid %d)", (int) pid);
            return client_errorf (err, BERTH_ERR_TIMEOUT, "berthd at %s%s took "
                                  "the %s request but did not answer within "
                                  "%.3g s: it is stopped, hung or overloaded",
                                  c->path, who, proto_op_name (req->op),
                                  deadline - sent);
        }
        if (rc < 0)
            return -1;
        rc = fast ? fast_line (c, n, id, fast) : 2;
        if (rc == 0)
            return 1;
        if (rc == 1)
            continue;
        if (parse_line (c, n, &msg, err) < 0)
            return -1;
        if (proto_is_event (msg)) {
            if (c->watching)
                json_array_append (c->events, msg);
            json_decref (msg);
            continue;
        }
        if (!is_our_reply (msg, id)) {
            json_decref (msg);
            continue;
        }
        berth_error_t e = { 0 };
        if (proto_reply_status (msg, &e) < 0) {
            json_decref (msg);
            /* the codec reads a reply it cannot make sense of as internal */
            return client_error (err, &e, NULL);
        }
        *reply = msg;
        return 0;
    }
}


/* ---- reconnecting (PROTOCOL.md "Reconnecting after a restart") --------- */

#define MAX_RESENDS 10

static int strv_find (char **v, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp (v[i], s) == 0)
            return i;
    return -1;
}

static int strv_add (char ***v, int *n, int *cap, const char *s)
{
    if (*n == *cap) {
        int k = *cap ? *cap * 2 : 4;
        char **w = realloc (*v, (size_t) k * sizeof (*w));
        if (!w)
            return -1;
        *v = w;
        *cap = k;
    }
    if (!((*v)[*n] = strdup (s)))
        return -1;
    (*n)++;
    return 0;
}

/* Remove item i (freed unless keep). */
static char *strv_take (char **v, int *n, int i)
{
    char *s = v[i];
    memmove (v + i, v + i + 1, (size_t) (*n - i - 1) * sizeof (*v));
    (*n)--;
    return s;
}

/* On a new connection: make sure berthd answers (a hello, by deadline),
 * reclaim each lease held, by id, in the order granted (one gone is moved
 * to c->lost), and watch again if this handle watched. */
static int take_back (berth_client_t *c, double deadline, berth_client_error_t *err)
{
    struct proto_request req;
    json_t *reply = NULL;
    proto_request_init (&req, PROTO_HELLO);
    req.hello.version = BERTH_PROTOCOL_VERSION;
    if (exchange (c, &req, c->next_id++, NULL, &reply, deadline, err) < 0)
        return -1;
    json_decref (reply);
    for (int i = 0; i < c->nheld;) {
        berth_client_error_t e;
        proto_request_init (&req, PROTO_RECLAIM);
        req.reclaim.lease = c->held[i];
        reply = NULL;
        if (exchange (c, &req, c->next_id++, NULL, &reply, deadline, &e) == 0) {
            json_decref (reply);
            i++;
            continue;
        }
        if (strcmp (e.code, BERTH_ERR_NOT_FOUND) != 0) {
            if (err)
                *err = e;
            return -1;
        }
        char *id = strv_take (c->held, &c->nheld, i);
        int rc = strv_add (&c->lost, &c->nlost, &c->caplost, id);
        free (id);
        if (rc < 0)
            return client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
    }
    if (c->watching) {
        proto_request_init (&req, PROTO_WATCH);
        reply = NULL;
        if (exchange (c, &req, c->next_id++, NULL, &reply, deadline, err) < 0)
            return -1;
        json_decref (reply);
    }
    return 0;
}

/* A berthd that stops on purpose (shutdown, SIGTERM) removes its socket;
 * one that crashed leaves it (or systemd keeps it), and a restart replaces
 * it at once. A socket missing this long means berthd has stopped. */
#define GONE_SOCKET_S 1.0

/* berthd closed the connection: connect again with backoff, for up to
 * c->reconnect seconds from now, and take back what this handle held. */
static int reconnect (berth_client_t *c, berth_client_error_t *err)
{
    double deadline = now_mono () + c->reconnect, wait = 0.05;
    for (int round = 0;; round++) {
        if (c->fd >= 0)
            close (c->fd);
        c->fd = -1;
        c->len = 0;
        int fd;
        double missing = -1;      /* since when the socket is missing */
        while ((fd = dial (c->path, deadline)) < 0) {
            if (errno != ENOENT && errno != ECONNREFUSED && errno != EAGAIN)
                return client_errorf (err, BERTH_ERR_CLOSED, "berthd at %s went away, "
                                      "and connecting again failed: %s", c->path,
                                      strerror (errno));
            if (errno != ENOENT)
                missing = -1;
            else if (missing < 0)
                missing = now_mono ();
            else if (now_mono () - missing >= GONE_SOCKET_S)
                return client_errorf (err, BERTH_ERR_CLOSED, "berthd at %s has stopped "
                                      "(it removed its socket)", c->path);
            double left = deadline - now_mono ();
            if (left <= 0)
                return client_errorf (err, BERTH_ERR_CLOSED, "berthd at %s went away "
                                      "and did not come back within %g s "
                                      "(BERTH_RECONNECT_S)", c->path, c->reconnect);
            pause_s (wait < left ? wait : left);
            wait = wait * 2 > 1 ? 1 : wait * 2;
        }
        c->fd = fd;
        berth_client_error_t e;
        if (take_back (c, deadline, &e) == 0)
            return 0;
        /* gone again while taking back: start over, within the same time */
        if (strcmp (e.code, BERTH_ERR_CLOSED) != 0 || round >= MAX_RESENDS
            || now_mono () >= deadline) {
            if (err)
                *err = e;
            return -1;
        }
    }
}

/* exchange, and where berthd went away meanwhile (not asked to stop),
 * reconnect and send req again, under the same id: an acquire with
 * "resume", a release that a reclaim found gone counts as done (*reply
 * NULL). */
static int transact_fast (berth_client_t *c, struct proto_request *req,
                          struct fast_reply *fast, json_t **reply,
                          berth_client_error_t *err)
{
    berth_client_error_t e;
    /* sent again under the same id: berthd gives an acquire whose grant it
     * journaled but whose reply a crash swallowed that lease, not another */
    long long id = c->next_id++;
    for (int tries = 0;; tries++) {
        int rc = exchange (c, req, id, fast, reply, -1, &e);
        if (rc < 0 && tries >= MAX_RESENDS && !strcmp (e.code, BERTH_ERR_CLOSED)
            && req->op != PROTO_SHUTDOWN && c->reconnect > 0)
            /* say why this one stops where the others go on */
            return client_errorf (err, BERTH_ERR_CLOSED, "gave up on the %s "
                                  "request: berthd at %s closed the connection "
                                  "%d times while it was in flight, and came "
                                  "back each time (is this request what "
                                  "crashes it? see its log): %s",
                                  proto_op_name (req->op), c->path, tries + 1,
                                  e.message);
        if (rc >= 0 || strcmp (e.code, BERTH_ERR_CLOSED) != 0
            || req->op == PROTO_SHUTDOWN || c->reconnect <= 0 || tries >= MAX_RESENDS) {
            if (rc < 0 && err)
                *err = e;
            return rc;
        }
        if (reconnect (c, &e) < 0) {
            if (err)
                *err = e;
            return -1;
        }
        if (req->op == PROTO_ACQUIRE)
            req->acquire.resume = true;
        int i = req->op == PROTO_RELEASE
                ? strv_find (c->lost, c->nlost, req->release.lease) : -1;
        if (i >= 0) {
            free (strv_take (c->lost, &c->nlost, i));
            *reply = NULL;
            return 0;
        }
    }
}

int berth_check (berth_client_t *c, berth_client_error_t *err)
{
    if (!c)
        return client_errorf (err, BERTH_ERR_USAGE, "berth_check: no client");
    if (c->fd >= 0) {
        char b;
        ssize_t n = recv (c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
            return 0;
        if (n < 0 && errno != ECONNRESET)
            return client_errorf (err, BERTH_ERR_SYSTEM, "cannot read from berthd at %s: %s",
                                  c->path, strerror (errno));
    }
    if (c->reconnect <= 0)
        return client_errorf (err, BERTH_ERR_CLOSED, "berthd at %s closed the connection",
                              c->path);
    return reconnect (c, err);
}

int berth_set_reconnect (berth_client_t *c, double seconds, berth_client_error_t *err)
{
    if (!c || !(seconds >= 0 && seconds <= MAX_RECONNECT_S))
        return client_errorf (err, BERTH_ERR_USAGE, "berth_set_reconnect: needs a client "
                              "and 0 to %.0f seconds", MAX_RECONNECT_S);
    c->reconnect = seconds;
    return 0;
}

int berth_set_answer_wait (berth_client_t *c, double seconds,
                           berth_client_error_t *err)
{
    if (!c || !(seconds >= 0 && seconds <= MAX_RECONNECT_S))
        return client_errorf (err, BERTH_ERR_USAGE, "berth_set_answer_wait: "
                              "needs a client and 0 to %.0f seconds",
                              MAX_RECONNECT_S);
    c->answer = seconds;
    return 0;
}

static json_t *transact (berth_client_t *c, struct proto_request *req,
                         berth_client_error_t *err)
{
    json_t *reply;
    return transact_fast (c, req, NULL, &reply, err) == 0 ? reply : NULL;
}

/* The reply's members except id and ok, as compact JSON text. */
static char *reply_body_text (json_t *reply, berth_client_error_t *err)
{
    json_object_del (reply, "id");
    json_object_del (reply, "ok");
    char *s = json_dumps (reply, JSON_COMPACT);
    if (!s)
        client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
    return s;
}

/* ---- operations -------------------------------------------------------- */

int berth_hello (berth_client_t *c, int *version, char **server,
                 berth_client_error_t *err)
{
    struct proto_request req;
    berth_error_t e = { 0 };
    proto_request_init (&req, PROTO_HELLO);
    req.hello.version = BERTH_PROTOCOL_VERSION;
    if (!c || !version)
        return client_errorf (err, BERTH_ERR_USAGE, "berth_hello: no client or no version");
    json_t *reply = transact (c, &req, err);
    if (!reply)
        return -1;
    int v;
    if (proto_decode_hello_reply (reply, &v, &e) < 0) {
        json_decref (reply);
        return client_error (err, &e, BERTH_ERR_PROTOCOL);
    }
    if (server) {
        const char *s = json_string_value (json_object_get (reply, "server"));
        if (!(*server = strdup (s ? s : "berthd"))) {
            json_decref (reply);
            return client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
        }
    }
    *version = v;
    json_decref (reply);
    return 0;
}

berth_lease_t *berth_acquire (berth_client_t *c, const berth_request_t *r,
                              berth_client_error_t *err)
{
    if (!c || !r) {
        client_errorf (err, BERTH_ERR_USAGE, "berth_acquire: no client or no request");
        return NULL;
    }
    struct proto_request req;
    proto_request_init (&req, PROTO_ACQUIRE);
    req.acquire = r->a;       /* borrowed: encoded, never freed here */
    struct fast_reply fast = { .kind = FAST_LEASE };
    json_t *reply;
    int rc = transact_fast (c, &req, &fast, &reply, err);
    if (rc < 0)
        return NULL;
    berth_lease_t *l;
    if (rc == 1)
        l = lease_from_fast (&fast.lease, fast.line, fast.len, err);
    else {
        json_object_del (reply, "id");
        json_object_del (reply, "ok");
        l = lease_from_json (reply, err);
        json_decref (reply);
    }
    /* bound to this connection: reclaimed by id if berthd restarts */
    if (l && !r->a.detach && strv_add (&c->held, &c->nheld, &c->capheld, l->l.id) < 0) {
        berth_release (c, l->l.id, NULL);
        berth_lease_free (l);
        client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
        return NULL;
    }
    return l;
}

void berth_outcome_init (berth_outcome_t *o)
{
    if (!o)
        return;
    memset (o, 0, sizeof (*o));
    o->wall_s = o->cpu_s = -1;
    o->max_rss_kb = -1;
}

int berth_release (berth_client_t *c, const char *lease, berth_client_error_t *err)
{
    return berth_release_outcome (c, lease, NULL, err);
}

int berth_release_outcome (berth_client_t *c, const char *lease,
                           const berth_outcome_t *o, berth_client_error_t *err)
{
    if (!c || !lease || !*lease)
        return client_errorf (err, BERTH_ERR_USAGE, "berth_release: no client or no lease id");
    struct proto_outcome po;
    proto_outcome_init (&po);
    if (o) {
        po.status = o->status;
        po.signal = o->signal;
        po.stopped = (char *) o->stopped;
        po.launch_error = (char *) o->launch_error;
        po.wall_s = o->wall_s;
        po.cpu_s = o->cpu_s;
        po.max_rss_kb = o->max_rss_kb;
        json_t *check = proto_outcome_json (&po);
        if (!check)
            return client_errorf (err, BERTH_ERR_USAGE, "berth_release_outcome: status "
                                  "%d, signal %d or stopped '%s' out of range (status "
                                  "0..255, signal 0..127, stopped one of "
                                  PROTO_STOPPED_REASONS ")", o->status, o->signal,
                                  o->stopped ? o->stopped : "");
        json_decref (check);
    }
    struct proto_request req;
    proto_request_init (&req, PROTO_RELEASE);
    req.release.lease = (char *) lease;
    req.release.outcome = o ? &po : NULL;
    struct fast_reply fast = { .kind = FAST_RELEASE };
    json_t *reply = NULL;
    berth_client_error_t e;
    int rc = transact_fast (c, &req, &fast, &reply, &e);
    json_decref (reply);
    int held = strv_find (c->held, c->nheld, lease);
    int lost = strv_find (c->lost, c->nlost, lease);
    if (rc < 0 && lost >= 0 && strcmp (e.code, BERTH_ERR_NOT_FOUND) == 0)
        client_errorf (&e, BERTH_ERR_NOT_FOUND, "lease %s was freed while berthd was "
                       "away: berthd did not have it when this client reconnected",
                       lease);
    if (rc == 0 || strcmp (e.code, BERTH_ERR_NOT_FOUND) == 0) {
        if (held >= 0)
            free (strv_take (c->held, &c->nheld, held));
        if (lost >= 0)
            free (strv_take (c->lost, &c->nlost, lost));
    }
    if (rc < 0 && err)
        *err = e;
    return rc < 0 ? -1 : 0;
}

int berth_placed (berth_client_t *c, const char *lease, const int *cores,
                  int ncores, const int *gpu_ids, int ngpu_ids,
                  berth_client_error_t *err)
{
    if (!c || !lease || !*lease || !cores || ncores < 1 || (ngpu_ids > 0 && !gpu_ids))
        return client_errorf (err, BERTH_ERR_USAGE, "berth_placed: no client, no lease id "
                              "or no cores");
    struct proto_request req;
    proto_request_init (&req, PROTO_PLACED);
    req.placed.lease = (char *) lease;
    req.placed.cores = (int *) cores;
    req.placed.ncores = ncores;
    req.placed.gpu_ids = (int *) gpu_ids;
    req.placed.ngpu_ids = ngpu_ids < 0 ? -1 : ngpu_ids;
    json_t *reply = transact (c, &req, err);
    json_decref (reply);
    return reply ? 0 : -1;
}

berth_launch_t *berth_render (berth_client_t *c, const char *placement_json,
                              int ntasks, int cpus_per_task, long long memory_cap_mb,
                              const char *const *argv, berth_client_error_t *err)
{
    berth_error_t e = { 0 };
    json_error_t je;
    struct proto_request req;

    if (!c || !placement_json || !argv || !argv[0] || ntasks < 1 || cpus_per_task < 0) {
        client_errorf (err, BERTH_ERR_USAGE, "berth_render: needs a client, a placement, "
                       "argv, ntasks >= 1 and cpus_per_task >= 0");
        return NULL;
    }
    json_t *p = json_loads (placement_json, JSON_REJECT_DUPLICATES, &je);
    if (!p) {
        client_errorf (err, BERTH_ERR_USAGE, "berth_render: the placement is not JSON: %s",
                       je.text);
        return NULL;
    }
    struct placement pl = { 0 };
    int rc = proto_decode_placement (p, &pl, &e);
    json_decref (p);
    if (rc < 0) {
        client_errorf (err, BERTH_ERR_USAGE, "berth_render: %s", e.text);
        return NULL;
    }
    proto_request_init (&req, PROTO_RENDER);
    req.render.placement = pl;
    req.render.ntasks = ntasks;
    req.render.cpus_per_task = cpus_per_task;
    req.render.memory_cap = memory_cap_mb < 0 ? -1 : memory_cap_mb;
    req.render.argv = (char **) argv;
    json_t *reply = transact (c, &req, err);
    placement_free (&pl);
    if (!reply)
        return NULL;
    berth_launch_t *l = calloc (1, sizeof (*l));
    if (!l)
        client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
    else if (proto_decode_render_reply (reply, &l->l, &e) < 0) {
        client_error (err, &e, BERTH_ERR_PROTOCOL);
        free (l);
        l = NULL;
    }
    json_decref (reply);
    return l;
}

char *berth_resources (berth_client_t *c, const char *lease, berth_client_error_t *err)
{
    if (!c) {
        client_errorf (err, BERTH_ERR_USAGE, "berth_resources: no client");
        return NULL;
    }
    struct proto_request req;
    proto_request_init (&req, PROTO_RESOURCES);
    req.resources.lease = (char *) lease;
    json_t *reply = transact (c, &req, err);
    char *s = reply ? reply_body_text (reply, err) : NULL;
    json_decref (reply);
    return s;
}

char *berth_status (berth_client_t *c, berth_client_error_t *err)
{
    return berth_status_ex (c, 0, err);
}

/* berthd refuses a brief past its bound: the public constant must not be. */
_Static_assert (BERTH_STATUS_BRIEF_ROWS >= 1 && BERTH_STATUS_BRIEF_ROWS <= PROTO_STATUS_BRIEF_MAX,
                "BERTH_STATUS_BRIEF_ROWS out of berthd's range");

static char *status_of (berth_client_t *c, int flags, int pid,
                        berth_client_error_t *err)
{
    if (!c) {
        client_errorf (err, BERTH_ERR_USAGE, "berth_status: no client");
        return NULL;
    }
    struct proto_request req;
    proto_request_init (&req, PROTO_STATUS);
    req.status.time_left = (flags & BERTH_STATUS_TIME_LEFT) != 0;
    req.status.queue_only = (flags & BERTH_STATUS_QUEUE_ONLY) != 0;
    req.status.brief = (flags & BERTH_STATUS_BRIEF) ? BERTH_STATUS_BRIEF_ROWS : 0;
    req.status.pid = pid;
    json_t *reply = transact (c, &req, err);
    char *s = reply ? reply_body_text (reply, err) : NULL;
    json_decref (reply);
    return s;
}

char *berth_status_ex (berth_client_t *c, int flags, berth_client_error_t *err)
{
    return status_of (c, flags, 0, err);
}

char *berth_status_of_pid (berth_client_t *c, int pid, berth_client_error_t *err)
{
    if (pid <= 0) {
        client_errorf (err, BERTH_ERR_USAGE, "berth_status_of_pid: pid %d is "
                       "not a process id", pid);
        return NULL;
    }
    return status_of (c, 0, pid, err);
}

int berth_watch (berth_client_t *c, int history, berth_client_error_t *err)
{
    if (!c)
        return client_errorf (err, BERTH_ERR_USAGE, "berth_watch: no client");
    struct proto_request req;
    proto_request_init (&req, PROTO_WATCH);
    req.watch.history = history != 0;
    c->watching = true;      /* events may follow the reply at once */
    json_t *reply = transact (c, &req, err);
    if (!reply) {
        c->watching = json_array_size (c->events) > 0;
        return -1;
    }
    json_decref (reply);
    return 0;
}

int berth_next_event (berth_client_t *c, double timeout, berth_event_t **ev,
                      berth_client_error_t *err)
{
    if (!c || !ev)
        return client_errorf (err, BERTH_ERR_USAGE, "berth_next_event: no client or no ev");
    if (!c->watching)
        return client_errorf (err, BERTH_ERR_USAGE,
                              "berth_next_event: call berth_watch first");
    double deadline = timeout < 0 ? -1 : now_mono () + timeout;
    for (;;) {
        json_t *msg;
        if (json_array_size (c->events) > 0) {
            msg = json_incref (json_array_get (c->events, 0));
            json_array_remove (c->events, 0);
        } else {
            int rc = read_message (c, deadline, &msg, err);
            if (rc <= 0)
                return rc;
            if (!proto_is_event (msg)) {   /* a stray reply: nobody waits for it */
                json_decref (msg);
                continue;
            }
        }
        berth_event_t *e = event_from_json (msg, err);
        json_decref (msg);
        if (!e)
            return -1;
        *ev = e;
        return 1;
    }
}

/* Wait until berthd has closed this connection and removed its socket. */
static int wait_gone (berth_client_t *c, double wait, berth_client_error_t *err)
{
    double deadline = now_mono () + wait;
    bool closed = false;
    struct stat st;
    while (!closed) {
        json_t *msg;
        berth_client_error_t e;
        int rc = read_message (c, deadline, &msg, &e);
        if (rc > 0)
            json_decref (msg);
        else if (rc < 0 && strcmp (e.code, BERTH_ERR_CLOSED) && strcmp (e.code, BERTH_ERR_SYSTEM)
                 && strcmp (e.code, BERTH_ERR_PROTOCOL))
            return client_errorf (err, e.code, "%s", e.message);
        else if (rc < 0)
            closed = true;
        else
            return client_errorf (err, BERTH_ERR_TIMEOUT,
                                  "berthd at %s has not finished after %g s (leases "
                                  "still held? see berth status, or shut down with "
                                  "--force)", c->path, wait);
    }
    while (lstat (c->path, &st) == 0) {
        if (now_mono () >= deadline)
            return client_errorf (err, BERTH_ERR_TIMEOUT,
                                  "berthd closed the connection but its socket %s is "
                                  "still there after %g s", c->path, wait);
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep (&ts, NULL);
    }
    return 0;
}

int berth_shutdown (berth_client_t *c, enum berth_shutdown_mode mode, double wait,
                    berth_client_error_t *err)
{
    if (!c || (mode != BERTH_SHUTDOWN_DRAIN && mode != BERTH_SHUTDOWN_FORCE))
        return client_errorf (err, BERTH_ERR_USAGE, "berth_shutdown: no client or bad mode");
    struct proto_request req;
    proto_request_init (&req, PROTO_SHUTDOWN);
    req.shutdown.mode = mode == BERTH_SHUTDOWN_FORCE ? PROTO_SHUTDOWN_FORCE
                                                     : PROTO_SHUTDOWN_DRAIN;
    berth_client_error_t e;
    json_t *reply = transact (c, &req, &e);
    if (!reply && strcmp (e.code, BERTH_ERR_CLOSED))
        return client_errorf (err, e.code, "%s", e.message);
    /* Closed before the reply came: berthd went away, as asked. */
    json_decref (reply);
    return wait < 0 ? 0 : wait_gone (c, wait, err);
}
