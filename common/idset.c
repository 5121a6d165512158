/* SPDX-License-Identifier: MIT */
/* Id sets as text: ranges ("2-4,6") and hex masks ("0x3"). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"
#include "text.h"

#define IDSET_MAX (1 << 20)

static int cmp_int (const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sort ascending and drop repeats in place; returns the new count. */
static int sort_unique (int *ids, int count)
{
    int n = 0, sorted = 1;
    for (int i = 1; i < count && sorted; i++)
        sorted = ids[i - 1] < ids[i];
    if (sorted)     /* the usual case (placements, node core lists) */
        return count;
    qsort (ids, (size_t)count, sizeof (int), cmp_int);
    for (int i = 0; i < count; i++)
        if (n == 0 || ids[n - 1] != ids[i])
            ids[n++] = ids[i];
    return n;
}

/* One id: decimal digits only, at most IDSET_MAX. */
static int parse_id (const char *s, size_t len, int *id)
{
    long v = 0;
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit ((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
        if (v > IDSET_MAX)
            return -1;
    }
    *id = (int)v;
    return 0;
}

static int grow (int **ids, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    int *n = realloc (*ids, ncap * sizeof (int));
    if (!n)
        return -1;
    *ids = n;
    *cap = ncap;
    return 0;
}

/* Parse "N" and "A-B" items separated by commas into *ids in the order
 * written, repeats kept (as_set: repeats may be compacted away, so that
 * repeated ranges cannot grow the array without bound). */
static int parse_items (const char *text, bool as_set, int **ids, size_t *count,
                        berth_error_t *err)
{
    int *v = NULL;
    size_t n = 0, cap = 0;
    const char *p = text ? text : "";

    while (isspace ((unsigned char)*p))
        p++;
    if (*p == '\0') {
        *ids = NULL;
        *count = 0;
        return 0;
    }
    for (;;) {
        const char *end = strchr (p, ',');
        size_t len = end ? (size_t)(end - p) : strlen (p);
        const char *s = p;
        size_t slen = len;
        text_trim_span (&s, &slen);
        const char *dash = memchr (s, '-', slen);
        int lo, hi;
        if (dash == s) {
            free (v);
            return errprintf_code (err, "idset", "id set \"%s\": item \"%.*s\" is "
                                   "negative or malformed; ids are whole numbers >= 0",
                                   text, (int)slen, s);
        }
        if (dash ? parse_id (s, (size_t)(dash - s), &lo) < 0
                       || parse_id (dash + 1, slen - (size_t)(dash - s) - 1, &hi) < 0
                 : parse_id (s, slen, &lo) < 0) {
            free (v);
            return errprintf_code (err, "idset", "id set \"%s\": item \"%.*s\" is not "
                                   "an id or a range like 2-4 (ids 0 to %d)",
                                   text, (int)slen, s, IDSET_MAX);
        }
        if (!dash)
            hi = lo;
        if (hi < lo) {
            free (v);
            return errprintf_code (err, "idset", "id set \"%s\": range \"%.*s\" is "
                                   "reversed; write it as %d-%d", text, (int)slen, s,
                                   hi, lo);
        }
        /* repeated ranges must not grow without bound: compact a set first;
         * a list (order and repeats kept) is refused past the bound */
        if (n + (size_t)(hi - lo) + 1 > 2 * ((size_t)IDSET_MAX + 1)) {
            if (!as_set) {
                free (v);
                return errprintf_code (err, "idset", "id list \"%.40s...\" names more "
                                       "than %d ids", text, 2 * (IDSET_MAX + 1));
            }
            n = (size_t)sort_unique (v, (int)n);
        }
        if (grow (&v, &cap, n + (size_t)(hi - lo) + 1) < 0) {
            free (v);
            return errprintf_code (err, "idset", "id set \"%s\": out of memory", text);
        }
        for (int i = lo; i <= hi; i++)
            v[n++] = i;
        if (!end)
            break;
        p = end + 1;
    }
    *count = n;
    *ids = v;
    return 0;
}

int idset_parse (const char *text, int **ids, int *count, berth_error_t *err)
{
    int *v;
    size_t n;
    if (parse_items (text, true, &v, &n, err) < 0)
        return -1;
    *count = v ? sort_unique (v, (int)n) : 0;
    *ids = v;
    return 0;
}

int idlist_parse (const char *text, int **ids, int *count, berth_error_t *err)
{
    int *v;
    size_t n;
    if (parse_items (text, false, &v, &n, err) < 0)
        return -1;
    *count = (int)n;
    *ids = v;
    return 0;
}

/* Appends to a bounded buffer and counts what the full text needs. */
struct sbuf {
    char *buf;
    size_t size;
    size_t len;   /* length of the full text so far */
};

static void sb_printf (struct sbuf *b, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void sb_printf (struct sbuf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start (ap, fmt);
    int k = vsnprintf (tmp, sizeof (tmp), fmt, ap);
    va_end (ap);
    if (k < 0)
        return;
    for (int i = 0; i < k; i++, b->len++)
        if (b->size && b->len < b->size - 1)
            b->buf[b->len] = tmp[i];
}

static int sb_finish (struct sbuf *b)
{
    if (b->size)
        b->buf[b->len < b->size ? b->len : b->size - 1] = '\0';
    return (int)b->len;
}

int idset_format (const int *ids, int count, char *buf, size_t size)
{
    struct sbuf b = { buf, size, 0 };
    int *s = NULL;

    if (count > 0) {
        if (!(s = malloc ((size_t)count * sizeof (int))))
            return -1;
        memcpy (s, ids, (size_t)count * sizeof (int));
        count = sort_unique (s, count);
    }
    for (int i = 0; i < count;) {
        int j = i;
        while (j + 1 < count && s[j + 1] == s[j] + 1)
            j++;
        sb_printf (&b, "%s%d", i ? "," : "", s[i]);
        if (j > i)
            sb_printf (&b, "-%d", s[j]);
        i = j + 1;
    }
    free (s);
    return sb_finish (&b);
}

int idset_hexmask (const int *ids, int count, char *buf, size_t size)
{
    struct sbuf b = { buf, size, 0 };
    int max = -1;

    for (int i = 0; i < count; i++)
        if (ids[i] > max)
            max = ids[i];
    /* One nibble per 4 ids, most significant first: works for any id size. */
    int ndigits = max < 0 ? 1 : max / 4 + 1;
    unsigned char *nib = calloc ((size_t)ndigits, 1);
    if (!nib)
        return -1;
    for (int i = 0; i < count; i++)
        if (ids[i] >= 0)
            nib[ids[i] / 4] |= (unsigned char)(1u << (ids[i] % 4));
    sb_printf (&b, "0x");
    for (int d = ndigits - 1; d >= 0; d--)
        sb_printf (&b, "%x", nib[d]);
    free (nib);
    return sb_finish (&b);
}
