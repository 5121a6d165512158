/* SPDX-License-Identifier: MIT */
/* Replies encoded, as berthd sends them, and any message as one line. */
#include <stdlib.h>
#include <string.h>

#include "berth_config.h"
#include "codec_internal.h"

void proto_lease_init (struct proto_lease *l)
{
    memset (l, 0, sizeof (*l));
    l->memory_cap = -1;
    l->budget_mb = -1;
    l->granted = -1;
}

void proto_lease_free (struct proto_lease *l)
{
    if (!l)
        return;
    free (l->id);
    free (l->label);
    placement_free (&l->placement);
    launch_free (&l->launch);
    codec_env_items_free (l->env, l->nenv);
    proto_lease_init (l);
}

static json_t *ok_shell (json_t *id)
{
    return json_pack ("{s:O s:b}", "id", id ? id : json_null (), "ok", 1);
}


json_t *proto_error_reply (json_t *id, const berth_error_t *err)
{
    const char *code = err && err->code ? err->code : PROTO_ERR_INTERNAL;
    char text[sizeof (err->text)];
    codec_utf8_clean (err && err->text[0] ? err->text : "unknown error", text, sizeof (text));
    return json_pack ("{s:O s:b s:{s:s s:s}}", "id", id ? id : json_null (), "ok", 0,
                      "error", "code", code, "message", text);
}

json_t *proto_hello_reply (json_t *id, int version, int max_waiting)
{
    return json_pack ("{s:O s:b s:i s:[i] s:s s:o*}", "id", id ? id : json_null (),
                      "ok", 1, "version", version, "versions", PROTO_VERSION, "server",
                      "berthd " BERTH_VERSION, "pipeline", max_waiting > 0
                      ? json_pack ("{s:i}", "max_waiting", max_waiting) : NULL);
}

json_t *proto_lease_json (const struct proto_lease *l)
{
    if (!l->id)
        return NULL;
    json_t *o = json_pack ("{s:s s:s? s:o s:o? s:o? s:o* s:o}", "lease", l->id,
                           "label", l->label, "placement", codec_placement_json (&l->placement),
                           "memory_cap", l->memory_cap >= 0 ? json_integer (l->memory_cap) : NULL,
                           "budget_mb", l->budget_mb >= 0 ? json_integer (l->budget_mb) : NULL,
                           "argv", l->launch.argv ? codec_strv_json (l->launch.argv) : NULL,
                           "env_delta", codec_env_delta_json (&l->launch));
    if (o && ((l->env && codec_set_new (o, "env", codec_env_json (l->env, l->nenv)) < 0)
              || (l->owner_pid > 0 && codec_set_new (o, "owner_pid", json_integer (l->owner_pid)) < 0)
              || (l->granted >= 0 && codec_set_new (o, "granted", json_real (l->granted)) < 0))) {
        json_decref (o);
        return NULL;
    }
    return o;
}

json_t *proto_acquire_reply (json_t *id, const struct proto_lease *lease)
{
    json_t *body = proto_lease_json (lease);
    json_t *o = body ? codec_merge (ok_shell (id), body) : NULL;
    json_decref (body);
    return o;
}

json_t *proto_release_reply (json_t *id, const char *lease)
{
    return lease ? json_pack ("{s:O s:b s:s}", "id", id ? id : json_null (), "ok", 1,
                              "lease", lease)
                 : NULL;
}

json_t *proto_render_reply (json_t *id, const struct launch *launch)
{
    if (!launch->argv)
        return NULL;
    return json_pack ("{s:O s:b s:o s:o}", "id", id ? id : json_null (), "ok", 1,
                      "argv", codec_strv_json (launch->argv), "env_delta",
                      codec_env_delta_json (launch));
}

json_t *proto_ok_reply (json_t *id, json_t *body)
{
    return codec_merge (ok_shell (id), body);
}

json_t *proto_status_reply (json_t *id, json_t *allocation, json_t *leases,
                            json_t *queue)
{
    return json_pack ("{s:O s:b s:i s:s s:o s:o s:o}", "id", id ? id : json_null (),
                      "ok", 1, "version", PROTO_VERSION, "server", "berthd " BERTH_VERSION,
                      "allocation", allocation ? allocation : json_object (),
                      "leases", leases ? leases : json_array (),
                      "queue", queue ? queue : json_array ());
}

char *proto_line (const json_t *msg)
{
    char *s = msg ? json_dumps (msg, JSON_COMPACT) : NULL;
    size_t n = s ? strlen (s) : 0;
    char *line = s ? realloc (s, n + 2) : NULL;
    if (!line) {
        free (s);
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    return line;
}
