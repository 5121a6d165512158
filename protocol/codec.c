/* The berthd wire protocol: request decoding (strict, every refusal names the
 * field), reply and event encoding, and the client-side decoders. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth_config.h"
#include "codec.h"
#include "request_fast.h"

static const char *const op_names[] = {
    [PROTO_HELLO] = "hello",         [PROTO_ACQUIRE] = "acquire",
    [PROTO_RELEASE] = "release",     [PROTO_RENDER] = "render",
    [PROTO_RESOURCES] = "resources", [PROTO_STATUS] = "status",
    [PROTO_WATCH] = "watch",         [PROTO_SHUTDOWN] = "shutdown",
    [PROTO_RECLAIM] = "reclaim",     [PROTO_PLACED] = "placed",
};
#define NOPS ((int) (sizeof (op_names) / sizeof (op_names[0])))
#define OP_LIST "hello, acquire, release, render, resources, status, watch, shutdown, reclaim, placed"

static const char *const error_codes[] = {
    PROTO_ERR_INVALID_REQUEST, PROTO_ERR_UNSATISFIABLE, PROTO_ERR_TIMEOUT,
    PROTO_ERR_NOT_FOUND,       PROTO_ERR_FORBIDDEN,     PROTO_ERR_TOO_LARGE,
    PROTO_ERR_SHUTTING_DOWN,   PROTO_ERR_UNSUPPORTED_VERSION,
    PROTO_ERR_BUSY,            PROTO_ERR_INTERNAL,
};

static const char *const event_names[] = {
    [PROTO_EV_GRANTED] = "granted", [PROTO_EV_WAITED] = "waited",
    [PROTO_EV_RELEASED] = "released", [PROTO_EV_REFUSED] = "refused",
    [PROTO_EV_ALLOCATION] = "allocation",
};
#define NEVENTS ((int) (sizeof (event_names) / sizeof (event_names[0])))

const char *proto_error_code (const char *code)
{
    for (size_t i = 0; code && i < sizeof (error_codes) / sizeof (error_codes[0]); i++)
        if (!strcmp (code, error_codes[i]))
            return error_codes[i];
    return NULL;
}

const char *proto_op_name (enum proto_op op)
{
    return (int) op >= 0 && (int) op < NOPS ? op_names[op] : "unknown";
}

/* ---- freeing ---------------------------------------------------------- */

static void strv_free (char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free (v[i]);
    free (v);
}

static void env_items_free (struct env_set_item *items, int n)
{
    for (int i = 0; i < n; i++) {
        free (items[i].name);
        free (items[i].value);
    }
    free (items);
}

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
        strv_free (req->render.argv);
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
    env_items_free (l->env, l->nenv);
    proto_lease_init (l);
}

void proto_event_free (struct proto_event *ev)
{
    if (!ev)
        return;
    proto_lease_free (&ev->lease);
    free (ev->label);
    free (ev->why);
    free (ev->job_id);
    free (ev->machine);
    json_decref (ev->nodes);
    memset (ev, 0, sizeof (*ev));
    proto_lease_init (&ev->lease);
}

/* ---- field checks ------------------------------------------------------ */

/* Where a value is decoded: the message prefix and the code of a refusal
 * (invalid_request for requests, internal for a server's malformed reply). */
struct ctx {
    const char *where;
    const char *code;
    berth_error_t *err;
};

/* A bounded, escaped rendering of v for messages. */
static void describe (const json_t *v, char *buf, size_t size)
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

static int bad (const struct ctx *c, const char *field, const char *expect,
                const json_t *v)
{
    char got[64];
    describe (v, got, sizeof (got));
    return errprintf_code (c->err, c->code, "%s: field '%s' must be %s, got %s",
                           c->where, field, expect, got);
}

/* JSON null stands for a field left out. */
static bool absent (const json_t *v)
{
    return !v || json_is_null (v);
}

/* For required values (array items, required fields): null is refused. */
static int need (const struct ctx *c, const char *field, const json_t *v,
                 const char *expect)
{
    return absent (v) ? bad (c, field, expect, v ? v : json_null ()) : 0;
}

static int get_int (const struct ctx *c, const char *field, const json_t *v,
                    json_int_t min, json_int_t max, json_int_t *out)
{
    if (absent (v))
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
        return bad (c, field, expect, v);
    }
    *out = json_integer_value (v);
    return 0;
}

static int get_i (const struct ctx *c, const char *field, const json_t *v,
                  int min, int max, int *out)
{
    json_int_t x = *out;
    if (get_int (c, field, v, min, max, &x) < 0)
        return -1;
    *out = (int) x;
    return 0;
}

static int get_bool (const struct ctx *c, const char *field, const json_t *v,
                     bool *out)
{
    if (absent (v))
        return 0;
    if (!json_is_boolean (v))
        return bad (c, field, "true or false", v);
    *out = json_is_true (v);
    return 0;
}

static int get_seconds (const struct ctx *c, const char *field,
                        const json_t *v, double max, double *out)
{
    if (absent (v))
        return 0;
    if (!json_is_number (v) || json_number_value (v) < 0
        || json_number_value (v) > max) {
        char expect[64];
        snprintf (expect, sizeof (expect), "a number of seconds from 0 to %.0f", max);
        return bad (c, field, expect, v);
    }
    *out = json_number_value (v);
    return 0;
}

/* Labels, node names, lease ids: short, printable, one line. */
static int get_name (const struct ctx *c, const char *field, const json_t *v,
                     char **out)
{
    if (absent (v))
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
        return bad (c, field, expect, v);
    }
    if (!(*out = strdup (s)))
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    return 0;
}

static int get_argv (const struct ctx *c, const char *field, const json_t *v,
                     char ***out)
{
    if (absent (v))
        return 0;
    size_t n = json_array_size (v);
    if (!json_is_array (v) || n == 0 || n > PROTO_MAX_ARGS) {
        char expect[80];
        snprintf (expect, sizeof (expect),
                  "a non-empty array of at most %d strings", PROTO_MAX_ARGS);
        return bad (c, field, expect, v);
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
            strv_free (argv);
            return bad (c, name, i == 0 ? "a non-empty string (the program)"
                                        : "a string", item);
        }
        if (!(argv[i] = strdup (s))) {
            strv_free (argv);
            return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
        }
    }
    *out = argv;
    return 0;
}

