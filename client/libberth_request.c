/* SPDX-License-Identifier: MIT */
/* libberth: an acquire request built field by field, each field checked
 * against the ranges of PROTOCOL.md so that a mistake is named here rather
 * than by berthd; and the acquire and release lines written directly,
 * without building a jansson object, for speed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acquire_fields.h"
#include "libberth_private.h"
#include "text.h"

enum kind { K_INT, K_INT64, K_BOOL, K_TRI, K_STRING, K_SECONDS };

struct field {
    const char *name;
    enum kind kind;
    long long min, max;     /* K_INT, K_INT64 */
    size_t offset;          /* into struct proto_acquire */
};

#define STEP(m) (offsetof (struct proto_acquire, step) + offsetof (struct step_request, m))
#define ACQ(m) offsetof (struct proto_acquire, m)
#define COUNT(n, m, lo) { n, K_INT, lo, PROTO_MAX_COUNT, STEP (m) }

static const struct field fields[] = {
    COUNT ("ntasks", ntasks, 1),
    COUNT ("min_tasks", min_tasks, 1),
    COUNT ("cpus_per_task", cpus_per_task, 1),
    COUNT ("min_cpus_per_task", min_cpus_per_task, 1),
    COUNT ("cores", cores, 1),
    COUNT ("min_cores", min_cores, 1),
    COUNT ("gpus", gpus, 0),
    COUNT ("min_gpus", min_gpus, 0),
    COUNT ("gpus_per_task", gpus_per_task, 0),
    COUNT ("min_gpus_per_task", min_gpus_per_task, 0),
    { "memory", K_INT64, 1, PROTO_MAX_MEMORY_MB, STEP (memory) },
    { "min_memory", K_INT64, 1, PROTO_MAX_MEMORY_MB, STEP (min_memory) },
    { "priority", K_INT, -PROTO_MAX_PRIORITY, PROTO_MAX_PRIORITY, STEP (priority) },
    { "owner_pid", K_INT, 1, PROTO_MAX_PID, ACQ (owner_pid) },
    { "may_span_nodes", K_TRI, 0, 1, STEP (may_span_nodes) },
    { "local", K_BOOL, 0, 1, STEP (local) },
    { "wait", K_BOOL, 0, 1, ACQ (wait) },
    { "detach", K_BOOL, 0, 1, ACQ (detach) },
    { "env", K_BOOL, 0, 1, ACQ (env) },
    { "label", K_STRING, 1, PROTO_MAX_NAME, STEP (label) },
    { "timeout", K_SECONDS, 0, 0, STEP (timeout) },
    { "ttl", K_SECONDS, 0, 0, ACQ (ttl) },
    { "duration", K_SECONDS, 0, 0, ACQ (duration) },
};

static const char *const kind_names[] = {
    [K_INT] = "an integer", [K_INT64] = "an integer", [K_BOOL] = "a boolean",
    [K_TRI] = "a boolean", [K_STRING] = "a string", [K_SECONDS] = "a number of seconds",
};

berth_request_t *berth_request_new (void)
{
    berth_request_t *r = calloc (1, sizeof (*r));
    if (r) {
        struct proto_request req;
        proto_request_init (&req, PROTO_ACQUIRE);
        r->a = req.acquire;
    }
    return r;
}

void berth_request_free (berth_request_t *r)
{
    if (!r)
        return;
    free (r->a.step.label);
    for (size_t i = 0; r->a.step.argv && r->a.step.argv[i]; i++)
        free (r->a.step.argv[i]);
    free (r->a.step.argv);
    free (r);
}

/* The field named, when it has one of the kinds wanted (a bit mask). */
static const struct field *find (const berth_request_t *r, const char *name,
                                 unsigned kinds, berth_client_error_t *err)
{
    if (!r || !name) {
        client_errorf (err, BERTH_ERR_USAGE, "berth_request_set: no request or no field");
        return NULL;
    }
    for (size_t i = 0; i < sizeof (fields) / sizeof (fields[0]); i++) {
        if (strcmp (fields[i].name, name))
            continue;
        if (!(kinds & (1u << fields[i].kind))) {
            client_errorf (err, BERTH_ERR_INVALID_REQUEST,
                           "request field '%s' takes %s", name, kind_names[fields[i].kind]);
            return NULL;
        }
        return &fields[i];
    }
    client_errorf (err, BERTH_ERR_INVALID_REQUEST,
                   "unknown request field '%s'; the fields are those of acquire in "
                   "PROTOCOL.md (ntasks, cpus_per_task, cores, gpus, memory, label, ...)",
                   name);
    return NULL;
}

