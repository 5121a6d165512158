/* SPDX-License-Identifier: MIT */
/* Requests encoded, as clients send them. */
#include "codec_internal.h"

static int set_count (json_t *o, const char *key, json_int_t v)
{
    return v == STEP_UNSET ? 0 : codec_set_new (o, key, json_integer (v));
}

int codec_encode_acquire (json_t *o, const struct proto_request *req)
{
    const struct proto_acquire *a = &req->acquire;
    const struct step_request *s = &a->step;
    int rc = set_count (o, "ntasks", s->ntasks) | set_count (o, "min_tasks", s->min_tasks)
             | set_count (o, "cpus_per_task", s->cpus_per_task)
             | set_count (o, "min_cpus_per_task", s->min_cpus_per_task)
             | set_count (o, "cores", s->cores) | set_count (o, "min_cores", s->min_cores)
             | set_count (o, "gpus", s->gpus) | set_count (o, "min_gpus", s->min_gpus)
             | set_count (o, "gpus_per_task", s->gpus_per_task)
             | set_count (o, "min_gpus_per_task", s->min_gpus_per_task)
             | set_count (o, "memory", s->memory)
             | set_count (o, "min_memory", s->min_memory);
    if (s->may_span_nodes != STEP_UNSET)
        rc |= codec_set_new (o, "may_span_nodes", json_boolean (s->may_span_nodes));
    if (s->local)
        rc |= codec_set_new (o, "local", json_true ());
    if (s->label)
        rc |= codec_set_new (o, "label", json_string (s->label));
    if (s->priority)
        rc |= codec_set_new (o, "priority", json_integer (s->priority));
    if (s->timeout >= 0)
        rc |= codec_set_new (o, "timeout", json_real (s->timeout));
    if (!a->wait)
        rc |= codec_set_new (o, "wait", json_false ());
    if (s->argv)
        rc |= codec_set_new (o, "argv", codec_strv_json (s->argv));
    if (a->detach)
        rc |= codec_set_new (o, "detach", json_true ());
    if (a->ttl >= 0)
        rc |= codec_set_new (o, "ttl", json_real (a->ttl));
    if (a->owner_pid > 0)
        rc |= codec_set_new (o, "owner_pid", json_integer (a->owner_pid));
    if (a->env)
        rc |= codec_set_new (o, "env", json_true ());
    if (a->duration >= 0)
        rc |= codec_set_new (o, "duration", json_real (a->duration));
    if (a->resume)
        rc |= codec_set_new (o, "resume", json_true ());
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
    return req->hello.version > 0
           ? codec_set_new (o, "version", json_integer (req->hello.version)) : 0;
}

int codec_encode_release (json_t *o, const struct proto_request *req)
{
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
