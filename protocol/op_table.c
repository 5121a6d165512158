/* The ops of the protocol and their names on the wire. */
#include "codec_internal.h"

const char *const codec_op_names[] = {
    [PROTO_HELLO] = "hello",         [PROTO_ACQUIRE] = "acquire",
    [PROTO_RELEASE] = "release",     [PROTO_RENDER] = "render",
    [PROTO_RESOURCES] = "resources", [PROTO_STATUS] = "status",
    [PROTO_WATCH] = "watch",         [PROTO_SHUTDOWN] = "shutdown",
    [PROTO_RECLAIM] = "reclaim",     [PROTO_PLACED] = "placed",
};
const int codec_nops = (int) (sizeof (codec_op_names) / sizeof (codec_op_names[0]));

const char *proto_op_name (enum proto_op op)
{
    return (int) op >= 0 && (int) op < codec_nops ? codec_op_names[op] : "unknown";
}