static void *at (berth_request_t *r, const struct field *f)
{
    return (char *) &r->a + f->offset;
}

int berth_request_set_int (berth_request_t *r, const char *field, long long value,
                           berth_client_error_t *err)
{
    const struct field *f = find (r, field, 1u << K_INT | 1u << K_INT64, err);
    if (!f)
        return -1;
    if (value < f->min || value > f->max)
        return client_errorf (err, BERTH_ERR_INVALID_REQUEST,
                              "request field '%s' must be from %lld to %lld, got %lld",
                              field, f->min, f->max, value);
    if (f->kind == K_INT)
        *(int *) at (r, f) = (int) value;
    else
        *(int64_t *) at (r, f) = value;
    return 0;
}

int berth_request_set_bool (berth_request_t *r, const char *field, int value,
                            berth_client_error_t *err)
{
    const struct field *f = find (r, field, 1u << K_BOOL | 1u << K_TRI, err);
    if (!f)
        return -1;
    if (f->kind == K_TRI)
        *(int *) at (r, f) = value != 0;
    else
        *(bool *) at (r, f) = value != 0;
    return 0;
}

int berth_request_set_string (berth_request_t *r, const char *field, const char *value,
                              berth_client_error_t *err)
{
    const struct field *f = find (r, field, 1u << K_STRING, err);
    if (!f)
        return -1;
    size_t n = value ? strlen (value) : 0;
    if (n < (size_t) f->min || n > (size_t) f->max)
        return client_errorf (err, BERTH_ERR_INVALID_REQUEST,
                              "request field '%s' must be %lld to %lld bytes, got %zu",
                              field, f->min, f->max, n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char) value[i] < 0x20 || value[i] == 0x7f)
            return client_errorf (err, BERTH_ERR_INVALID_REQUEST,
                                  "request field '%s' may not hold control characters "
                                  "(byte %zu of \"%s\")", field, i, value);
    char *copy = strdup (value);
    if (!copy)
        return client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
    char **slot = at (r, f);
    free (*slot);
    *slot = copy;
    return 0;
}

int berth_request_set_seconds (berth_request_t *r, const char *field, double seconds,
                               berth_client_error_t *err)
{
    const struct field *f = find (r, field, 1u << K_SECONDS, err);
    if (!f)
        return -1;
    if (!isfinite (seconds) || seconds < 0 || seconds > PROTO_MAX_SECONDS)
        return client_errorf (err, BERTH_ERR_INVALID_REQUEST,
                              "request field '%s' must be from 0 to %.0f seconds, got %g",
                              field, PROTO_MAX_SECONDS, seconds);
    *(double *) at (r, f) = seconds;
    return 0;
}

int berth_request_set_argv (berth_request_t *r, const char *const *argv,
                            berth_client_error_t *err)
{
    size_t n = 0;
    if (!r)
        return client_errorf (err, BERTH_ERR_USAGE, "berth_request_set_argv: no request");
    while (argv && argv[n])
        n++;
    if (n == 0 || !argv[0][0])
        return client_errorf (err, BERTH_ERR_INVALID_REQUEST,
                              "argv must name a program (a non-empty first item)");
    if (n > PROTO_MAX_ARGS)
        return client_errorf (err, BERTH_ERR_INVALID_REQUEST,
                              "argv has %zu items, over the limit of %d", n,
                              PROTO_MAX_ARGS);
    char **v = calloc (n + 1, sizeof (*v));
    for (size_t i = 0; v && i < n; i++)
        if (!(v[i] = strdup (argv[i]))) {
            while (i > 0)
                free (v[--i]);
            free (v);
            v = NULL;
        }
    if (!v)
        return client_errorf (err, BERTH_ERR_SYSTEM, "out of memory");
    for (size_t i = 0; r->a.step.argv && r->a.step.argv[i]; i++)
        free (r->a.step.argv[i]);
    free (r->a.step.argv);
    r->a.step.argv = v;
    return 0;
}

