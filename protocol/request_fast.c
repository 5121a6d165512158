/* SPDX-License-Identifier: MIT */
/* request_fast.h: acquire and release decoded from json_scan tokens. Each
 * check mirrors the jansson path's (codec_request.c: decode_acquire,
 * decode_lease_op; codec_check.c: the codec_get_* helpers) with the same bounds; where a value would be
 * refused there, or read by a rule not copied here, this declines instead,
 * so that the refusal is worded in one place. Everything is checked before
 * anything is allocated. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acquire_fields.h"
#include "codec_internal.h"
#include "json_scan.h"
#include "request_fast.h"

/* The members either op takes: op, id, lease (release) and the acquire's
 * (acquire_fields.h), each at index F_ACQ + PROTO_ACQ_##name. */
enum field { F_OP, F_ID, F_LEASE, F_ACQ, NFIELDS = F_ACQ + PROTO_ACQ_NFIELDS };

static const char *const fields[NFIELDS] = {
    "op", "id", "lease",
#define NAME(name, kind, holder, min, max, fast) #name,
    PROTO_ACQUIRE_FIELDS (NAME)
#undef NAME
};

/* What each op accepts (decode_lease_op's format; the acquire members the
 * fast lane takes). */
#define BIT(f) (UINT32_C (1) << (f))
#define RELEASE_FIELDS (BIT (F_OP) | BIT (F_ID) | BIT (F_LEASE))
#define TAKEN(name, kind, holder, min, max, fast) | (fast ? BIT (F_ACQ + PROTO_ACQ_##name) : 0)
#define ACQUIRE_FIELDS (BIT (F_OP) | BIT (F_ID) PROTO_ACQUIRE_FIELDS (TAKEN))
_Static_assert (NFIELDS <= 32, "the members' bits fit a uint32_t");

static const struct json_scan_token *tok (const struct json_scan *s, int i)
{
    return &s->tokens[i];
}

static size_t text_len (const struct json_scan *s, int i)
{
    return (size_t) (tok (s, i)->end - tok (s, i)->start);
}

/* Not given, or null (the jansson path's absent()). */
static bool absent (const struct json_scan *s, int v)
{
    return !json_scan_given (s, v);
}

/* get_int: 0 with *out set when absent or an integer in [min, max]; -1 to
 * decline. */
static int get_int (const struct json_scan *s, int v, long long min,
                    long long max, long long *out)
{
    return absent (s, v) ? 0 : json_scan_integer_in (s, v, min, max, out);
}

static int get_i (const struct json_scan *s, int v, int min, int max, int *out)
{
    long long x = *out;
    if (get_int (s, v, min, max, &x) < 0)
        return -1;
    *out = (int) x;
    return 0;
}

static int get_bool (const struct json_scan *s, int v, bool *out)
{
    if (absent (s, v))
        return 0;
    if (tok (s, v)->kind != JSON_SCAN_TRUE && tok (s, v)->kind != JSON_SCAN_FALSE)
        return -1;
    *out = tok (s, v)->kind == JSON_SCAN_TRUE;
    return 0;
}

/* get_seconds: an integer or a real from 0 to max, read as
 * jansson's json_number_value reads it (json_scan_real). */
static int get_seconds (const struct json_scan *s, int v, double max, double *out)
{
    double x;
    if (absent (s, v))
        return 0;
    if (json_scan_real (s, v, &x) < 0 || !(x >= 0 && x <= max))
        return -1;
    *out = x;
    return 0;
}

/* get_name's test (absent is for the caller): non-empty, at most
 * PROTO_MAX_NAME bytes (a scanned string has no control character). */
static bool name_ok (const struct json_scan *s, int v)
{
    return json_scan_string_in (s, v, 1, PROTO_MAX_NAME);
}

static int name_dup (const struct json_scan *s, int v, char **out)
{
    return absent (s, v) ? 0 : json_scan_strdup (s, v, false, out);
}

/* get_argv's test: a non-empty array of strings, the first non-empty. */
static bool argv_ok (const struct json_scan *s, int v)
{
    int n = tok (s, v)->size;
    if (tok (s, v)->kind != JSON_SCAN_ARRAY || n <= 0 || n > PROTO_MAX_ARGS)
        return false;
    for (int k = 0; k < n; k++) {     /* strings have no children: items are v+1.. */
        int i = v + 1 + k;
        if (i >= s->ntokens || tok (s, i)->kind != JSON_SCAN_STRING
            || (k == 0 && text_len (s, i) == 0))
            return false;
    }
    return true;
}

static int argv_dup (const struct json_scan *s, int v, char ***out)
{
    if (absent (s, v))
        return 0;
    int n = tok (s, v)->size;
    char **argv = calloc ((size_t) n + 1, sizeof (*argv));
    if (!argv)
        return -1;
    *out = argv;                      /* freed with the request on failure */
    for (int k = 0; k < n; k++)
        if (json_scan_strdup (s, v + 1 + k, false, &argv[k]) < 0)
            return -1;
    return 0;
}

