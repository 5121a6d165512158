/* SPDX-License-Identifier: MIT */
/* Errors travel as a small struct with a text buffer; errprintf fills it and
 * returns -1 so that `return errprintf (err, "...")` reads naturally. */
#ifndef BERTH_ERROR_H
#define BERTH_ERROR_H

#include <stdarg.h>

typedef struct berth_error {
    /* Stable machine-readable code ("invalid_request", "render", ...); never NULL
     * after a call to errprintf/errprintf_code. */
    const char *code;
    char text[1024];
} berth_error_t;

/* Fill err (may be NULL) with a printf-style message and the generic code
 * "error". Returns -1. Keeps errno. */
int errprintf (berth_error_t *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Same with an explicit stable code (a string literal). */
int errprintf_code (berth_error_t *err, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

int verrprintf_code (berth_error_t *err, const char *code, const char *fmt,
                     va_list ap);

/* Prefix an existing message ("file.cfg: " + old text). Returns -1. */
int errprefix (berth_error_t *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

void error_clear (berth_error_t *err);

#endif