/* ---- the request line, written directly ------------------------------- */

/* "key": with the comma before it (every member here follows "op"). */
static void put_key (struct text_buf *b, const char *key)
{
    text_buf_put (b, ",\"", 2);
    text_buf_puts (b, key);
    text_buf_put (b, "\":", 2);
}

static void put_integer (struct text_buf *b, const char *key, long long v)
{
    put_key (b, key);
    text_buf_int (b, v);
}

/* A string jansson writes as it is: printable ASCII without '"' or '\'. */
static void put_string (struct text_buf *b, const char *v)
{
    for (const char *p = v; *p && !b->bad; p++)
        if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\')
            b->bad = true;      /* escapes and UTF-8: the codec writes those */
    text_buf_put (b, "\"", 1);
    text_buf_puts (b, v);
    text_buf_put (b, "\"", 1);
}

/* A real as jansson writes it (its own precision and ".0" rules). */
static void put_real (struct text_buf *b, const char *key, double v)
{
    json_t *r = json_real (v);
    char *s = r ? json_dumps (r, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    json_decref (r);
    if (!s)
        b->bad = true;
    put_key (b, key);
    if (s)
        text_buf_puts (b, s);
    free (s);
}

/* Each kind of acquire member (acquire_fields.h) under key, as the codec's
 * enc_<kind> (codec_request_encode.c) has jansson write it. */
static void put_COUNT (struct text_buf *b, const char *key, const int *v)
{
    put_integer (b, key, *v);
}

#define put_INT put_COUNT

static void put_MB (struct text_buf *b, const char *key, const int64_t *v)
{
    put_integer (b, key, *v);
}

static void put_BOOL (struct text_buf *b, const char *key, const bool *v)
{
    put_key (b, key);
    text_buf_puts (b, *v ? "true" : "false");
}

static void put_TRISTATE (struct text_buf *b, const char *key, const int *v)
{
    put_key (b, key);
    text_buf_puts (b, *v ? "true" : "false");
}

static void put_NAME (struct text_buf *b, const char *key, char *const *v)
{
    put_key (b, key);
    put_string (b, *v);
}

static void put_SECONDS (struct text_buf *b, const char *key, const double *v)
{
    put_real (b, key, *v);
}

static void put_ARGV (struct text_buf *b, const char *key, char **const *v)
{
    put_key (b, key);
    text_buf_put (b, "[", 1);
    for (size_t i = 0; (*v)[i]; i++) {
        if (i)
            text_buf_put (b, ",", 1);
        put_string (b, (*v)[i]);
    }
    text_buf_put (b, "]", 1);
}

/* codec_encode_acquire's members, from the same list by the same test
 * (proto_acq_given_<kind>), so that the two lines are the same bytes. */
static void put_acquire (struct text_buf *b, const struct proto_acquire *acq)
{
    struct proto_request fresh;
    proto_request_init (&fresh, PROTO_ACQUIRE);
    const struct proto_acquire *dflt_acq = &fresh.acquire;
    const struct step_request *step = &acq->step, *dflt_step = &dflt_acq->step;
#define PUT(name, kind, holder, min, max, fast)                              \
    if (proto_acq_given_##kind (&holder->name, &dflt_##holder->name, min))   \
        put_##kind (b, #name, &holder->name);
    PROTO_ACQUIRE_FIELDS (PUT)
#undef PUT
}

char *request_line_fast (const struct proto_request *req, long long id)
{
    struct text_buf b = { 0 };
    if (req->op == PROTO_ACQUIRE)
        text_buf_puts (&b, "{\"op\":\"acquire\"");
    else if (req->op == PROTO_RELEASE && req->release.lease
             && !req->release.outcome)   /* with one: the codec's encoder */
        text_buf_puts (&b, "{\"op\":\"release\"");
    else
        b.bad = true;
    put_integer (&b, "id", id);
    if (req->op == PROTO_ACQUIRE)
        put_acquire (&b, &req->acquire);
    else {
        put_key (&b, "lease");
        if (!b.bad)
            put_string (&b, req->release.lease);
    }
    text_buf_put (&b, "}\n", 2);
    if (b.bad) {
        free (b.s);
        return NULL;
    }
    return b.s;
}
