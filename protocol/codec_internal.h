/* SPDX-License-Identifier: MIT */
/* What the codec's files share and nothing outside protocol/ includes: the
 * context of a decoding, the field checks (codec_check.c) and the JSON of
 * shared values (codec_build.c). */
#ifndef BERTH_PROTO_CODEC_INTERNAL_H
#define BERTH_PROTO_CODEC_INTERNAL_H

#include "codec.h"

/* Where a value is decoded: the message prefix and the code of a refusal
 * (invalid_request for requests, internal for a server's malformed reply). */
struct codec_ctx {
    const char *where;
    const char *code;
    berth_error_t *err;
};

/* ---- op_table.c: the table of ops, indexed by enum proto_op */
struct codec_op {
    const char *name;             /* on the wire */
    /* r has the op and its defaults; o is the request object: 0, or -1
     * with c->err naming the field (codec_request.c) */
    int (*decode) (const struct codec_ctx *c, json_t *o, struct proto_request *r);
    /* the op's members added to o, which has op and id: 0, or -1 when req
     * cannot be sent (codec_request_encode.c) */
    int (*encode) (json_t *o, const struct proto_request *req);
};

extern const struct codec_op codec_ops[PROTO_NOPS];

#define CODEC_OP_FUNCTIONS(e, name)                                          \
    int codec_decode_##name (const struct codec_ctx *c, json_t *o,           \
                             struct proto_request *r);                       \
    int codec_encode_##name (json_t *o, const struct proto_request *req);
PROTO_OPS (CODEC_OP_FUNCTIONS)
#undef CODEC_OP_FUNCTIONS

/* The op's number, or -1 when name is none of them. */
int codec_op_find (const char *name);
/* "hello, acquire, ..., placed": every op's name, for messages. */
void codec_op_list (char *buf, size_t size);

/* ---- codec_check.c: each returns 0, or -1 with c->err naming the field */
void codec_strv_free (char **v);
void codec_env_items_free (struct env_set_item *items, int n);
void codec_describe (const json_t *v, char *buf, size_t size);
int codec_bad (const struct codec_ctx *c, const char *field, const char *expect,
               const json_t *v);
bool codec_absent (const json_t *v);
int codec_need (const struct codec_ctx *c, const char *field, const json_t *v,
                const char *expect);
int codec_get_int (const struct codec_ctx *c, const char *field, const json_t *v,
                   json_int_t min, json_int_t max, json_int_t *out);
int codec_get_i (const struct codec_ctx *c, const char *field, const json_t *v,
                 int min, int max, int *out);
int codec_get_bool (const struct codec_ctx *c, const char *field, const json_t *v,
                    bool *out);
int codec_get_seconds (const struct codec_ctx *c, const char *field,
                       const json_t *v, double max, double *out);
int codec_get_name (const struct codec_ctx *c, const char *field, const json_t *v,
                    char **out);
int codec_get_argv (const struct codec_ctx *c, const char *field, const json_t *v,
                    char ***out);
int codec_get_ids (const struct codec_ctx *c, const char *field, const json_t *v,
                   int **ids, int *count);
int codec_unpack_error (const struct codec_ctx *c, const json_error_t *je);
int codec_decode_placement (const struct codec_ctx *c, const json_t *v,
                            bool unnamed_ok, struct placement *out);
int codec_get_env_items (const struct codec_ctx *c, const char *field,
                         const json_t *v, struct env_set_item **items, int *n);
int codec_decode_launch (const struct codec_ctx *c, const json_t *argv,
                         const json_t *delta, struct launch *out);

/* ---- codec_build.c: new objects, NULL on bad input or out of memory */
json_t *codec_ids_json (const int *ids, int n);
json_t *codec_strv_json (char *const *v);
json_t *codec_placement_json (const struct placement *p);
json_t *codec_env_delta_json (const struct launch *l);
json_t *codec_env_json (const struct env_set_item *items, int n);
/* o[key] = v, stolen; -1 when v is NULL. */
int codec_set_new (json_t *o, const char *key, json_t *v);
json_t *codec_merge (json_t *o, const json_t *body);
void codec_utf8_clean (const char *in, char *out, size_t size);

#endif
