/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int verrprintf_code (berth_error_t *err, const char *code, const char *fmt,
                     va_list ap)
{
    int saved = errno;
    if (err) {
        err->code = code ? code : "error";
        vsnprintf (err->text, sizeof (err->text), fmt, ap);
    }
    errno = saved;
    return -1;
}

int errprintf (berth_error_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    verrprintf_code (err, "error", fmt, ap);
    va_end (ap);
    return -1;
}

int errprintf_code (berth_error_t *err, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    verrprintf_code (err, code, fmt, ap);
    va_end (ap);
    return -1;
}

int errprefix (berth_error_t *err, const char *fmt, ...)
{
    int saved = errno;
    if (err) {
        char prefix[256];
        char old[sizeof (err->text)];
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (prefix, sizeof (prefix), fmt, ap);
        va_end (ap);
        /* prefix + old text, truncated to fit (kept explicit: gcc warns
         * about truncation through snprintf's "%s%s") */
        size_t plen = strlen (prefix), room = sizeof (err->text) - 1;
        memcpy (old, err->text, sizeof (old));
        old[sizeof (old) - 1] = '\0';
        if (plen > room)
            plen = room;
        size_t olen = strnlen (old, room - plen);
        memcpy (err->text, prefix, plen);
        memcpy (err->text + plen, old, olen);
        err->text[plen + olen] = '\0';
        if (!err->code)
            err->code = "error";
    }
    errno = saved;
    return -1;
}

void error_clear (berth_error_t *err)
{
    if (err) {
        err->code = NULL;
        err->text[0] = '\0';
    }
}