/* An array of ids (core ids, GPU indices), each 0..PROTO_MAX_COUNT. */
static int get_ids (const struct ctx *c, const char *field, const json_t *v,
                    int **ids, int *count)
{
    size_t n = json_array_size (v);
    if (!json_is_array (v) || n > PROTO_MAX_COUNT)
        return bad (c, field, "an array of ids", v);
    int *a = calloc (n ? n : 1, sizeof (*a));
    if (!a)
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf (name, sizeof (name), "%s[%zu]", field, i);
        if (need (c, name, json_array_get (v, i), "an id") < 0
            || get_i (c, name, json_array_get (v, i), 0, PROTO_MAX_COUNT, &a[i]) < 0) {
            free (a);
            return -1;
        }
    }
    *ids = a;
    *count = (int) n;
    return 0;
}

/* Turn json_unpack's complaint into one that names the field. */
static int unpack_error (const struct ctx *c, const json_error_t *je)
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
static int decode_node_gpu_ids (const struct ctx *c, const json_t *v,
                                struct placement *p)
{
    if (json_array_size (v) != (size_t) p->nnodes) {
        char expect[96];
        snprintf (expect, sizeof (expect), "an array of %d GPU id lists (one per node), "
                  "or one list for every node", p->nnodes);
        return bad (c, "placement.gpu_ids", expect, v);
    }
    p->node_gpu_ids = true;
    p->gpus = 0;
    for (int i = 0; i < p->nnodes; i++) {
        char name[64];
        struct placement_node *pn = &p->nodes[i];
        snprintf (name, sizeof (name), "placement.gpu_ids[%d]", i);
        if (get_ids (c, name, json_array_get (v, (size_t) i), &pn->gpu_ids,
                     &pn->ngpu_ids) < 0)
            return -1;
        p->gpus += pn->ngpu_ids;
    }
    return 0;
}

/* nodes absent or [] with one core list (where unnamed_ok: a render, not a
 * lease, which always names its nodes): one node the launcher chooses. */
static int decode_placement (const struct ctx *c, const json_t *v,
                             bool unnamed_ok, struct placement *out)
{
    json_t *nodes = NULL, *cores, *gpus = NULL, *gpu_ids = NULL;
    json_error_t je;
    struct placement p = { 0 };
    char where[64];
    struct ctx pc = *c;

    snprintf (where, sizeof (where), "%s: placement", c->where);
    pc.where = where;
    if (json_unpack_ex ((json_t *) v, &je, 0, "{s?o s:o s?o s?o !}",
                        "nodes", &nodes, "cores", &cores, "gpus", &gpus,
                        "gpu_ids", &gpu_ids) < 0)
        return unpack_error (&pc, &je);
    size_t n = json_array_size (nodes);
    bool unnamed = absent (nodes) || (json_is_array (nodes) && n == 0);
    if (unnamed && !unnamed_ok)
        return bad (c, "placement.nodes", "a non-empty array of node names",
                    nodes ? nodes : json_null ());
    if ((!unnamed && !json_is_array (nodes)) || n > PROTO_MAX_COUNT)
        return bad (c, "placement.nodes", "an array of node names (empty or left out: "
                    "one core list for the launcher's own node)", nodes);
    if (unnamed)
        n = 1;
    if (!json_is_array (cores) || json_array_size (cores) != n) {
        char expect[96];
        snprintf (expect, sizeof (expect), unnamed
                  ? "one core id list ([[...]]) when nodes are not named"
                  : "an array of %zu core id lists (one per node)", n);
        return bad (c, "placement.cores", expect, cores);
    }
    if (!(p.nodes = calloc (n, sizeof (*p.nodes))))
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char name[64];
        p.nnodes = (int) i + 1;   /* so that a failure frees this node too */
        snprintf (name, sizeof (name), "placement.nodes[%zu]", i);
        struct placement_node *pn = &p.nodes[i];
        if (!unnamed
            && (need (c, name, json_array_get (nodes, i), "a node name") < 0
                || get_name (c, name, json_array_get (nodes, i), &pn->name) < 0))
            goto fail;
        snprintf (name, sizeof (name), "placement.cores[%zu]", i);
        if (get_ids (c, name, json_array_get (cores, i), &pn->cores, &pn->ncores) < 0)
            goto fail;
    }
    if (json_is_array (json_array_get (gpu_ids, 0))) {
        if (decode_node_gpu_ids (c, gpu_ids, &p) < 0)
            goto fail;
    }
    else {
        if (!absent (gpu_ids)
            && get_ids (c, "placement.gpu_ids", gpu_ids, &p.gpu_ids, &p.ngpu_ids) < 0)
            goto fail;
        p.gpus = p.ngpu_ids;
    }
    if (get_i (c, "placement.gpus", gpus, 0, PROTO_MAX_COUNT, &p.gpus) < 0)
        goto fail;
    *out = p;
    return 0;
fail:
    placement_free (&p);
    return -1;
}

static json_t *ids_json (const int *ids, int n)
{
    json_t *a = json_array ();
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new (a, json_integer (ids[i])) < 0) {
            json_decref (a);
            return NULL;
        }
    return a;
}

static json_t *strv_json (char *const *v)
{
    json_t *a = json_array ();
    for (size_t i = 0; a && v && v[i]; i++)
        if (json_array_append_new (a, json_string (v[i])) < 0) {
            json_decref (a);
            return NULL;
        }
    return a;
}

