/* SPDX-License-Identifier: MIT */
/* Immutable text shared by reference (shared_text.c): a large reply queued
 * on many connections at once without a copy for each. berthd is one
 * thread: the count is plain. The last unref frees it. */
#ifndef BERTHD_SHARED_TEXT_H
#define BERTHD_SHARED_TEXT_H

#include <stddef.h>

struct shared_text {
    unsigned refs;
    size_t len;
    char data[];                  /* len bytes and a NUL */
};

/* A copy of the len bytes at s, one reference held; NULL: out of memory. */
struct shared_text *shared_text_new (const char *s, size_t len);
struct shared_text *shared_text_ref (struct shared_text *t);
void shared_text_unref (struct shared_text *t);     /* NULL: nothing */

#endif
