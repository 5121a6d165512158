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
        memcpy (old, err->text, sizeof (old));
        snprintf (err->text, sizeof (err->text), "%s%s", prefix, old);
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
