/* SPDX-License-Identifier: MIT */
/* Text shared by reference (shared_text.h). */
#include <stdlib.h>
#include <string.h>

#include "shared_text.h"

struct shared_text *shared_text_new (const char *s, size_t len)
{
    struct shared_text *t = malloc (sizeof (*t) + len + 1);
    if (!t)
        return NULL;
    t->refs = 1;
    t->len = len;
    memcpy (t->data, s, len);
    t->data[len] = '\0';
    return t;
}

struct shared_text *shared_text_ref (struct shared_text *t)
{
    t->refs++;
    return t;
}

void shared_text_unref (struct shared_text *t)
{
    if (t && --t->refs == 0)
        free (t);
}
