/* SPDX-License-Identifier: MIT */
/* The checks of decoded values, shared by the strict request decoder and
 * the clients' reply decoders: each refusal names the field and what it
 * got; placements, launches and environments as both sides read them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"

void codec_strv_free (char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free (v[i]);
    free (v);
}

void codec_env_items_free (struct env_set_item *items, int n)
{
    for (int i = 0; i < n; i++) {
        free (items[i].name);
        free (items[i].value);
    }
    free (items);
}

/* ---- field checks ------------------------------------------------------ */

/* A bounded, escaped rendering of v for messages. */
void codec_describe (const json_t *v, char *buf, size_t size)
{
    char *s = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!s)
        snprintf (buf, size, "an unprintable value");
    else if (strlen (s) < 48)
        snprintf (buf, size, "%s", s);
    else
        snprintf (buf, size, "%.40s...", s);
    free (s);
}

int codec_bad (const struct codec_ctx *c, const char *field, const char *expect,
                const json_t *v)
{
    char got[64];
    codec_describe (v, got, sizeof (got));
    return errprintf_code (c->err, c->code, "%s: field '%s' must be %s, got %s",
                           c->where, field, expect, got);
}

/* JSON null stands for a field left out. */
bool codec_absent (const json_t *v)
{
    return !v || json_is_null (v);
}

/* For required values (array items, required fields): null is refused. */
int codec_need (const struct codec_ctx *c, const char *field, const json_t *v,
                 const char *expect)
{
    return codec_absent (v) ? codec_bad (c, field, expect, v ? v : json_null ()) : 0;
}

int codec_get_int (const struct codec_ctx *c, const char *field, const json_t *v,
                    json_int_t min, json_int_t max, json_int_t *out)
{
    if (codec_absent (v))
        return 0;
    if (!json_is_integer (v) || json_integer_value (v) < min
        || json_integer_value (v) > max) {
        char expect[96];
        if (min == 0 || min == 1)
            snprintf (expect, sizeof (expect), "a %s integer up to %lld",
                      min ? "positive" : "non-negative", (long long) max);
        else
            snprintf (expect, sizeof (expect), "an integer from %lld to %lld",
                      (long long) min, (long long) max);
        return codec_bad (c, field, expect, v);
    }
    *out = json_integer_value (v);
    return 0;
}

int codec_get_i (const struct codec_ctx *c, const char *field, const json_t *v,
                  int min, int max, int *out)
{
    json_int_t x = *out;
    if (codec_get_int (c, field, v, min, max, &x) < 0)
        return -1;
    *out = (int) x;
    return 0;
}

int codec_get_bool (const struct codec_ctx *c, const char *field, const json_t *v,
                     bool *out)
{
    if (codec_absent (v))
        return 0;
    if (!json_is_boolean (v))
        return codec_bad (c, field, "true or false", v);
    *out = json_is_true (v);
    return 0;
}

int codec_get_seconds (const struct codec_ctx *c, const char *field,
                        const json_t *v, double max, double *out)
{
    if (codec_absent (v))
        return 0;
    if (!json_is_number (v) || json_number_value (v) < 0
        || json_number_value (v) > max) {
        char expect[64];
        snprintf (expect, sizeof (expect), "a number of seconds from 0 to %.0f", max);
        return codec_bad (c, field, expect, v);
    }
    *out = json_number_value (v);
    return 0;
}

/* Labels, node names, lease ids: short, printable, one line. */
int codec_get_name (const struct codec_ctx *c, const char *field, const json_t *v,
                     char **out)
{
    if (codec_absent (v))
        return 0;
    const char *s = json_string_value (v);
    size_t len = s ? json_string_length (v) : 0;
    bool ok = s && len > 0 && len <= PROTO_MAX_NAME && strlen (s) == len;
    for (size_t i = 0; ok && i < len; i++)
        ok = (unsigned char) s[i] >= 0x20 && s[i] != 0x7f;
    if (!ok) {
        char expect[96];
        snprintf (expect, sizeof (expect),
                  "a non-empty string of at most %d bytes without control characters",
                  PROTO_MAX_NAME);
        return codec_bad (c, field, expect, v);
    }
    if (!(*out = strdup (s)))
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    return 0;
}

