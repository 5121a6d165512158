/* SPDX-License-Identifier: MIT */
/* JSON of the values requests, replies and events share (placements,
 * launches, environments, id lists), and the cleaning of quoted text. */
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"

json_t *codec_ids_json (const int *ids, int n)
{
    json_t *a = json_array ();
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new (a, json_integer (ids[i])) < 0) {
            json_decref (a);
            return NULL;
        }
    return a;
}

json_t *codec_strv_json (char *const *v)
{
    json_t *a = json_array ();
    for (size_t i = 0; a && v && v[i]; i++)
        if (json_array_append_new (a, json_string (v[i])) < 0) {
            json_decref (a);
            return NULL;
        }
    return a;
}

json_t *codec_placement_json (const struct placement *p)
{
    json_t *nodes = json_array (), *cores = json_array (), *gpu_ids = NULL;
    for (int i = 0; nodes && cores && i < p->nnodes; i++)
        if ((!p->nodes[i].name && p->nnodes > 1)   /* only one node goes unnamed */
            || (p->nodes[i].name
                && json_array_append_new (nodes, json_string (p->nodes[i].name)) < 0)
            || json_array_append_new (cores, codec_ids_json (p->nodes[i].cores,
                                                       p->nodes[i].ncores)) < 0)
            goto fail;
    /* Zero GPUs are stated as such; unknown indices of some GPUs are null;
     * per-node ids are one list per node. */
    if (p->node_gpu_ids) {
        if (!(gpu_ids = json_array ()))
            goto fail;
        for (int i = 0; i < p->nnodes; i++)
            if (json_array_append_new (gpu_ids, codec_ids_json (p->nodes[i].gpu_ids,
                                                          p->nodes[i].ngpu_ids)) < 0)
                goto fail;
    }
    else if (p->ngpu_ids > 0 || p->gpus == 0)
        if (!(gpu_ids = codec_ids_json (p->gpu_ids, p->ngpu_ids)))
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

json_t *codec_env_delta_json (const struct launch *l)
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

json_t *codec_env_json (const struct env_set_item *items, int n)
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

int codec_set_new (json_t *o, const char *key, json_t *v)
{
    return v ? json_object_set_new (o, key, v) : -1;
}

/* Copy the members of body into o, except id and ok. */
json_t *codec_merge (json_t *o, const json_t *body)
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
void codec_utf8_clean (const char *in, char *out, size_t size)
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
