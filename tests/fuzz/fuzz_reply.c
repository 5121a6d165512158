/* SPDX-License-Identifier: MIT */
/* Fuzz target: the client's fast lane for grant and release replies
 * (reply_fast.h). Whatever the line, the fast lane declines it or reads
 * exactly what the jansson path reads (proto_parse_message,
 * proto_reply_status, proto_decode_lease): never a line that path refuses,
 * never another value. */
#include "fuzz.h"
#include "reply_fast_agree.h"

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    return 0;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char why[128] = "";
    /* the bytes as they are, inner NULs and all: libberth hands over a line
     * by its length */
    int rc = reply_fast_agrees ((const char *) data, size, why, sizeof (why));
    FUZZ_CHECK (rc >= 0, "%s: %.*s", why, (int) (size < 400 ? size : 400), (const char *) data);
    return 0;
}