int codec_get_argv (const struct codec_ctx *c, const char *field, const json_t *v,
                     char ***out)
{
    if (codec_absent (v))
        return 0;
    size_t n = json_array_size (v);
    if (!json_is_array (v) || n == 0 || n > PROTO_MAX_ARGS) {
        char expect[80];
        snprintf (expect, sizeof (expect),
                  "a non-empty array of at most %d strings", PROTO_MAX_ARGS);
        return codec_bad (c, field, expect, v);
    }
    char **argv = calloc (n + 1, sizeof (*argv));
    if (!argv)
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *item = json_array_get (v, i);
        const char *s = json_string_value (item);
        char name[64];
        snprintf (name, sizeof (name), "%s[%zu]", field, i);
        if (!s || strlen (s) != json_string_length (item) || (i == 0 && !*s)) {
            codec_strv_free (argv);
            return codec_bad (c, name, i == 0 ? "a non-empty string (the program)"
                                        : "a string", item);
        }
        if (!(argv[i] = strdup (s))) {
            codec_strv_free (argv);
            return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
        }
    }
    *out = argv;
    return 0;
}

/* An array of ids (core ids, GPU indices), each 0..PROTO_MAX_COUNT. */
int codec_get_ids (const struct codec_ctx *c, const char *field, const json_t *v,
                    int **ids, int *count)
{
    size_t n = json_array_size (v);
    if (!json_is_array (v) || n > PROTO_MAX_COUNT)
        return codec_bad (c, field, "an array of ids", v);
    int *a = calloc (n ? n : 1, sizeof (*a));
    if (!a)
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf (name, sizeof (name), "%s[%zu]", field, i);
        if (codec_need (c, name, json_array_get (v, i), "an id") < 0
            || codec_get_i (c, name, json_array_get (v, i), 0, PROTO_MAX_COUNT, &a[i]) < 0) {
            free (a);
            return -1;
        }
    }
    *ids = a;
    *count = (int) n;
    return 0;
}

/* Turn json_unpack's complaint into one that names the field. */
int codec_unpack_error (const struct codec_ctx *c, const json_error_t *je)
{
    const char *p;
    if ((p = strstr (je->text, "left unpacked: ")))
        return errprintf_code (c->err, c->code,
                               "%s: unknown field(s): %s (PROTOCOL.md lists the fields of each op)",
                               c->where, p + strlen ("left unpacked: "));
    if ((p = strstr (je->text, "item not found: ")))
        return errprintf_code (c->err, c->code, "%s: missing required field '%s'",
                               c->where, p + strlen ("item not found: "));
    if (!strncmp (je->text, "Expected object", 15))
        return errprintf_code (c->err, c->code, "%s: must be a JSON object (%s)",
                               c->where, je->text);
    return errprintf_code (c->err, c->code, "%s: %s", c->where, je->text);
}

/* ---- placements and launches ------------------------------------------ */

/* gpu_ids as one list per node ([[0, 1], [2, 3]]): each node its own. */
static int decode_node_gpu_ids (const struct codec_ctx *c, const json_t *v,
                                struct placement *p)
{
    if (json_array_size (v) != (size_t) p->nnodes) {
        char expect[96];
        snprintf (expect, sizeof (expect), "an array of %d GPU id lists (one per node), "
                  "or one list for every node", p->nnodes);
        return codec_bad (c, "placement.gpu_ids", expect, v);
    }
    p->node_gpu_ids = true;
    p->gpus = 0;
    for (int i = 0; i < p->nnodes; i++) {
        char name[64];
        struct placement_node *pn = &p->nodes[i];
        snprintf (name, sizeof (name), "placement.gpu_ids[%d]", i);
        if (codec_get_ids (c, name, json_array_get (v, (size_t) i), &pn->gpu_ids,
                     &pn->ngpu_ids) < 0)
            return -1;
        p->gpus += pn->ngpu_ids;
    }
    return 0;
}

/* nodes absent or [] with one core list (where unnamed_ok: a render, not a
 * lease, which always names its nodes): one node the launcher chooses. */
