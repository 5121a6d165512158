/* SPDX-License-Identifier: MIT */
/* Shared by the fuzz targets: libFuzzer's entry points, a check that aborts
 * (libFuzzer and the corpus replay both report an abort as a crash), and
 * the input as a C string. */
#ifndef BERTH_FUZZ_H
#define BERTH_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

#define FUZZ_CHECK(cond, ...)                                                 \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf (stderr, "%s:%d: fuzz check failed: %s: ", __FILE__,      \
                     __LINE__, #cond);                                        \
            fprintf (stderr, __VA_ARGS__);                                    \
            fputc ('\n', stderr);                                             \
            abort ();                                                         \
        }                                                                     \
    } while (0)

/* The input with a terminating NUL (inner NULs end the string early, as
 * they would for any C caller). */
static inline char *fuzz_cstr (const uint8_t *data, size_t size)
{
    char *s = malloc (size + 1);
    if (!s)
        abort ();
    if (size)
        memcpy (s, data, size);
    s[size] = '\0';
    return s;
}

/* Inputs with numbers of 4 digits or more expand to up to a million items
 * and take milliseconds each; only one in 8 of them (by length) is run, so
 * that the fuzzer spends its time on the grammar rather than on memset. */
static inline int fuzz_skip_big (const uint8_t *data, size_t size)
{
    int run = 0;
    for (size_t i = 0; i < size; i++) {
        run = data[i] >= '0' && data[i] <= '9' ? run + 1 : 0;
        if (run >= 4)
            return size % 8 != 0;
    }
    return 0;
}

#endif
