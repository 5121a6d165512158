/* SPDX-License-Identifier: MIT */
/* The stable error codes of replies (codec.h), as a table of the known ones. */
#include <string.h>

#include "codec.h"

#define ERROR_CODE(name) PROTO_ERR_##name,
static const char *const error_codes[] = { PROTO_ERROR_NAMES (ERROR_CODE) };
#undef ERROR_CODE

const char *proto_error_code (const char *code)
{
    for (size_t i = 0; code && i < sizeof (error_codes) / sizeof (error_codes[0]); i++)
        if (!strcmp (code, error_codes[i]))
            return error_codes[i];
    return NULL;
}