int codec_decode_placement (const struct codec_ctx *c, const json_t *v,
                             bool unnamed_ok, struct placement *out)
{
    json_t *nodes = NULL, *cores, *gpus = NULL, *gpu_ids = NULL;
    json_error_t je;
    struct placement p = { 0 };
    char where[64];
    struct codec_ctx pc = *c;

    snprintf (where, sizeof (where), "%s: placement", c->where);
    pc.where = where;
    if (json_unpack_ex ((json_t *) v, &je, 0, "{s?o s:o s?o s?o !}",
                        "nodes", &nodes, "cores", &cores, "gpus", &gpus,
                        "gpu_ids", &gpu_ids) < 0)
        return codec_unpack_error (&pc, &je);
    size_t n = json_array_size (nodes);
    bool unnamed = codec_absent (nodes) || (json_is_array (nodes) && n == 0);
    if (unnamed && !unnamed_ok)
        return codec_bad (c, "placement.nodes", "a non-empty array of node names",
                    nodes ? nodes : json_null ());
    if ((!unnamed && !json_is_array (nodes)) || n > PROTO_MAX_COUNT)
        return codec_bad (c, "placement.nodes", "an array of node names (empty or left out: "
                    "one core list for the launcher's own node)", nodes);
    if (unnamed)
        n = 1;
    if (!json_is_array (cores) || json_array_size (cores) != n) {
        char expect[96];
        snprintf (expect, sizeof (expect), unnamed
                  ? "one core id list ([[...]]) when nodes are not named"
                  : "an array of %zu core id lists (one per node)", n);
        return codec_bad (c, "placement.cores", expect, cores);
    }
    if (!(p.nodes = calloc (n, sizeof (*p.nodes))))
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char name[64];
        p.nnodes = (int) i + 1;   /* so that a failure frees this node too */
        snprintf (name, sizeof (name), "placement.nodes[%zu]", i);
        struct placement_node *pn = &p.nodes[i];
        if (!unnamed
            && (codec_need (c, name, json_array_get (nodes, i), "a node name") < 0
                || codec_get_name (c, name, json_array_get (nodes, i), &pn->name) < 0))
            goto fail;
        snprintf (name, sizeof (name), "placement.cores[%zu]", i);
        if (codec_get_ids (c, name, json_array_get (cores, i), &pn->cores, &pn->ncores) < 0)
            goto fail;
    }
    if (json_is_array (json_array_get (gpu_ids, 0))) {
        if (decode_node_gpu_ids (c, gpu_ids, &p) < 0)
            goto fail;
    }
    else {
        if (!codec_absent (gpu_ids)
            && codec_get_ids (c, "placement.gpu_ids", gpu_ids, &p.gpu_ids, &p.ngpu_ids) < 0)
            goto fail;
        p.gpus = p.ngpu_ids;
    }
    if (codec_get_i (c, "placement.gpus", gpus, 0, PROTO_MAX_COUNT, &p.gpus) < 0)
        goto fail;
    *out = p;
    return 0;
fail:
    placement_free (&p);
    return -1;
}

/* {"NAME": "value", ...} -> items; strings only. */
int codec_get_env_items (const struct codec_ctx *c, const char *field,
                          const json_t *v, struct env_set_item **items, int *n)
{
    const char *key;
    json_t *val;
    if (!json_is_object (v))
        return codec_bad (c, field, "an object of strings", v);
    struct env_set_item *a = calloc (json_object_size (v) + 1, sizeof (*a));
    int k = 0;
    if (!a)
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    json_object_foreach ((json_t *) v, key, val) {
        if (!json_is_string (val)) {
            char name[128];
            snprintf (name, sizeof (name), "%s.%s", field, key);
            codec_env_items_free (a, k);
            return codec_bad (c, name, "a string", val);
        }
        a[k].name = strdup (key);
        a[k].value = strdup (json_string_value (val));
        if (!a[k++].name || !a[k - 1].value) {
            codec_env_items_free (a, k);
            return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
        }
    }
    *items = a;
    *n = k;
    return 0;
}

/* argv (may be absent) and env_delta of a reply -> launch. */
int codec_decode_launch (const struct codec_ctx *c, const json_t *argv,
                          const json_t *delta, struct launch *out)
{
    struct launch l = { 0 };
    json_t *unset = NULL, *set = NULL;
    json_error_t je;

    if (codec_get_argv (c, "argv", argv, &l.argv) < 0)
        return -1;
    for (l.argc = 0; l.argv && l.argv[l.argc]; l.argc++)
        ;
    if (!codec_absent (delta)) {
        if (json_unpack_ex ((json_t *) delta, &je, 0, "{s?o s?o}", "unset", &unset,
                            "set", &set) < 0) {
            codec_unpack_error (c, &je);
            goto fail;
        }
        size_t n = json_array_size (unset);
        if (!codec_absent (unset) && !json_is_array (unset)) {
            codec_bad (c, "env_delta.unset", "an array of names", unset);
            goto fail;
        }
        if (n && !(l.env_unset = calloc (n + 1, sizeof (char *))))
            goto oom;
        for (size_t i = 0; i < n; i++, l.n_unset++) {
            char name[64];
            snprintf (name, sizeof (name), "env_delta.unset[%zu]", i);
            if (codec_need (c, name, json_array_get (unset, i), "a name") < 0
                || codec_get_name (c, name, json_array_get (unset, i), &l.env_unset[i]) < 0)
                goto fail;
        }
        if (!codec_absent (set)
            && codec_get_env_items (c, "env_delta.set", set, &l.env_set, &l.n_set) < 0)
            goto fail;
    }
    *out = l;
    return 0;
oom:
    errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
fail:
    launch_free (&l);
    return -1;
}
