/* SPDX-License-Identifier: MIT */
/* Requests decoded strictly, as berthd reads them: every refusal names the
 * field; the fast lane (request_fast.c) is tried first. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acquire_fields.h"
#include "codec_internal.h"
#include "request_fast.h"

void proto_request_init (struct proto_request *req, enum proto_op op)
{
    memset (req, 0, sizeof (*req));
    req->op = op;
    switch (op) {
    case PROTO_ACQUIRE:
        step_request_init (&req->acquire.step);
        req->acquire.wait = true;
        req->acquire.ttl = -1;
        req->acquire.duration = -1;
        break;
    case PROTO_RENDER:
        req->render.ntasks = 1;
        req->render.memory_cap = -1;
        break;
    case PROTO_PLACED:
        req->placed.ngpu_ids = -1;
        break;
    default:
        break;
    }
}

void proto_request_free (struct proto_request *req)
{
    if (!req)
        return;
    switch (req->op) {
    case PROTO_ACQUIRE:
        step_request_free (&req->acquire.step);
        break;
    case PROTO_RELEASE:
        free (req->release.lease);
        proto_outcome_destroy (req->release.outcome);
        break;
    case PROTO_RECLAIM:
        free (req->reclaim.lease);
        break;
    case PROTO_PLACED:
        free (req->placed.lease);
        free (req->placed.cores);
        free (req->placed.gpu_ids);
        break;
    case PROTO_RENDER:
        placement_free (&req->render.placement);
        codec_strv_free (req->render.argv);
        break;
    case PROTO_RESOURCES:
        free (req->resources.lease);
        break;
    default:
        break;
    }
    json_decref (req->id);
    proto_request_init (req, req->op);
}

/* json_unpack_ex for a request decoder's strict format: a flat object of
 * "s:o" (required) and "s?o" (optional) members ending in "!}", so that a
 * member the format does not name is refused. Jansson checks that by
 * building a table of every key the format names, which was most of what
 * decoding a request cost. The same format is unpacked leniently instead
 * (every optional output starts NULL), and the object has no other member
 * exactly when its size equals the outputs found; only a request that would
 * be refused is unpacked strictly again, for jansson's own message.
 *
 * unpack_named is the lenient pass: 0 when fmt named every member of o, 1
 * when o has others, -1 when it failed (je says why). */
static int unpack_named (json_t *o, json_error_t *je, const char *fmt,
                         va_list ap)
{
    char lenient[256];
    size_t n = strlen (fmt), pairs = 0;
    if (n < 3 || n >= sizeof (lenient) || strcmp (fmt + n - 2, "!}")
        || strspn (fmt, "{}so:?! ") != n)
        return 1;             /* not a flat format: let jansson judge */
    for (size_t i = 0; i + 1 < n; i++)
        if (fmt[i] == 's' && (fmt[i + 1] == ':' || fmt[i + 1] == '?'))
            pairs++;
    memcpy (lenient, fmt, n - 2);
    memcpy (lenient + n - 2, "}", 2);
    va_list walk;
    va_copy (walk, ap);
    int rc = json_vunpack_ex (o, je, 0, lenient, ap);
    size_t found = 0;
    for (size_t i = 0; rc == 0 && i < pairs; i++) {
        (void) va_arg (walk, const char *);
        json_t **out = va_arg (walk, json_t **);
        found += *out != NULL;
    }
    va_end (walk);
    if (rc < 0)
        return -1;
    return found == json_object_size (o) ? 0 : 1;
}

static int unpack_request (json_t *o, json_error_t *je, const char *fmt, ...)
{
    va_list ap, again;
    va_start (ap, fmt);
    va_copy (again, ap);
    int rc = unpack_named (o, je, fmt, ap);
    if (rc > 0)               /* refused, with jansson's message */
        rc = json_vunpack_ex (o, je, 0, fmt, again) < 0 ? -1 : 0;
    va_end (again);
    va_end (ap);
    return rc;
}

/* unpack_named for a format that names only some of an op's members: 0
 * when o has no others (then it is decoded), else 1 (and the op's full
 * format is to be unpacked). */
static int unpack_if_only (json_t *o, const char *fmt, ...)
{
    json_error_t je;
    va_list ap;
    va_start (ap, fmt);
    int rc = unpack_named (o, &je, fmt, ap);
    va_end (ap);
    return rc == 0 ? 0 : 1;
}

