/* SPDX-License-Identifier: MIT */
/* outcome.h: a step's outcome encoded and decoded, strictly for berthd and
 * leniently for clients, every value checked either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "outcome.h"

static const char *const stopped_reasons[] = {
    "signal", "time-limit", "timeout", "cancel",
};
#define NREASONS ((int) (sizeof (stopped_reasons) / sizeof (stopped_reasons[0])))

/* a launch error is a message, not a name: longer, yet one line */
#define MAX_LAUNCH_ERROR 1024

void proto_outcome_init (struct proto_outcome *o)
{
    memset (o, 0, sizeof (*o));
    o->wall_s = o->cpu_s = -1;
    o->max_rss_kb = -1;
}

void proto_outcome_destroy (struct proto_outcome *o)
{
    if (!o)
        return;
    free (o->stopped);
    free (o->launch_error);
    free (o);
}

struct proto_outcome *proto_outcome_copy (const struct proto_outcome *o)
{
    struct proto_outcome *c = o ? malloc (sizeof (*c)) : NULL;
    if (!c)
        return NULL;
    *c = *o;
    c->stopped = o->stopped ? strdup (o->stopped) : NULL;
    c->launch_error = o->launch_error ? strdup (o->launch_error) : NULL;
    if ((o->stopped && !c->stopped) || (o->launch_error && !c->launch_error)) {
        proto_outcome_destroy (c);
        return NULL;
    }
    return c;
}

static bool reason_known (const char *s)
{
    for (int i = 0; s && i < NREASONS; i++)
        if (!strcmp (s, stopped_reasons[i]))
            return true;
    return false;
}

json_t *proto_outcome_json (const struct proto_outcome *o)
{
    if (!o || o->status < 0 || o->status > 255 || o->signal < 0 || o->signal > 127
        || (o->stopped && !reason_known (o->stopped)))
        return NULL;
    json_t *j = json_pack ("{s:i}", "status", o->status);
    int bad = !j;
    if (!bad && o->signal)
        bad = codec_set_new (j, "signal", json_integer (o->signal));
    if (!bad && o->stopped)
        bad = codec_set_new (j, "stopped", json_string (o->stopped));
    if (!bad && o->launch_error)
        bad = codec_set_new (j, "launch_error", json_string (o->launch_error));
    if (!bad && o->wall_s >= 0)
        bad = codec_set_new (j, "wall_s", json_real (o->wall_s));
    if (!bad && o->cpu_s >= 0)
        bad = codec_set_new (j, "cpu_s", json_real (o->cpu_s));
    if (!bad && o->max_rss_kb >= 0)
        bad = codec_set_new (j, "max_rss_kb", json_integer (o->max_rss_kb));
    if (bad) {
        json_decref (j);
        return NULL;
    }
    return j;
}

static int get_number (const struct codec_ctx *c, const char *field, json_t *v,
                       double *out)
{
    if (codec_absent (v))
        return 0;
    if (!json_is_number (v) || json_number_value (v) < 0)
        return codec_bad (c, field, "a number of seconds, 0 or more", v);
    *out = json_number_value (v);
    return 0;
}

int proto_outcome_decode (const json_t *v, bool strict, const char *where,
                          const char *code, struct proto_outcome **out,
                          berth_error_t *err)
{
    char at[96];
    snprintf (at, sizeof (at), "%s: outcome", where);
    struct codec_ctx c = { at, code, err };
    json_t *status = NULL, *sig = NULL, *stopped = NULL, *lerr = NULL,
           *wall = NULL, *cpu = NULL, *rss = NULL;
    json_error_t je;
    struct proto_outcome o;
    json_int_t kb = -1;

    *out = NULL;
    if (codec_absent (v))
        return 0;
    if (!json_is_object (v))
        return codec_bad (&c, "outcome", "an object", v);
    if (json_unpack_ex ((json_t *) v, &je, strict ? JSON_STRICT : 0,
                        "{s:o s?o s?o s?o s?o s?o s?o}", "status", &status,
                        "signal", &sig, "stopped", &stopped, "launch_error", &lerr,
                        "wall_s", &wall, "cpu_s", &cpu, "max_rss_kb", &rss) < 0)
        return codec_unpack_error (&c, &je);
    proto_outcome_init (&o);
    if (codec_get_i (&c, "status", status, 0, 255, &o.status) < 0
        || codec_get_i (&c, "signal", sig, 0, 127, &o.signal) < 0
        || get_number (&c, "wall_s", wall, &o.wall_s) < 0
        || get_number (&c, "cpu_s", cpu, &o.cpu_s) < 0
        || codec_get_int (&c, "max_rss_kb", rss, 0, INT64_MAX, &kb) < 0)
        return -1;
    o.max_rss_kb = kb;
    if (!codec_absent (stopped) && !reason_known (json_string_value (stopped)))
        return codec_bad (&c, "stopped", "one of " PROTO_STOPPED_REASONS, stopped);
    if (!codec_absent (lerr)) {
        const char *s = json_string_value (lerr);
        if (!s || !*s || json_string_length (lerr) > MAX_LAUNCH_ERROR
            || strlen (s) != json_string_length (lerr) || strchr (s, '\n'))
            return codec_bad (&c, "launch_error", "a message of one line "
                              "(1 to 1024 bytes)", lerr);
    }
    struct proto_outcome *r = malloc (sizeof (*r));
    if (!r)
        return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory");
    *r = o;
    r->stopped = stopped ? strdup (json_string_value (stopped)) : NULL;
    r->launch_error = lerr ? strdup (json_string_value (lerr)) : NULL;
    if ((stopped && !r->stopped) || (lerr && !r->launch_error)) {
        proto_outcome_destroy (r);
        return errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory");
    }
    *out = r;
    return 0;
}

bool proto_outcome_failed (const struct proto_outcome *o)
{
    return o && (o->status != 0 || o->stopped || o->launch_error);
}

void proto_outcome_describe (const struct proto_outcome *o, char *buf, size_t size)
{
    if (!o)
        snprintf (buf, size, "outcome not recorded");
    else if (o->launch_error)
        snprintf (buf, size, "not started (%d): %s", o->status, o->launch_error);
    else if (o->signal)
        snprintf (buf, size, "signal %d%s%s%s", o->signal, o->stopped ? " (" : "",
                  o->stopped ? o->stopped : "", o->stopped ? ")" : "");
    else
        snprintf (buf, size, "exit %d%s%s%s", o->status, o->stopped ? " (" : "",
                  o->stopped ? o->stopped : "", o->stopped ? ")" : "");
}