/* usable_id: an integer, or a string of at most PROTO_MAX_NAME bytes. */
static json_t *id_json (const struct json_scan *s, int v)
{
    long long x;
    if (v < 0)
        return NULL;
    if (tok (s, v)->kind == JSON_SCAN_INTEGER)
        return json_scan_integer (s, v, &x) < 0 ? NULL : json_integer (x);
    /* json_scan strings are printable ASCII: no NUL to refuse here */
    if (tok (s, v)->kind == JSON_SCAN_STRING && text_len (s, v) <= PROTO_MAX_NAME)
        return json_stringn (s->line + tok (s, v)->start, text_len (s, v));
    return NULL;
}

static bool id_ok (const struct json_scan *s, int v)
{
    return v >= 0
           && (tok (s, v)->kind == JSON_SCAN_INTEGER
               || (tok (s, v)->kind == JSON_SCAN_STRING
                   && text_len (s, v) <= PROTO_MAX_NAME));
}

/* The checks of each kind of acquire member (acquire_fields.h), as the
 * strict decoder's (codec_request.c acq_*): 0, or -1 to decline. NAME and
 * ARGV are only checked here: they are copied once everything is. */
static int acq_COUNT (const struct json_scan *s, int v, int *dst, long long min,
                      long long max)
{
    return get_i (s, v, (int) min, (int) max, dst);
}

#define acq_INT acq_COUNT

static int acq_MB (const struct json_scan *s, int v, int64_t *dst, long long min,
                   long long max)
{
    long long x = *dst;
    if (get_int (s, v, min, max, &x) < 0)
        return -1;
    *dst = x;
    return 0;
}

static int acq_BOOL (const struct json_scan *s, int v, bool *dst, long long min,
                     long long max)
{
    (void) min, (void) max;
    return get_bool (s, v, dst);
}

static int acq_TRISTATE (const struct json_scan *s, int v, int *dst, long long min,
                         long long max)
{
    bool b = false;
    (void) min, (void) max;
    if (get_bool (s, v, &b) < 0)
        return -1;
    if (!absent (s, v))
        *dst = b;
    return 0;
}

static int acq_NAME (const struct json_scan *s, int v, char **dst, long long min,
                     long long max)
{
    (void) dst, (void) min, (void) max;
    return absent (s, v) || name_ok (s, v) ? 0 : -1;
}

static int acq_SECONDS (const struct json_scan *s, int v, double *dst, long long min,
                        long long max)
{
    (void) min;
    return get_seconds (s, v, (double) max, dst);
}

static int acq_ARGV (const struct json_scan *s, int v, char ***dst, long long min,
                     long long max)
{
    (void) dst, (void) min, (void) max;
    return absent (s, v) || argv_ok (s, v) ? 0 : -1;
}

/* The copies of what acq_NAME and acq_ARGV checked; the other kinds were
 * set by their checks. */
static int copy_NAME (const struct json_scan *s, int v, char **dst)
{
    return name_dup (s, v, dst);
}

static int copy_ARGV (const struct json_scan *s, int v, char ***dst)
{
    return argv_dup (s, v, dst);
}

#define copy_COUNT(s, v, dst) 0
#define copy_INT(s, v, dst) 0
#define copy_MB(s, v, dst) 0
#define copy_BOOL(s, v, dst) 0
#define copy_TRISTATE(s, v, dst) 0
#define copy_SECONDS(s, v, dst) 0

/* decode_acquire's checks, in its order (acquire_fields.h); -1 to decline. */
static int check_acquire (const struct json_scan *s, const int *at,
                          struct proto_acquire *acq)
{
    struct step_request *step = &acq->step;
#define CHECK(name, kind, holder, min, max, fast)                            \
    || (fast && acq_##kind (s, at[F_ACQ + PROTO_ACQ_##name], &holder->name, min, max) < 0)
    if (0 PROTO_ACQUIRE_FIELDS (CHECK))
        return -1;
#undef CHECK
    if (!acq->detach && (acq->ttl >= 0 || acq->owner_pid > 0))
        return -1;                    /* refused there: ttl/owner_pid need detach */
    return 0;
}

/* The copies, once check_acquire passed: 0, or -1 (out of memory). */
static int copy_acquire (const struct json_scan *s, const int *at,
                         struct proto_acquire *acq)
{
    struct step_request *step = &acq->step;
    (void) s, (void) at, (void) step;
#define COPY(name, kind, holder, min, max, fast)                             \
    || (fast && copy_##kind (s, at[F_ACQ + PROTO_ACQ_##name], &holder->name) < 0)
    return 0 PROTO_ACQUIRE_FIELDS (COPY) ? -1 : 0;
#undef COPY
}

int proto_decode_request_fast (const char *line, size_t len,
                               struct proto_request *req)
{
    struct json_scan s;
    int at[NFIELDS];
    uint32_t seen = 0;