int codec_decode_hello (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *version = NULL, *pipeline = NULL;
    json_error_t je;
    if (unpack_request (o, &je, "{s:o s:o s?o s?o !}", "op", &skip, "id", &skip,
                        "version", &version, "pipeline", &pipeline) < 0)
        return codec_unpack_error (c, &je);
    return codec_get_i (c, "version", version, 1, INT_MAX, &r->hello.version) < 0
           || codec_get_bool (c, "pipeline", pipeline, &r->hello.pipeline) < 0
           ? -1 : 0;
}

/* The checks of each kind of acquire member (acquire_fields.h): 0, or -1
 * with c->err naming the field. */
static int acq_COUNT (const struct codec_ctx *c, const char *field, const json_t *v,
                      int *dst, json_int_t min, json_int_t max)
{
    return codec_get_i (c, field, v, (int) min, (int) max, dst);
}

#define acq_INT acq_COUNT

static int acq_MB (const struct codec_ctx *c, const char *field, const json_t *v,
                   int64_t *dst, json_int_t min, json_int_t max)
{
    json_int_t x = *dst;
    if (codec_get_int (c, field, v, min, max, &x) < 0)
        return -1;
    *dst = x;
    return 0;
}

static int acq_BOOL (const struct codec_ctx *c, const char *field, const json_t *v,
                     bool *dst, json_int_t min, json_int_t max)
{
    (void) min, (void) max;
    return codec_get_bool (c, field, v, dst);
}

static int acq_TRISTATE (const struct codec_ctx *c, const char *field, const json_t *v,
                         int *dst, json_int_t min, json_int_t max)
{
    bool b = false;
    (void) min, (void) max;
    if (codec_get_bool (c, field, v, &b) < 0)
        return -1;
    if (!codec_absent (v))
        *dst = b;
    return 0;
}

static int acq_NAME (const struct codec_ctx *c, const char *field, const json_t *v,
                     char **dst, json_int_t min, json_int_t max)
{
    (void) min, (void) max;     /* get_name's own: 1 to PROTO_MAX_NAME bytes */
    return codec_get_name (c, field, v, dst);
}

static int acq_SECONDS (const struct codec_ctx *c, const char *field, const json_t *v,
                        double *dst, json_int_t min, json_int_t max)
{
    (void) min;
    return codec_get_seconds (c, field, v, (double) max, dst);
}

static int acq_ARGV (const struct codec_ctx *c, const char *field, const json_t *v,
                     char ***dst, json_int_t min, json_int_t max)
{
    (void) min, (void) max;     /* get_argv's own: 1 to PROTO_MAX_ARGS items */
    return codec_get_argv (c, field, v, dst);
}

int codec_decode_acquire (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *v[PROTO_ACQ_NFIELDS] = { NULL };
    json_error_t je;
    struct proto_acquire *acq = &r->acquire;
    struct step_request *step = &acq->step;

    /* Jansson's unpack costs per member the format names, present or not;
     * most acquires give a few common ones, which a short format decodes
     * (a subset of the full one: the members it leaves out stay NULL,
     * absent, as the full format would leave them). */
#define SHORT_FMT(name) " s?o"
#define SHORT_ARG(name) , #name, &v[PROTO_ACQ_##name]
#define FULL_FMT(name, kind, holder, min, max, fast) " s?o"
#define FULL_ARG(name, kind, holder, min, max, fast) , #name, &v[PROTO_ACQ_##name]
    if (unpack_if_only (o, "{s:o s:o" PROTO_ACQUIRE_COMMON (SHORT_FMT) " !}",
                        "op", &skip, "id", &skip PROTO_ACQUIRE_COMMON (SHORT_ARG)) != 0
        && unpack_request (o, &je, "{s:o s:o" PROTO_ACQUIRE_FIELDS (FULL_FMT) " !}",
                           "op", &skip, "id", &skip PROTO_ACQUIRE_FIELDS (FULL_ARG)) < 0)
        return codec_unpack_error (c, &je);
#undef SHORT_FMT
#undef SHORT_ARG
#undef FULL_FMT
#undef FULL_ARG

#define CHECK(name, kind, holder, min, max, fast)                            \
    || acq_##kind (c, #name, v[PROTO_ACQ_##name], &holder->name, min, max) < 0
    if (0 PROTO_ACQUIRE_FIELDS (CHECK))
        return -1;
#undef CHECK
    if (!acq->detach && (acq->ttl >= 0 || acq->owner_pid > 0))
        return errprintf_code (c->err, c->code,
                               "%s: field '%s' applies to detached leases only; add \"detach\": true",
                               c->where, acq->ttl >= 0 ? "ttl" : "owner_pid");
    return 0;
}