static json_t *placement_json (const struct placement *p)
{
    json_t *nodes = json_array (), *cores = json_array (), *gpu_ids = NULL;
    for (int i = 0; nodes && cores && i < p->nnodes; i++)
        if ((!p->nodes[i].name && p->nnodes > 1)   /* only one node goes unnamed */
            || (p->nodes[i].name
                && json_array_append_new (nodes, json_string (p->nodes[i].name)) < 0)
            || json_array_append_new (cores, ids_json (p->nodes[i].cores,
                                                       p->nodes[i].ncores)) < 0)
            goto fail;
    /* Zero GPUs are stated as such; unknown indices of some GPUs are null;
     * per-node ids are one list per node. */
    if (p->node_gpu_ids) {
        if (!(gpu_ids = json_array ()))
            goto fail;
        for (int i = 0; i < p->nnodes; i++)
            if (json_array_append_new (gpu_ids, ids_json (p->nodes[i].gpu_ids,
                                                          p->nodes[i].ngpu_ids)) < 0)
                goto fail;
    }
    else if (p->ngpu_ids > 0 || p->gpus == 0)
        if (!(gpu_ids = ids_json (p->gpu_ids, p->ngpu_ids)))
            goto fail;
    if (p->nnodes < 1)
        goto fail;
    return json_pack ("{s:o s:o s:i s:o?}", "nodes", nodes, "cores", cores,
                      "gpus", p->gpus, "gpu_ids", gpu_ids);
fail:
    json_decref (nodes);
    json_decref (cores);
    json_decref (gpu_ids);
    return NULL;
}

static json_t *env_delta_json (const struct launch *l)
{
    json_t *set = json_object ();
    for (int i = 0; set && i < l->n_set; i++)
        if (!l->env_set[i].name || !l->env_set[i].value
            || json_object_set_new (set, l->env_set[i].name,
                                    json_string (l->env_set[i].value)) < 0) {
            json_decref (set);
            return NULL;
        }
    json_t *unset = json_array ();
    for (int i = 0; unset && i < l->n_unset; i++)
        if (json_array_append_new (unset, json_string (l->env_unset[i])) < 0) {
            json_decref (unset);
            unset = NULL;
        }
    return json_pack ("{s:o s:o}", "unset", unset, "set", set);
}

static json_t *env_json (const struct env_set_item *items, int n)
{
    json_t *o = json_object ();
    for (int i = 0; o && i < n; i++)
        if (!items[i].name || !items[i].value
            || json_object_set_new (o, items[i].name, json_string (items[i].value)) < 0) {
            json_decref (o);
            return NULL;
        }
    return o;
}

/* {"NAME": "value", ...} -> items; strings only. */
static int get_env_items (const struct ctx *c, const char *field,
                          const json_t *v, struct env_set_item **items, int *n)
{
    const char *key;
    json_t *val;
    if (!json_is_object (v))
        return bad (c, field, "an object of strings", v);
    struct env_set_item *a = calloc (json_object_size (v) + 1, sizeof (*a));
    int k = 0;
    if (!a)
        return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
    json_object_foreach ((json_t *) v, key, val) {
        if (!json_is_string (val)) {
            char name[128];
            snprintf (name, sizeof (name), "%s.%s", field, key);
            env_items_free (a, k);
            return bad (c, name, "a string", val);
        }
        a[k].name = strdup (key);
        a[k].value = strdup (json_string_value (val));
        if (!a[k++].name || !a[k - 1].value) {
            env_items_free (a, k);
            return errprintf_code (c->err, PROTO_ERR_INTERNAL, "out of memory");
        }
    }
    *items = a;
    *n = k;
    return 0;
}