    if (len > PROTO_MAX_LINE || json_scan_parse (&s, line, len) != 0
        || s.ntokens < 1 || s.tokens[0].kind != JSON_SCAN_OBJECT)
        return 1;
    if (json_scan_members (&s, 0, fields, NFIELDS, at))
        return 1;                     /* a member neither op takes */
    for (int f = 0; f < NFIELDS; f++)
        if (at[f] >= 0)
            seen |= BIT (f);

    enum proto_op op;
    int v = at[F_OP];
    if (v < 0 || tok (&s, v)->kind != JSON_SCAN_STRING)
        return 1;
    if (json_scan_is (&s, v, codec_ops[PROTO_ACQUIRE].name))
        op = PROTO_ACQUIRE;
    else if (json_scan_is (&s, v, codec_ops[PROTO_RELEASE].name))
        op = PROTO_RELEASE;
    else
        return 1;
    if (seen & ~(op == PROTO_ACQUIRE ? ACQUIRE_FIELDS : RELEASE_FIELDS))
        return 1;
    if (!id_ok (&s, at[F_ID]))
        return 1;

    struct proto_request r;
    proto_request_init (&r, op);
    if (op == PROTO_ACQUIRE) {
        if (check_acquire (&s, at, &r.acquire) < 0)
            return 1;                 /* nothing allocated yet */
    } else if (absent (&s, at[F_LEASE]) || !name_ok (&s, at[F_LEASE]))
        return 1;

    /* Checked: now the copies. */
    int rc = (r.id = id_json (&s, at[F_ID])) ? 0 : -1;
    if (rc == 0 && op == PROTO_ACQUIRE)
        rc = copy_acquire (&s, at, &r.acquire);
    else if (rc == 0)
        rc = name_dup (&s, at[F_LEASE], &r.release.lease);
    if (rc < 0) {
        proto_request_free (&r);
        return 1;
    }
    *req = r;
    return 0;
}

/* ---- comparison, for the differential tests --------------------------- */

static bool str_same (const char *a, const char *b)
{
    return a == b || (a && b && !strcmp (a, b));
}

static bool strv_same (char *const *a, char *const *b)
{
    if (!a || !b)
        return a == b;
    for (; *a && *b; a++, b++)
        if (strcmp (*a, *b))
            return false;
    return !*a && !*b;
}

static bool real_same (double a, double b)
{
    return !memcmp (&a, &b, sizeof (a));
}

bool proto_request_same (const struct proto_request *a,
                         const struct proto_request *b, char *why, size_t size)
{
    const char *diff = NULL;
    const struct proto_acquire *x = &a->acquire, *y = &b->acquire;
    const struct step_request *p = &x->step, *q = &y->step;

    if (a->op != b->op)
        diff = "op";
    else if (!a->id || !b->id || json_typeof (a->id) != json_typeof (b->id)
             || !json_equal (a->id, b->id))
        diff = "id";
    else if (a->op == PROTO_RELEASE && !str_same (a->release.lease, b->release.lease))
        diff = "lease";
    else if (a->op != PROTO_ACQUIRE)
        diff = a->op == PROTO_RELEASE ? NULL : "op (not acquire or release)";
#define SAME(field, name) else if (p->field != q->field) diff = name;
    SAME (ntasks, "ntasks")
    SAME (min_tasks, "min_tasks")
    SAME (cpus_per_task, "cpus_per_task")
    SAME (min_cpus_per_task, "min_cpus_per_task")
    SAME (cores, "cores")
    SAME (min_cores, "min_cores")
    SAME (gpus, "gpus")
    SAME (min_gpus, "min_gpus")
    SAME (gpus_per_task, "gpus_per_task")
    SAME (min_gpus_per_task, "min_gpus_per_task")
    SAME (memory, "memory")
    SAME (min_memory, "min_memory")
    SAME (may_span_nodes, "may_span_nodes")
    SAME (local, "local")
    SAME (priority, "priority")
#undef SAME
    else if (!real_same (p->timeout, q->timeout))
        diff = "timeout";
    else if (!str_same (p->label, q->label))
        diff = "label";
    else if (!strv_same (p->argv, q->argv))
        diff = "argv";
    else if (x->wait != y->wait)
        diff = "wait";
    else if (x->detach != y->detach)
        diff = "detach";
    else if (!real_same (x->ttl, y->ttl))
        diff = "ttl";
    else if (x->owner_pid != y->owner_pid)
        diff = "owner_pid";
    else if (x->env != y->env)
        diff = "env";
    else if (!real_same (x->duration, y->duration))
        diff = "duration";
    if (diff && why && size)
        snprintf (why, size, "%s differs", diff);
    return !diff;
}