int codec_decode_render (const struct codec_ctx *c, json_t *o, struct proto_request *req)
{
    struct proto_render *r = &req->render;
    json_t *skip, *placement, *ntasks = NULL, *cpt = NULL, *cap = NULL, *argv;
    json_error_t je;
    json_int_t cap_v = r->memory_cap;

    if (unpack_request (o, &je, "{s:o s:o s:o s?o s?o s?o s:o !}", "op", &skip,
                        "id", &skip, "placement", &placement, "ntasks", &ntasks,
                        "cpus_per_task", &cpt, "memory_cap", &cap, "argv", &argv) < 0)
        return codec_unpack_error (c, &je);
    if (codec_need (c, "placement", placement, "an object") < 0
        || codec_need (c, "argv", argv, "a non-empty array of strings") < 0
        || codec_decode_placement (c, placement, true, &r->placement) < 0
        || codec_get_i (c, "ntasks", ntasks, 1, PROTO_MAX_COUNT, &r->ntasks) < 0
        || codec_get_i (c, "cpus_per_task", cpt, 1, PROTO_MAX_COUNT, &r->cpus_per_task) < 0
        || codec_get_int (c, "memory_cap", cap, 1, PROTO_MAX_MEMORY_MB, &cap_v) < 0
        || codec_get_argv (c, "argv", argv, &r->argv) < 0)
        return -1;
    r->memory_cap = cap_v;
    return 0;
}

/* release, reclaim, resources: an op with one lease id, required or not. */
static int decode_lease_op (const struct codec_ctx *c, json_t *o, bool required,
                            char **lease)
{
    json_t *skip, *v = NULL;
    json_error_t je;
    if (unpack_request (o, &je, required ? "{s:o s:o s:o !}" : "{s:o s:o s?o !}",
                        "op", &skip, "id", &skip, "lease", &v) < 0)
        return codec_unpack_error (c, &je);
    if (required && codec_need (c, "lease", v, "a lease id") < 0)
        return -1;
    return codec_get_name (c, "lease", v, lease);
}

int codec_decode_release (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *v = NULL, *outcome = NULL;
    json_error_t je;
    if (unpack_request (o, &je, "{s:o s:o s:o s?o !}", "op", &skip, "id", &skip,
                        "lease", &v, "outcome", &outcome) < 0)
        return codec_unpack_error (c, &je);
    if (codec_need (c, "lease", v, "a lease id") < 0
        || codec_get_name (c, "lease", v, &r->release.lease) < 0)
        return -1;
    return proto_outcome_decode (outcome, true, c->where, c->code,
                                 &r->release.outcome, c->err);
}

int codec_decode_reclaim (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    return decode_lease_op (c, o, true, &r->reclaim.lease);
}

int codec_decode_resources (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    return decode_lease_op (c, o, false, &r->resources.lease);
}

int codec_decode_placed (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *v = NULL, *cores = NULL, *gpus = NULL;
    json_error_t je;
    if (unpack_request (o, &je, "{s:o s:o s:o s:o s?o !}", "op", &skip, "id", &skip,
                        "lease", &v, "cores", &cores, "gpu_ids", &gpus) < 0)
        return codec_unpack_error (c, &je);
    if (codec_get_name (c, "lease", v, &r->placed.lease) < 0
        || codec_get_ids (c, "cores", cores, &r->placed.cores, &r->placed.ncores) < 0
        || (!codec_absent (gpus) && codec_get_ids (c, "gpu_ids", gpus, &r->placed.gpu_ids,
                                                   &r->placed.ngpu_ids) < 0))
        return -1;
    if (r->placed.ncores < 1)
        return codec_bad (c, "cores", "a non-empty array of ids", cores);
    return 0;
}

int codec_decode_status (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *v = NULL, *q = NULL, *pid = NULL, *brief = NULL;
    json_error_t je;
    if (unpack_request (o, &je, "{s:o s:o s?o s?o s?o s?o !}", "op", &skip,
                        "id", &skip, "time_left", &v, "queue_only", &q, "pid",
                        &pid, "brief", &brief) < 0)
        return codec_unpack_error (c, &je);
    if (codec_get_bool (c, "time_left", v, &r->status.time_left) < 0
        || codec_get_i (c, "pid", pid, 1, INT_MAX, &r->status.pid) < 0
        || codec_get_i (c, "brief", brief, 1, PROTO_STATUS_BRIEF_MAX,
                        &r->status.brief) < 0
        || codec_get_bool (c, "queue_only", q, &r->status.queue_only) < 0)
        return -1;
    if (r->status.brief && (r->status.queue_only || r->status.pid))
        return errprintf_code (c->err, c->code, "%s: field 'brief' is a view "
                               "of its own; drop '%s'", c->where,
                               r->status.pid ? "pid" : "queue_only");
    return 0;
}

