/* SPDX-License-Identifier: MIT */
/* The ops of the protocol: each one's name on the wire, decoder and
 * encoder, built from PROTO_OPS (codec.h), by enum proto_op. */
#include <stdio.h>
#include <string.h>

#include "codec_internal.h"

const struct codec_op codec_ops[PROTO_NOPS] = {
#define OP(e, name) [PROTO_##e] = { #name, codec_decode_##name, codec_encode_##name },
    PROTO_OPS (OP)
#undef OP
};

const char *proto_op_name (enum proto_op op)
{
    return (int) op >= 0 && (int) op < PROTO_NOPS ? codec_ops[op].name : "unknown";
}

int codec_op_find (const char *name)
{
    for (int k = 0; name && k < PROTO_NOPS; k++)
        if (!strcmp (name, codec_ops[k].name))
            return k;
    return -1;
}

void codec_op_list (char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < PROTO_NOPS && n < size; k++) {
        int w = snprintf (buf + n, size - n, "%s%s", k ? ", " : "", codec_ops[k].name);
        n += w > 0 ? (size_t) w : 0;
    }
}
