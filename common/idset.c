/* Id sets as range text. STOPGAP written on the alloc branch so that
 * topology/gpus/allocation link and test; the idset owner's version replaces
 * this file at merge. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"

#define IDSET_MAX (1 << 20)

static int cmp_int (const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

/* Sorted copy without repeats; *n updated. NULL on allocation failure. */
static int *sorted_unique (const int *ids, int *n)
{
    int *v = malloc ((*n ? *n : 1) * sizeof (int));
    if (!v)
        return NULL;
    memcpy (v, ids, *n * sizeof (int));
    qsort (v, *n, sizeof (int), cmp_int);
    int k = 0;
    for (int i = 0; i < *n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    *n = k;
    return v;
}

static int parse_id (const char *s, const char *end, const char *item,
                     long *out, berth_error_t *err)
{
    while (s < end && isspace ((unsigned char) *s))
        s++;
    while (end > s && isspace ((unsigned char) end[-1]))
        end--;
    if (s == end || !isdigit ((unsigned char) *s))
        return errprintf (err, "id set item '%s' is not a number or range", item);
    long v = 0;
    for (; s < end; s++) {
        if (!isdigit ((unsigned char) *s))
            return errprintf (err, "id set item '%s' is not a number or range",
                              item);
        v = v * 10 + (*s - '0');
        if (v > IDSET_MAX)
            return errprintf (err, "id set item '%s' is above %d", item,
                              IDSET_MAX);
    }
    *out = v;
    return 0;
}

int idset_parse (const char *text, int **ids, int *count, berth_error_t *err)
{
    int *v = NULL, n = 0, cap = 0;
    const char *p = text;
    while (*p) {
        const char *comma = strchr (p, ',');
        const char *end = comma ? comma : p + strlen (p);
        char item[64];
        snprintf (item, sizeof (item), "%.*s", (int) (end - p), p);
        const char *dash = memchr (p, '-', end - p);
        long lo, hi;
        if (parse_id (p, dash ? dash : end, item, &lo, err) < 0
            || (dash && parse_id (dash + 1, end, item, &hi, err) < 0))
            goto fail;
        if (!dash)
            hi = lo;
        if (hi < lo) {
            errprintf (err, "id set item '%s' is a reversed range", item);
            goto fail;
        }
        for (long i = lo; i <= hi; i++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                int *nv = realloc (v, cap * sizeof (int));
                if (!nv) {
                    errprintf (err, "out of memory parsing an id set");
                    goto fail;
                }
                v = nv;
            }
            v[n++] = (int) i;
        }
        if (!comma)
            break;
        p = comma + 1;
        if (!*p) {
            errprintf (err, "id set '%s' ends with a comma", text);
            goto fail;
        }
    }
    int *s = sorted_unique (v ? v : (int[]){0}, &n);
    free (v);
    if (!s)
        return errprintf (err, "out of memory parsing an id set");
    *ids = s;
    *count = n;
    return 0;
fail:
    free (v);
    return -1;
}

int idset_format (const int *ids, int count, char *buf, size_t size)
{
    int n = count;
    int *v = sorted_unique (ids, &n);
    size_t len = 0;
    if (size)
        buf[0] = '\0';
    if (!v)
        return -1;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        char item[32];
        int k = j > i ? snprintf (item, sizeof (item), "%s%d-%d",
                                  i ? "," : "", v[i], v[j])
                      : snprintf (item, sizeof (item), "%s%d", i ? "," : "",
                                  v[i]);
        if (len + k < size)
            memcpy (buf + len, item, k + 1);
        else if (len < size)
            buf[len] = '\0';
        len += k;
        i = j + 1;
    }
    free (v);
    return (int) len;
}

int idset_hexmask (const int *ids, int count, char *buf, size_t size)
{
    int top = -1;
    for (int i = 0; i < count; i++)
        if (ids[i] > top)
            top = ids[i];
    int ndigits = top < 0 ? 1 : top / 4 + 1;
    size_t need = 2 + ndigits;
    char *s = malloc (need + 1);
    if (!s)
        return -1;
    memcpy (s, "0x", 2);
    for (int d = 0; d < ndigits; d++) {
        int nib = 0, base = (ndigits - 1 - d) * 4;
        for (int i = 0; i < count; i++)
            if (ids[i] >= base && ids[i] < base + 4)
                nib |= 1 << (ids[i] - base);
        s[2 + d] = "0123456789abcdef"[nib];
    }
    s[need] = '\0';
    if (size)
        snprintf (buf, size, "%s", s);
    free (s);
    return (int) need;
}