int codec_decode_watch (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *v = NULL;
    json_error_t je;
    if (unpack_request (o, &je, "{s:o s:o s?o !}", "op", &skip, "id", &skip,
                        "history", &v) < 0)
        return codec_unpack_error (c, &je);
    return codec_get_bool (c, "history", v, &r->watch.history);
}

int codec_decode_shutdown (const struct codec_ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *v = NULL;
    json_error_t je;
    if (unpack_request (o, &je, "{s:o s:o s?o !}", "op", &skip, "id", &skip,
                        "mode", &v) < 0)
        return codec_unpack_error (c, &je);
    if (codec_absent (v) || (json_is_string (v) && !strcmp (json_string_value (v), "drain")))
        r->shutdown.mode = PROTO_SHUTDOWN_DRAIN;
    else if (json_is_string (v) && !strcmp (json_string_value (v), "force"))
        r->shutdown.mode = PROTO_SHUTDOWN_FORCE;
    else
        return codec_bad (c, "mode", "\"drain\" or \"force\"", v);
    return 0;
}

/* The id may be echoed only when it is a short integer or string. */
static bool usable_id (const json_t *id)
{
    return json_is_integer (id)
           || (json_is_string (id) && json_string_length (id) <= PROTO_MAX_NAME);
}

int proto_decode_request (const char *line, size_t len,
                          struct proto_request *req, berth_error_t *err)
{
    /* acquire and release without a jansson tree when they are plain */
    if (proto_decode_request_fast (line, len, req) == 0)
        return 0;
    return proto_decode_request_jansson (line, len, req, err);
}

int proto_decode_request_jansson (const char *line, size_t len,
                                  struct proto_request *req, berth_error_t *err)
{
    json_error_t je;
    json_t *o, *id, *op;
    char got[64], ops[160];
    struct codec_ctx c = { "request", PROTO_ERR_INVALID_REQUEST, err };
    struct proto_request r;

    proto_request_init (req, PROTO_STATUS);
    if (len > PROTO_MAX_LINE)
        return errprintf_code (err, PROTO_ERR_TOO_LARGE,
                               "request of %zu bytes is over the limit of %d bytes per line",
                               len, PROTO_MAX_LINE);
    /* DECODE_ANY: a bare scalar is refused below with a better message. */
    if (!(o = json_loadb (line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je)))
        return errprintf_code (err, c.code,
                               "request is not valid JSON: %s (at byte %d); send one JSON object per line",
                               je.text, je.position);
    if (!json_is_object (o)) {
        codec_describe (o, got, sizeof (got));
        json_decref (o);
        return errprintf_code (err, c.code, "request must be a JSON object, got %s", got);
    }
    id = json_object_get (o, "id");
    op = json_object_get (o, "op");
    if (!id) {
        json_decref (o);
        return errprintf_code (err, c.code,
                               "request has no 'id' (an integer or string echoed in the reply)");
    }
    if (!usable_id (id)) {
        codec_bad (&c, "id", "an integer or a string of at most 255 bytes", id);
        json_decref (o);
        return -1;
    }
    req->id = json_incref (id);
    int k = json_is_string (op) ? codec_op_find (json_string_value (op)) : -1;
    if (k < 0) {
        codec_op_list (ops, sizeof (ops));
        if (json_is_string (op)) {
            codec_describe (op, got, sizeof (got));
            errprintf_code (err, c.code, "unknown op %s; known ops: %s", got, ops);
        }
        else if (op) {
            char expect[sizeof (ops) + 32];
            snprintf (expect, sizeof (expect), "a string, one of %s", ops);
            codec_bad (&c, "op", expect, op);
        }
        else
            errprintf_code (err, c.code, "request has no 'op' (one of %s)", ops);
        json_decref (o);
        return -1;
    }
    proto_request_init (&r, (enum proto_op) k);
    c.where = codec_ops[k].name;
    if (codec_ops[k].decode (&c, o, &r) < 0) {
        proto_request_free (&r);
        json_decref (o);
        return -1;
    }
    r.id = req->id;
    *req = r;
    json_decref (o);
    return 0;
}