/* argv (may be absent) and env_delta of a reply -> launch. */
static int decode_launch (const struct ctx *c, const json_t *argv,
                          const json_t *delta, struct launch *out)
{
    struct launch l = { 0 };
    json_t *unset = NULL, *set = NULL;
    json_error_t je;

    if (get_argv (c, "argv", argv, &l.argv) < 0)
        return -1;
    for (l.argc = 0; l.argv && l.argv[l.argc]; l.argc++)
        ;
    if (!absent (delta)) {
        if (json_unpack_ex ((json_t *) delta, &je, 0, "{s?o s?o}", "unset", &unset,
                            "set", &set) < 0) {
            unpack_error (c, &je);
            goto fail;
        }
        size_t n = json_array_size (unset);
        if (!absent (unset) && !json_is_array (unset)) {
            bad (c, "env_delta.unset", "an array of names", unset);
            goto fail;
        }
        if (n && !(l.env_unset = calloc (n + 1, sizeof (char *))))
            goto oom;
        for (size_t i = 0; i < n; i++, l.n_unset++) {
            char name[64];
            snprintf (name, sizeof (name), "env_delta.unset[%zu]", i);
            if (need (c, name, json_array_get (unset, i), "a name") < 0
                || get_name (c, name, json_array_get (unset, i), &l.env_unset[i]) < 0)
                goto fail;
        }
        if (!absent (set)
            && get_env_items (c, "env_delta.set", set, &l.env_set, &l.n_set) < 0)
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

/* ---- requests: decoding ----------------------------------------------- */

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

static int decode_hello (const struct ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *version = NULL;
    json_error_t je;
    if (unpack_request (o, &je, "{s:o s:o s?o !}", "op", &skip, "id", &skip,
                        "version", &version) < 0)
        return unpack_error (c, &je);
    return get_i (c, "version", version, 1, INT_MAX, &r->hello.version);
}

static int decode_acquire (const struct ctx *c, json_t *o, struct proto_acquire *a)
{
    json_t *skip, *ntasks = NULL, *cpt = NULL, *min_tasks = NULL, *min_cpt = NULL,
        *cores = NULL, *min_cores = NULL, *gpus = NULL, *min_gpus = NULL,
        *gpt = NULL, *min_gpt = NULL, *memory = NULL, *min_memory = NULL,
        *span = NULL, *local = NULL, *label = NULL, *priority = NULL,
        *timeout = NULL, *wait = NULL, *argv = NULL, *detach = NULL, *ttl = NULL,
        *owner = NULL, *env = NULL, *duration = NULL, *resume = NULL;
    json_error_t je;
    struct step_request *s = &a->step;

    /* Jansson's unpack costs per member the format names, present or not;
     * most acquires give a few common ones, which a short format decodes
     * (a subset of the full one: the members it leaves out stay NULL,
     * absent, as the full format would leave them). */
    if (unpack_if_only (o, "{s:o s:o s?o s?o s?o s?o s?o s?o s?o s?o s?o !}",
                        "op", &skip, "id", &skip, "ntasks", &ntasks,
                        "cpus_per_task", &cpt, "cores", &cores, "gpus", &gpus,
                        "memory", &memory, "label", &label, "argv", &argv,
                        "local", &local, "env", &env) != 0
        && unpack_request (o, &je,
                        "{s:o s:o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o"
                        " s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o !}",
                        "op", &skip, "id", &skip, "ntasks", &ntasks,
                        "cpus_per_task", &cpt, "min_tasks", &min_tasks,
                        "min_cpus_per_task", &min_cpt, "cores", &cores,
                        "min_cores", &min_cores, "gpus", &gpus, "min_gpus", &min_gpus,
                        "gpus_per_task", &gpt, "min_gpus_per_task", &min_gpt,
                        "memory", &memory, "min_memory", &min_memory,
                        "may_span_nodes", &span, "local", &local, "label", &label,
                        "priority", &priority, "timeout", &timeout, "wait", &wait,
                        "argv", &argv, "detach", &detach, "ttl", &ttl,
                        "owner_pid", &owner, "env", &env, "duration", &duration,
                        "resume", &resume) < 0)
        return unpack_error (c, &je);

    const struct { const char *name; json_t *v; int *dst; int min; } counts[] = {
        { "ntasks", ntasks, &s->ntasks, 1 },
        { "min_tasks", min_tasks, &s->min_tasks, 1 },
        { "cpus_per_task", cpt, &s->cpus_per_task, 1 },
        { "min_cpus_per_task", min_cpt, &s->min_cpus_per_task, 1 },
        { "cores", cores, &s->cores, 1 },
        { "min_cores", min_cores, &s->min_cores, 1 },
        { "gpus", gpus, &s->gpus, 0 },
        { "min_gpus", min_gpus, &s->min_gpus, 0 },
        { "gpus_per_task", gpt, &s->gpus_per_task, 0 },
        { "min_gpus_per_task", min_gpt, &s->min_gpus_per_task, 0 },
    };
    for (size_t i = 0; i < sizeof (counts) / sizeof (counts[0]); i++)
        if (get_i (c, counts[i].name, counts[i].v, counts[i].min, PROTO_MAX_COUNT,
                   counts[i].dst) < 0)
            return -1;
    json_int_t mem = s->memory, min_mem = s->min_memory;
    bool span_b = false;
    if (get_int (c, "memory", memory, 1, PROTO_MAX_MEMORY_MB, &mem) < 0
        || get_int (c, "min_memory", min_memory, 1, PROTO_MAX_MEMORY_MB, &min_mem) < 0
        || get_bool (c, "may_span_nodes", span, &span_b) < 0
        || get_bool (c, "local", local, &s->local) < 0
        || get_name (c, "label", label, &s->label) < 0
        || get_i (c, "priority", priority, -PROTO_MAX_PRIORITY, PROTO_MAX_PRIORITY,
                  &s->priority) < 0
        || get_seconds (c, "timeout", timeout, PROTO_MAX_SECONDS, &s->timeout) < 0
        || get_bool (c, "wait", wait, &a->wait) < 0
        || get_argv (c, "argv", argv, &s->argv) < 0
        || get_bool (c, "detach", detach, &a->detach) < 0
        || get_seconds (c, "ttl", ttl, PROTO_MAX_SECONDS, &a->ttl) < 0
        || get_i (c, "owner_pid", owner, 1, PROTO_MAX_PID, &a->owner_pid) < 0
        || get_bool (c, "env", env, &a->env) < 0
        || get_seconds (c, "duration", duration, PROTO_MAX_SECONDS, &a->duration) < 0
        || get_bool (c, "resume", resume, &a->resume) < 0)
        return -1;
    s->memory = mem;
    s->min_memory = min_mem;
    if (!absent (span))
        s->may_span_nodes = span_b;
    if (!a->detach && (a->ttl >= 0 || a->owner_pid > 0))
        return errprintf_code (c->err, c->code,
                               "%s: field '%s' applies to detached leases only; add \"detach\": true",
                               c->where, a->ttl >= 0 ? "ttl" : "owner_pid");
    return 0;
}

static int decode_render (const struct ctx *c, json_t *o, struct proto_render *r)
{
    json_t *skip, *placement, *ntasks = NULL, *cpt = NULL, *cap = NULL, *argv;
    json_error_t je;
    json_int_t cap_v = r->memory_cap;

    if (unpack_request (o, &je, "{s:o s:o s:o s?o s?o s?o s:o !}", "op", &skip,
                        "id", &skip, "placement", &placement, "ntasks", &ntasks,
                        "cpus_per_task", &cpt, "memory_cap", &cap, "argv", &argv) < 0)
        return unpack_error (c, &je);
    if (need (c, "placement", placement, "an object") < 0
        || need (c, "argv", argv, "a non-empty array of strings") < 0
        || decode_placement (c, placement, true, &r->placement) < 0
        || get_i (c, "ntasks", ntasks, 1, PROTO_MAX_COUNT, &r->ntasks) < 0
        || get_i (c, "cpus_per_task", cpt, 1, PROTO_MAX_COUNT, &r->cpus_per_task) < 0
        || get_int (c, "memory_cap", cap, 1, PROTO_MAX_MEMORY_MB, &cap_v) < 0
        || get_argv (c, "argv", argv, &r->argv) < 0)
        return -1;
    r->memory_cap = cap_v;
    return 0;
}

/* release, reclaim, resources: an op with one lease id, required or not. */
static int decode_lease_op (const struct ctx *c, json_t *o, bool required,
                            char **lease)
{
    json_t *skip, *v = NULL;
    json_error_t je;
    if (unpack_request (o, &je, required ? "{s:o s:o s:o !}" : "{s:o s:o s?o !}",
                        "op", &skip, "id", &skip, "lease", &v) < 0)
        return unpack_error (c, &je);
    if (required && need (c, "lease", v, "a lease id") < 0)
        return -1;
    return get_name (c, "lease", v, lease);
}

static int decode_body (const struct ctx *c, json_t *o, struct proto_request *r)
{
    json_t *skip, *v = NULL, *cores = NULL, *gpus = NULL;
    json_error_t je;

    switch (r->op) {
    case PROTO_HELLO:
        return decode_hello (c, o, r);
    case PROTO_ACQUIRE:
        return decode_acquire (c, o, &r->acquire);
    case PROTO_RELEASE:
        return decode_lease_op (c, o, true, &r->release.lease);
    case PROTO_RECLAIM:
        return decode_lease_op (c, o, true, &r->reclaim.lease);
    case PROTO_RENDER:
        return decode_render (c, o, &r->render);
    case PROTO_PLACED:
        if (unpack_request (o, &je, "{s:o s:o s:o s:o s?o !}", "op", &skip, "id", &skip,
                            "lease", &v, "cores", &cores, "gpu_ids", &gpus) < 0)
            return unpack_error (c, &je);
        if (get_name (c, "lease", v, &r->placed.lease) < 0
            || get_ids (c, "cores", cores, &r->placed.cores, &r->placed.ncores) < 0
            || (!absent (gpus) && get_ids (c, "gpu_ids", gpus, &r->placed.gpu_ids,
                                           &r->placed.ngpu_ids) < 0))
            return -1;
        if (r->placed.ncores < 1)
            return bad (c, "cores", "a non-empty array of ids", cores);
        return 0;
    case PROTO_RESOURCES:
        return decode_lease_op (c, o, false, &r->resources.lease);
    case PROTO_STATUS: {
        json_t *q = NULL;
        if (unpack_request (o, &je, "{s:o s:o s?o s?o !}", "op", &skip, "id", &skip,
                            "time_left", &v, "queue_only", &q) < 0)
            return unpack_error (c, &je);
        if (get_bool (c, "time_left", v, &r->status.time_left) < 0)
            return -1;
        return get_bool (c, "queue_only", q, &r->status.queue_only);
    }
    case PROTO_WATCH:
        if (unpack_request (o, &je, "{s:o s:o s?o !}", "op", &skip, "id", &skip,
                            "history", &v) < 0)
            return unpack_error (c, &je);
        return get_bool (c, "history", v, &r->watch.history);
    case PROTO_SHUTDOWN:
        if (unpack_request (o, &je, "{s:o s:o s?o !}", "op", &skip, "id", &skip,
                            "mode", &v) < 0)
            return unpack_error (c, &je);
        if (absent (v) || (json_is_string (v) && !strcmp (json_string_value (v), "drain")))
            r->shutdown.mode = PROTO_SHUTDOWN_DRAIN;
        else if (json_is_string (v) && !strcmp (json_string_value (v), "force"))
            r->shutdown.mode = PROTO_SHUTDOWN_FORCE;
        else
            return bad (c, "mode", "\"drain\" or \"force\"", v);
        return 0;
    }
    return errprintf_code (c->err, PROTO_ERR_INTERNAL, "op %d has no decoder", r->op);
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
    char got[64];
    struct ctx c = { "request", PROTO_ERR_INVALID_REQUEST, err };
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
        describe (o, got, sizeof (got));
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
        bad (&c, "id", "an integer or a string of at most 255 bytes", id);
        json_decref (o);
        return -1;
    }
    req->id = json_incref (id);
    if (!op || !json_is_string (op)) {
        if (op)
            bad (&c, "op", "a string, one of " OP_LIST, op);
        else
            errprintf_code (err, c.code, "request has no 'op' (one of " OP_LIST ")");
        json_decref (o);
        return -1;
    }
    int k = 0;
    while (k < NOPS && strcmp (json_string_value (op), op_names[k]))
        k++;
    if (k == NOPS) {
        describe (op, got, sizeof (got));
        json_decref (o);
        return errprintf_code (err, c.code, "unknown op %s; known ops: " OP_LIST, got);
    }
    proto_request_init (&r, (enum proto_op) k);
    c.where = op_names[k];
    if (decode_body (&c, o, &r) < 0) {
        proto_request_free (&r);
        json_decref (o);
        return -1;
    }
    r.id = req->id;
    *req = r;
    json_decref (o);
    return 0;
}

/* ---- requests: encoding (clients) ------------------------------------- */

static int set_new (json_t *o, const char *key, json_t *v)
{
    return v ? json_object_set_new (o, key, v) : -1;
}

static int set_count (json_t *o, const char *key, json_int_t v)
{
    return v == STEP_UNSET ? 0 : set_new (o, key, json_integer (v));
}

static int encode_acquire (json_t *o, const struct proto_acquire *a)
{
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
        rc |= set_new (o, "may_span_nodes", json_boolean (s->may_span_nodes));
    if (s->local)
        rc |= set_new (o, "local", json_true ());
    if (s->label)
        rc |= set_new (o, "label", json_string (s->label));
    if (s->priority)
        rc |= set_new (o, "priority", json_integer (s->priority));
    if (s->timeout >= 0)
        rc |= set_new (o, "timeout", json_real (s->timeout));
    if (!a->wait)
        rc |= set_new (o, "wait", json_false ());
    if (s->argv)
        rc |= set_new (o, "argv", strv_json (s->argv));
    if (a->detach)
        rc |= set_new (o, "detach", json_true ());
    if (a->ttl >= 0)
        rc |= set_new (o, "ttl", json_real (a->ttl));
    if (a->owner_pid > 0)
        rc |= set_new (o, "owner_pid", json_integer (a->owner_pid));
    if (a->env)
        rc |= set_new (o, "env", json_true ());
    if (a->duration >= 0)
        rc |= set_new (o, "duration", json_real (a->duration));
    if (a->resume)
        rc |= set_new (o, "resume", json_true ());
    return rc;
}

static int encode_render (json_t *o, const struct proto_render *r)
{
    int rc = set_new (o, "placement", placement_json (&r->placement))
             | set_new (o, "ntasks", json_integer (r->ntasks))
             | set_new (o, "argv", strv_json (r->argv));
    if (r->cpus_per_task > 0)
        rc |= set_new (o, "cpus_per_task", json_integer (r->cpus_per_task));
    if (r->memory_cap >= 0)
        rc |= set_new (o, "memory_cap", json_integer (r->memory_cap));
    return rc;
}

json_t *proto_encode_request (const struct proto_request *req)
{
    if ((int) req->op < 0 || (int) req->op >= NOPS)
        return NULL;
    json_t *o = json_pack ("{s:s s:O}", "op", op_names[req->op], "id",
                           req->id ? req->id : json_null ());
    int rc = o ? 0 : -1;
    switch (req->op) {
    case PROTO_HELLO:
        if (o && req->hello.version > 0)
            rc = set_new (o, "version", json_integer (req->hello.version));
        break;
    case PROTO_ACQUIRE:
        rc = o ? encode_acquire (o, &req->acquire) : -1;
        break;
    case PROTO_RELEASE:
        rc = o && req->release.lease ? set_new (o, "lease", json_string (req->release.lease))
                                     : -1;
        break;
    case PROTO_RECLAIM:
        rc = o && req->reclaim.lease ? set_new (o, "lease", json_string (req->reclaim.lease))
                                     : -1;
        break;
    case PROTO_RENDER:
        rc = o && req->render.argv ? encode_render (o, &req->render) : -1;
        break;
    case PROTO_PLACED:
        rc = o && req->placed.lease && req->placed.ncores > 0
             ? set_new (o, "lease", json_string (req->placed.lease))
               | set_new (o, "cores", ids_json (req->placed.cores, req->placed.ncores))
               | (req->placed.ngpu_ids < 0 ? 0 : set_new (o, "gpu_ids", ids_json (
                      req->placed.gpu_ids, req->placed.ngpu_ids)))
             : -1;
        break;
    case PROTO_RESOURCES:
        if (o && req->resources.lease)
            rc = set_new (o, "lease", json_string (req->resources.lease));
        break;
    case PROTO_STATUS:
        if (o && req->status.time_left)
            rc = set_new (o, "time_left", json_true ());
        if (o && rc == 0 && req->status.queue_only)
            rc = set_new (o, "queue_only", json_true ());
        break;
    case PROTO_WATCH:
        if (o && req->watch.history)
            rc = set_new (o, "history", json_true ());
        break;
    case PROTO_SHUTDOWN:
        if (o)
            rc = set_new (o, "mode", json_string (req->shutdown.mode == PROTO_SHUTDOWN_FORCE
                                                      ? "force" : "drain"));
        break;
    }
    if (rc < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

/* ---- replies and events ----------------------------------------------- */

static json_t *ok_shell (json_t *id)
{
    return json_pack ("{s:O s:b}", "id", id ? id : json_null (), "ok", 1);
}

/* Copy the members of body into o, except id and ok. */
static json_t *merge (json_t *o, const json_t *body)
{
    const char *key;
    json_t *v;
    if (!o || !body)
        return o;
    json_object_foreach ((json_t *) body, key, v)
        if (strcmp (key, "id") && strcmp (key, "ok") && json_object_set (o, key, v) < 0) {
            json_decref (o);
            return NULL;
        }
    return o;
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when s[0] does not
 * start one (a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short). */
static int utf8_seq (const unsigned char *s)
{
    int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
          : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)
        || (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

/* Messages quote what a client sent (the parser's "near '...'", a value cut
 * to 40 bytes): a byte that is not valid UTF-8 there would make the reply
 * impossible to encode, and cost the client its connection. Each such byte
 * becomes '?'. */
static void utf8_clean (const char *in, char *out, size_t size)
{
    const unsigned char *p = (const unsigned char *) in;
    size_t o = 0;
    while (*p && o + 1 < size) {
        int n = utf8_seq (p);
        if (n == 0) {
            out[o++] = '?';
            p++;
            continue;
        }
        if (o + (size_t) n >= size)
            break;
        memcpy (out + o, p, (size_t) n);
        o += (size_t) n;
        p += n;
    }
    out[o] = '\0';
}

json_t *proto_error_reply (json_t *id, const berth_error_t *err)
{
    const char *code = err && err->code ? err->code : PROTO_ERR_INTERNAL;
    char text[sizeof (err->text)];
    utf8_clean (err && err->text[0] ? err->text : "unknown error", text, sizeof (text));
    return json_pack ("{s:O s:b s:{s:s s:s}}", "id", id ? id : json_null (), "ok", 0,
                      "error", "code", code, "message", text);
}

json_t *proto_hello_reply (json_t *id, int version)
{
    return json_pack ("{s:O s:b s:i s:[i] s:s}", "id", id ? id : json_null (), "ok", 1,
                      "version", version, "versions", PROTO_VERSION, "server",
                      "berthd " BERTH_VERSION);
}

json_t *proto_lease_json (const struct proto_lease *l)
{
    if (!l->id)
        return NULL;
    json_t *o = json_pack ("{s:s s:s? s:o s:o? s:o? s:o* s:o}", "lease", l->id,
                           "label", l->label, "placement", placement_json (&l->placement),
                           "memory_cap", l->memory_cap >= 0 ? json_integer (l->memory_cap) : NULL,
                           "budget_mb", l->budget_mb >= 0 ? json_integer (l->budget_mb) : NULL,
                           "argv", l->launch.argv ? strv_json (l->launch.argv) : NULL,
                           "env_delta", env_delta_json (&l->launch));
    if (o && ((l->env && set_new (o, "env", env_json (l->env, l->nenv)) < 0)
              || (l->owner_pid > 0 && set_new (o, "owner_pid", json_integer (l->owner_pid)) < 0)
              || (l->granted >= 0 && set_new (o, "granted", json_real (l->granted)) < 0))) {
        json_decref (o);
        return NULL;
    }
    return o;
}

json_t *proto_acquire_reply (json_t *id, const struct proto_lease *lease)
{
    json_t *body = proto_lease_json (lease);
    json_t *o = body ? merge (ok_shell (id), body) : NULL;
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
                      "argv", strv_json (launch->argv), "env_delta",
                      env_delta_json (launch));
}

json_t *proto_ok_reply (json_t *id, json_t *body)
{
    return merge (ok_shell (id), body);
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

json_t *proto_event_granted (double time, const struct proto_lease *lease)
{
    json_t *body = proto_lease_json (lease);
    json_t *o = body ? merge (json_pack ("{s:s s:f}", "event", "granted", "time", time),
                              body)
                     : NULL;
    json_decref (body);
    return o;
}

json_t *proto_event_waited (double time, const char *label, int position,
                            const char *why)
{
    return json_pack ("{s:s s:f s:s? s:i s:s}", "event", "waited", "time", time,
                      "label", label, "position", position, "why", why ? why : "");
}

json_t *proto_event_released (double time, const char *lease, const char *label,
                              const char *reason)
{
    return lease ? json_pack ("{s:s s:f s:s s:s? s:s}", "event", "released", "time",
                              time, "lease", lease, "label", label, "reason",
                              reason ? reason : "released")
                 : NULL;
}

json_t *proto_event_refused (double time, const char *label, const berth_error_t *why)
{
    char text[sizeof (why->text)];
    utf8_clean (why ? why->text : "", text, sizeof (text));
    return json_pack ("{s:s s:f s:s? s:{s:s s:s}}", "event", "refused", "time", time,
                      "label", label, "error", "code",
                      why && why->code ? why->code : PROTO_ERR_INTERNAL, "message", text);
}

json_t *proto_event_allocation (double time, const char *job_id, const char *machine,
                                json_t *nodes)
{
    return nodes ? json_pack ("{s:s s:f s:s? s:s? s:o}", "event", "allocation", "time",
                              time, "job_id", job_id, "machine", machine, "nodes", nodes)
                 : NULL;
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

/* ---- client side ------------------------------------------------------- */

int proto_parse_message (const char *line, size_t len, json_t **msg,
                         berth_error_t *err)
{
    json_error_t je;
    json_t *o;
    if (len > PROTO_MAX_REPLY)
        return errprintf_code (err, PROTO_ERR_TOO_LARGE,
                               "reply of %zu bytes is over the limit of %d bytes",
                               len, PROTO_MAX_REPLY);
    if (!(o = json_loadb (line, len, JSON_REJECT_DUPLICATES, &je)))
        return errprintf_code (err, PROTO_ERR_INTERNAL,
                               "berthd sent a line that is not JSON: %s", je.text);
    if (!json_is_object (o)) {
        json_decref (o);
        return errprintf_code (err, PROTO_ERR_INTERNAL,
                               "berthd sent JSON that is not an object");
    }
    *msg = o;
    return 0;
}

bool proto_is_event (const json_t *msg)
{
    return json_is_string (json_object_get (msg, "event"));
}

int proto_reply_status (const json_t *msg, berth_error_t *err)
{
    json_t *ok = json_object_get (msg, "ok");
    const char *code, *message;
    json_error_t je;
    if (!json_is_boolean (ok))
        return errprintf_code (err, PROTO_ERR_INTERNAL,
                               "berthd sent a reply without 'ok' true or false");
    if (json_is_true (ok))
        return 0;
    if (json_unpack_ex ((json_t *) msg, &je, 0, "{s:{s:s s:s}}", "error", "code", &code,
                        "message", &message) < 0)
        return errprintf_code (err, PROTO_ERR_INTERNAL,
                               "berthd sent an error reply without code and message: %s",
                               je.text);
    const char *known = proto_error_code (code);
    if (!*message)          /* still a reason to give the user */
        return errprintf_code (err, known ? known : "error",
                               "berthd refused the request (%s) without "
                               "saying why", code);
    if (known)
        return errprintf_code (err, known, "%s", message);
    return errprintf_code (err, "error", "%s (%s)", message, code);
}

int proto_decode_hello_reply (const json_t *msg, int *version, berth_error_t *err)
{
    struct ctx c = { "hello reply", PROTO_ERR_INTERNAL, err };
    json_t *v;
    json_error_t je;
    int x = 0;
    if (json_unpack_ex ((json_t *) msg, &je, 0, "{s:o}", "version", &v) < 0)
        return unpack_error (&c, &je);
    if (need (&c, "version", v, "a version number") < 0 || get_i (&c, "version", v, 1, INT_MAX, &x) < 0)
        return -1;
    *version = x;
    return 0;
}

int proto_decode_placement (const json_t *v, struct placement *out,
                            berth_error_t *err)
{
    struct ctx c = { "placement", PROTO_ERR_INVALID_REQUEST, err };
    if (!json_is_object (v))
        return bad (&c, "placement", "an object", v);
    return decode_placement (&c, v, true, out);
}

/* Replies are read leniently: a later server may add members. */
int proto_decode_lease (const json_t *msg, struct proto_lease *out, berth_error_t *err)
{
    struct ctx c = { "lease", PROTO_ERR_INTERNAL, err };
    json_t *id, *label = NULL, *placement, *cap = NULL, *budget = NULL, *argv = NULL,
                *delta = NULL, *env = NULL, *owner = NULL, *granted = NULL;
    json_error_t je;
    struct proto_lease l;
    json_int_t cap_v = -1, budget_v = -1;

    proto_lease_init (&l);
    if (json_unpack_ex ((json_t *) msg, &je, 0, "{s:o s?o s:o s?o s?o s?o s?o s?o s?o s?o}",
                        "lease", &id, "label", &label, "placement", &placement,
                        "memory_cap", &cap, "budget_mb", &budget, "argv", &argv,
                        "env_delta", &delta, "env", &env, "owner_pid", &owner,
                        "granted", &granted) < 0)
        return unpack_error (&c, &je);
    if (need (&c, "lease", id, "a lease id") < 0
        || need (&c, "placement", placement, "an object") < 0)
        return -1;
    if (get_name (&c, "lease", id, &l.id) < 0
        || get_name (&c, "label", label, &l.label) < 0
        || decode_placement (&c, placement, false, &l.placement) < 0
        || get_int (&c, "memory_cap", cap, 0, PROTO_MAX_MEMORY_MB, &cap_v) < 0
        || get_int (&c, "budget_mb", budget, 0, PROTO_MAX_MEMORY_MB, &budget_v) < 0
        || decode_launch (&c, argv, delta, &l.launch) < 0
        || (!absent (env) && get_env_items (&c, "env", env, &l.env, &l.nenv) < 0)
        || get_i (&c, "owner_pid", owner, 1, INT_MAX, &l.owner_pid) < 0
        || get_seconds (&c, "granted", granted, 1e12, &l.granted) < 0) {
        proto_lease_free (&l);
        return -1;
    }
    l.memory_cap = cap_v;
    l.budget_mb = budget_v;
    *out = l;
    return 0;
}

int proto_decode_render_reply (const json_t *msg, struct launch *launch,
                               berth_error_t *err)
{
    struct ctx c = { "render reply", PROTO_ERR_INTERNAL, err };
    json_t *argv = json_object_get (msg, "argv");
    if (need (&c, "argv", argv, "a non-empty array of strings") < 0)
        return -1;
    return decode_launch (&c, argv, json_object_get (msg, "env_delta"), launch);
}

/* The allocation event's nodes, each checked as the report will read it. */
static int decode_allocation_event (const struct ctx *c, const json_t *msg,
                                    struct proto_event *ev)
{
    json_t *job = NULL, *machine = NULL, *nodes = NULL, *node;
    size_t i;
    json_unpack ((json_t *) msg, "{s?o s?o s?o}", "job_id", &job, "machine", &machine,
                 "nodes", &nodes);
    if (get_name (c, "job_id", job, &ev->job_id) < 0
        || get_name (c, "machine", machine, &ev->machine) < 0)
        return -1;
    if (!json_is_array (nodes) || json_array_size (nodes) == 0)
        return bad (c, "nodes", "a non-empty array of nodes", nodes ? nodes : json_null ());
    json_array_foreach (nodes, i, node) {
        char field[48], *name = NULL;
        int n = 0;
        json_t *cores = json_object_get (node, "cores");
        snprintf (field, sizeof (field), "nodes[%zu]", i);
        if (!json_is_object (node))
            return bad (c, field, "an object", node);
        snprintf (field, sizeof (field), "nodes[%zu].name", i);
        if (need (c, field, json_object_get (node, "name"), "a node name") < 0
            || get_name (c, field, json_object_get (node, "name"), &name) < 0)
            return -1;
        free (name);
        snprintf (field, sizeof (field), "nodes[%zu].cores", i);
        if (!json_is_string (cores))
            return bad (c, field, "a core id set such as \"0-127\"", cores ? cores : json_null ());
        snprintf (field, sizeof (field), "nodes[%zu].ncores", i);
        if (get_i (c, field, json_object_get (node, "ncores"), 0, PROTO_MAX_COUNT, &n) < 0)
            return -1;
        snprintf (field, sizeof (field), "nodes[%zu].gpus", i);
        if (get_i (c, field, json_object_get (node, "gpus"), 0, PROTO_MAX_COUNT, &n) < 0)
            return -1;
    }
    ev->nodes = json_incref (nodes);
    return 0;
}

int proto_decode_event (const json_t *msg, struct proto_event *out, berth_error_t *err)
{
    struct ctx c = { "event", PROTO_ERR_INTERNAL, err };
    json_t *name, *time, *label = NULL, *position = NULL, *why = NULL, *lease = NULL;
    json_error_t je;
    struct proto_event ev = { 0 };
    const char *code = NULL, *message = NULL;
    int k = 0;

    proto_lease_init (&ev.lease);
    if (json_unpack_ex ((json_t *) msg, &je, 0, "{s:o s:o}", "event", &name, "time",
                        &time) < 0)
        return unpack_error (&c, &je);
    while (k < NEVENTS && !(json_is_string (name)
                            && !strcmp (json_string_value (name), event_names[k])))
        k++;
    if (k == NEVENTS)
        return bad (&c, "event", "granted, waited, released, refused or allocation", name);
    ev.kind = (enum proto_event_kind) k;
    if (!json_is_number (time))
        return bad (&c, "time", "a number", time);
    ev.time = json_number_value (time);
    switch (ev.kind) {
    case PROTO_EV_GRANTED:
        if (proto_decode_lease (msg, &ev.lease, err) < 0)
            return -1;
        break;
    case PROTO_EV_WAITED:
        json_unpack ((json_t *) msg, "{s?o s?o s?o}", "label", &label, "position",
                     &position, "why", &why);
        if (get_name (&c, "label", label, &ev.label) < 0
            || get_i (&c, "position", position, 0, INT_MAX, &ev.position) < 0)
            goto fail;
        if (json_is_string (why) && !(ev.why = strdup (json_string_value (why))))
            goto oom;
        break;
    case PROTO_EV_RELEASED:
        json_unpack ((json_t *) msg, "{s?o s?o s?o}", "lease", &lease, "label", &label,
                     "reason", &why);
        if (need (&c, "lease", lease, "a lease id") < 0
            || get_name (&c, "lease", lease, &ev.lease.id) < 0
            || get_name (&c, "label", label, &ev.lease.label) < 0)
            goto fail;
        if (json_is_string (why) && !(ev.why = strdup (json_string_value (why))))
            goto oom;
        break;
    case PROTO_EV_REFUSED:
        if (json_unpack_ex ((json_t *) msg, &je, 0, "{s?o s:{s:s s:s}}", "label", &label,
                            "error", "code", &code, "message", &message) < 0) {
            unpack_error (&c, &je);
            goto fail;
        }
        if (get_name (&c, "label", label, &ev.label) < 0)
            goto fail;
        errprintf_code (&ev.error, proto_error_code (code) ? proto_error_code (code) : "error",
                        "%s", message);
        break;
    case PROTO_EV_ALLOCATION:
        if (decode_allocation_event (&c, msg, &ev) < 0)
            goto fail;
        break;
    }
    *out = ev;
    return 0;
oom:
    errprintf_code (err, PROTO_ERR_INTERNAL, "out of memory");
fail:
    proto_event_free (&ev);
    return -1;
}
