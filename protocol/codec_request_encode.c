/* SPDX-License-Identifier: MIT */
/* Requests encoded, as clients send them. */
#include "acquire_fields.h"
#include "codec_internal.h"

/* Each kind of acquire member (acquire_fields.h) as a JSON value under key. */
static int enc_COUNT (json_t *o, const char *key, const int *v)
{
    return codec_set_new (o, key, json_integer (*v));
}

#define enc_INT enc_COUNT

static int enc_MB (json_t *o, const char *key, const int64_t *v)
{
    return codec_set_new (o, key, json_integer (*v));
}

static int enc_BOOL (json_t *o, const char *key, const bool *v)
{
    return codec_set_new (o, key, json_boolean (*v));
}

static int enc_TRISTATE (json_t *o, const char *key, const int *v)
{
    return codec_set_new (o, key, json_boolean (*v));
}

static int enc_NAME (json_t *o, const char *key, char *const *v)
{
    return codec_set_new (o, key, json_string (*v));
}

static int enc_SECONDS (json_t *o, const char *key, const double *v)
{
    return codec_set_new (o, key, json_real (*v));
}

static int enc_ARGV (json_t *o, const char *key, char **const *v)
{
    return codec_set_new (o, key, codec_strv_json (*v));
}

/* The members given, in the list's order (libberth's direct line,
 * request_line_fast, writes the same bytes). */
int codec_encode_acquire (json_t *o, const struct proto_request *req)
{
    struct proto_request fresh;
    proto_request_init (&fresh, PROTO_ACQUIRE);
    const struct proto_acquire *acq = &req->acquire, *dflt_acq = &fresh.acquire;
    const struct step_request *step = &acq->step, *dflt_step = &dflt_acq->step;
    int rc = 0;
#define ENC(name, kind, holder, min, max, fast)                              \
    if (proto_acq_given_##kind (&holder->name, &dflt_##holder->name, min))   \
        rc |= enc_##kind (o, #name, &holder->name);
    PROTO_ACQUIRE_FIELDS (ENC)
#undef ENC
    return rc;
}

int codec_encode_render (json_t *o, const struct proto_request *req)
{
    const struct proto_render *r = &req->render;
    if (!r->argv)
        return -1;
    int rc = codec_set_new (o, "placement", codec_placement_json (&r->placement))
             | codec_set_new (o, "ntasks", json_integer (r->ntasks))
             | codec_set_new (o, "argv", codec_strv_json (r->argv));
    if (r->cpus_per_task > 0)
        rc |= codec_set_new (o, "cpus_per_task", json_integer (r->cpus_per_task));
    if (r->memory_cap >= 0)
        rc |= codec_set_new (o, "memory_cap", json_integer (r->memory_cap));
    return rc;
}

int codec_encode_hello (json_t *o, const struct proto_request *req)
{
    if (req->hello.pipeline && codec_set_new (o, "pipeline", json_true ()) < 0)
        return -1;
    return req->hello.version > 0
           ? codec_set_new (o, "version", json_integer (req->hello.version)) : 0;
}

int codec_encode_release (json_t *o, const struct proto_request *req)
{
    if (req->release.outcome
        && codec_set_new (o, "outcome", proto_outcome_json (req->release.outcome)) < 0)
        return -1;
    return req->release.lease ? codec_set_new (o, "lease", json_string (req->release.lease))
                              : -1;
}

int codec_encode_reclaim (json_t *o, const struct proto_request *req)
{
    return req->reclaim.lease ? codec_set_new (o, "lease", json_string (req->reclaim.lease))
                              : -1;
}

int codec_encode_placed (json_t *o, const struct proto_request *req)
{
    if (!req->placed.lease || req->placed.ncores <= 0)
        return -1;
    return codec_set_new (o, "lease", json_string (req->placed.lease))
           | codec_set_new (o, "cores", codec_ids_json (req->placed.cores, req->placed.ncores))
           | (req->placed.ngpu_ids < 0 ? 0 : codec_set_new (o, "gpu_ids", codec_ids_json (
                  req->placed.gpu_ids, req->placed.ngpu_ids)));
}

int codec_encode_resources (json_t *o, const struct proto_request *req)
{
    return req->resources.lease
           ? codec_set_new (o, "lease", json_string (req->resources.lease)) : 0;
}

int codec_encode_status (json_t *o, const struct proto_request *req)
{
    int rc = 0;
    if (req->status.time_left)
        rc = codec_set_new (o, "time_left", json_true ());
    if (rc == 0 && req->status.queue_only)
        rc = codec_set_new (o, "queue_only", json_true ());
    if (rc == 0 && req->status.pid > 0)
        rc = codec_set_new (o, "pid", json_integer (req->status.pid));
    if (rc == 0 && req->status.brief > 0)
        rc = codec_set_new (o, "brief", json_integer (req->status.brief));
    return rc;
}

int codec_encode_watch (json_t *o, const struct proto_request *req)
{
    return req->watch.history ? codec_set_new (o, "history", json_true ()) : 0;
}

int codec_encode_shutdown (json_t *o, const struct proto_request *req)
{
    return codec_set_new (o, "mode", json_string (req->shutdown.mode == PROTO_SHUTDOWN_FORCE
                                                      ? "force" : "drain"));
}

json_t *proto_encode_request (const struct proto_request *req)
{
    if ((int) req->op < 0 || (int) req->op >= PROTO_NOPS)
        return NULL;
    json_t *o = json_pack ("{s:s s:O}", "op", codec_ops[req->op].name, "id",
                           req->id ? req->id : json_null ());
    if (o && codec_ops[req->op].encode (o, req) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}
