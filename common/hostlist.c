/* SPDX-License-Identifier: MIT */
/* Slurm host-list grammar, expanded and compressed in-process. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "text.h"

#define MAX_DIGITS 9 /* numbers fit in a long everywhere */

struct names {
    char **v;
    int n, cap;
    size_t bytes; /* name text so far, NULs included */
};

static void names_clear (struct names *s)
{
    hostlist_free (s->v, s->n);
    s->v = NULL;
    s->n = s->cap = 0;
    s->bytes = 0;
}

static int names_push (struct names *s, const char *a, size_t alen,
                       const char *b, size_t blen, berth_error_t *err)
{
    if (s->n >= HOSTLIST_MAX)
        return errprintf (err, "host list expands to more than %d names",
                          HOSTLIST_MAX);
    if (alen + blen + 1 > HOSTLIST_MAX_BYTES - s->bytes)
        return errprintf (err, "host list expands to more than %d MiB of "
                          "names (%d names so far, the next %zu bytes long)",
                          HOSTLIST_MAX_BYTES >> 20, s->n, alen + blen);
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        char **v = realloc (s->v, cap * sizeof (char *));
        if (!v)
            return errprintf (err, "out of memory expanding a host list");
        s->v = v;
        s->cap = cap;
    }
    char *name = malloc (alen + blen + 1);
    if (!name)
        return errprintf (err, "out of memory expanding a host list");
    memcpy (name, a, alen);
    memcpy (name + alen, b, blen);
    name[alen + blen] = '\0';
    s->v[s->n++] = name;
    s->bytes += alen + blen + 1;
    return 0;
}

/* Digits of [s, e) as a number; error naming the item otherwise. */
static int parse_number (const char *s, const char *e, const char *item,
                         long *out, berth_error_t *err)
{
    if (s == e)
        return errprintf (err, "host list item '%s': empty number in a range",
                          item);
    if (e - s > MAX_DIGITS)
        return errprintf (err, "host list item '%s': number '%.*s' has more "
                          "than %d digits", item, (int) (e - s), s, MAX_DIGITS);
    long v = 0;
    for (const char *p = s; p < e; p++) {
        if (!isdigit ((unsigned char) *p))
            return errprintf (err, "host list item '%s': '%.*s' in brackets "
                              "is not a number or range", item, (int) (e - s),
                              s);
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

/* v in decimal, zero-padded to width, with its NUL: what "%0*ld" writes,
 * without printf's cost for each of 10,000 names. Returns the length. */
static int format_padded (char *out, long v, int width)
{
    char digits[MAX_DIGITS + 1];
    int n = 0;
    do {
        digits[n++] = (char) ('0' + v % 10);
        v /= 10;
    } while (v > 0);
    int len = n > width ? n : width;
    for (int i = 0; i < len - n; i++)
        out[i] = '0';
    for (int i = 0; i < n; i++)
        out[len - 1 - i] = digits[i];
    out[len] = '\0';
    return len;
}

/* Append every name of `rest` (brackets still to expand) prefixed by
 * `done`. `item` is the whole item, for messages. */
static int expand_rest (const char *done, size_t donelen, const char *rest,
                        const char *item, struct names *out,
                        berth_error_t *err)
{
    const char *open = strchr (rest, '[');
    if (!open)
        return names_push (out, done, donelen, rest, strlen (rest), err);
    const char *close = strchr (open, ']');
    size_t head = open - rest;
    char *buf = malloc (donelen + head + MAX_DIGITS + 1);
    if (!buf)
        return errprintf (err, "out of memory expanding a host list");
    memcpy (buf, done, donelen);
    memcpy (buf + donelen, rest, head);
    int rc = 0;
    for (const char *r = open + 1; rc == 0 && r < close;) {
        const char *end = memchr (r, ',', close - r);
        if (!end)
            end = close;
        const char *dash = memchr (r, '-', end - r);
        long lo, hi;
        if (parse_number (r, dash ? dash : end, item, &lo, err) < 0
            || (dash && parse_number (dash + 1, end, item, &hi, err) < 0)) {
            rc = -1;
            break;
        }
        if (!dash)
            hi = lo;
        if (hi < lo) {
            rc = errprintf (err, "host list item '%s': range '%.*s' runs "
                            "backwards", item, (int) (end - r), r);
            break;
        }
        int width = (int) ((dash ? dash : end) - r);
        for (long v = lo; rc == 0 && v <= hi; v++) {
            int k = format_padded (buf + donelen + head, v, width);
            rc = expand_rest (buf, donelen + head + k, close + 1, item, out,
                              err);
        }
        if (*end == ',' && end + 1 == close)
            rc = errprintf (err, "host list item '%s': empty range before "
                            "']'", item);
        r = end + 1;
    }
    free (buf);
    return rc;
}

/* Check one top-level item's brackets and characters, then expand it. */
static int expand_item (const char *item, struct names *out, berth_error_t *err)
{
    if (!*item)
        return errprintf (err, "host list has an empty item (two commas in a "
                          "row, or a comma at an end)");
    int depth = 0;
    for (const char *p = item; *p; p++) {
        if (isspace ((unsigned char) *p))
            return errprintf (err, "host list item '%s' contains white space",
                              item);
        if (*p == '[' && depth++)
            return errprintf (err, "host list item '%s' has nested brackets",
                              item);
        if (*p == ']' && depth-- == 0)
            return errprintf (err, "host list item '%s' has ']' without '['",
                              item);
        if (*p == '[' && p[1] == ']')
            return errprintf (err, "host list item '%s' has empty brackets",
                              item);
    }
    if (depth)
        return errprintf (err, "host list item '%s' has '[' without ']'", item);
    return expand_rest ("", 0, item, item, out, err);
}

int hostlist_expand (const char *text, char ***names, int *count,
                     berth_error_t *err)
{
    struct names out = { 0 };
    size_t len = strlen (text);
    text_trim_span (&text, &len);
    if (len == 0)
        return errprintf (err, "host list is empty");
    char *copy = strndup (text, len);
    if (!copy)
        return errprintf (err, "out of memory expanding a host list");
    /* Split at commas outside brackets. */
    int depth = 0, rc = 0;
    char *start = copy;
    for (char *p = copy;; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']')
            depth--;
        else if ((*p == ',' && depth == 0) || !*p) {
            char c = *p;
            *p = '\0';
            if ((rc = expand_item (start, &out, err)) < 0 || !c)
                break;
            start = p + 1;
        }
    }
    free (copy);
    if (rc < 0) {
        names_clear (&out);
        return -1;
    }
    *names = out.v;
    *count = out.n;
    return 0;
}

void hostlist_free (char **names, int count)
{
    for (int i = 0; i < count; i++)
        free (names[i]);
    free (names);
}

/* One compressed group: prefix<number>suffix with a padding width (0: none). */
struct group {
    const char *name; /* first member, for prefix/suffix text */
    int plen, slen;   /* prefix length; suffix length (at the name's end) */
    int width;
    int first; /* index of its first member in the input */
    long *nums;
    int n;     /* members; -1 for a name without a number */
};

/* Split name at its last digit run: returns 1 with the parts, 0 when the
 * name has no usable number (it then stands alone). */
static int split_name (const char *name, int *plen, int *slen, int *width,
                       long *num)
{
    int len = (int) strlen (name), e = len;
    while (e > 0 && !isdigit ((unsigned char) name[e - 1]))
        e--;
    int s = e;
    while (s > 0 && isdigit ((unsigned char) name[s - 1]))
        s--;
    if (s == e || e - s > MAX_DIGITS)
        return 0;
    *plen = s;
    *slen = len - e;
    *width = (e - s > 1 && name[s] == '0') ? e - s : 0;
    *num = strtol (name + s, NULL, 10);
    return 1;
}

bool hostlist_name_follows (const char *a, const char *b)
{
    int pa, sa, wa, pb, sb, wb;
    long na, nb;
    if (!split_name (a, &pa, &sa, &wa, &na)
        || !split_name (b, &pb, &sb, &wb, &nb))
        return false;
    size_t la = strlen (a), lb = strlen (b);
    return la == lb && pa == pb && sa == sb && nb == na + 1
           && !strncmp (a, b, (size_t) pa) && !strcmp (a + la - sa, b + lb - sb);
}

char *hostlist_range (const char *first, const char *last)
{
    int plen, slen, width;
    long num;
    char *s = NULL;
    if (!split_name (first, &plen, &slen, &width, &num))
        return strdup (first);
    int digits = (int) strlen (first) - plen - slen;
    if (asprintf (&s, "%.*s[%.*s-%.*s]%s", plen, first, digits, first + plen,
                  digits, last + plen, first + plen + digits) < 0)
        return NULL;
    return s;
}

static int cmp_long (const void *a, const void *b)
{
    long x = *(const long *) a, y = *(const long *) b;
    return (x > y) - (x < y);
}

/* Append text to a growing string; -1 on allocation failure. */
static int append (char **s, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
static int append (char **s, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start (ap, fmt);
        int k = vsnprintf (*s ? *s + *len : NULL, *s ? *cap - *len : 0, fmt,
                           ap);
        va_end (ap);
        if (*s && *len + k < *cap) {
            *len += k;
            return 0;
        }
        size_t ncap = (*cap + k + 1) * 2;
        char *ns = realloc (*s, ncap);
        if (!ns)
            return -1;
        *s = ns;
        *cap = ncap;
    }
}

static int format_group (const struct group *g, char **s, size_t *len,
                         size_t *cap)
{
    const char *suffix = g->name + strlen (g->name) - g->slen;
    qsort (g->nums, g->n, sizeof (long), cmp_long);
    int uniq = 0;
    for (int i = 0; i < g->n; i++)
        if (uniq == 0 || g->nums[uniq - 1] != g->nums[i])
            g->nums[uniq++] = g->nums[i];
    if (append (s, len, cap, "%.*s%s", g->plen, g->name, uniq > 1 ? "[" : "")
        < 0)
        return -1;
    for (int i = 0; i < uniq;) {
        int j = i;
        while (j + 1 < uniq && g->nums[j + 1] == g->nums[j] + 1)
            j++;
        if (append (s, len, cap, "%s%0*ld", i ? "," : "", g->width,
                    g->nums[i]) < 0
            || (j > i && append (s, len, cap, "-%0*ld", g->width, g->nums[j])
                < 0))
            return -1;
        i = j + 1;
    }
    return append (s, len, cap, "%s%s", uniq > 1 ? "]" : "", suffix);
}

/* One name as compress sees it: its split and where it came in. */
struct entry {
    const char *name;
    int plen, slen, width; /* plen < 0: no number, the name stands alone */
    long num;
    int index;
};

/* Orders names of one group together: by split shape, then by the text
 * around the number (the whole name when it has none). */
static int group_key_cmp (const struct entry *x, const struct entry *y)
{
    if (x->plen != y->plen)
        return x->plen < y->plen ? -1 : 1;
    if (x->plen < 0)
        return strcmp (x->name, y->name);
    if (x->slen != y->slen)
        return x->slen < y->slen ? -1 : 1;
    if (x->width != y->width)
        return x->width < y->width ? -1 : 1;
    int c = strncmp (x->name, y->name, (size_t) x->plen);
    return c ? c : strcmp (x->name + strlen (x->name) - x->slen,
                           y->name + strlen (y->name) - y->slen);
}

/* Group members together, each group's earliest member first. */
static int by_group (const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = group_key_cmp (x, y);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Groups in order of first appearance. */
static int by_first (const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

int hostlist_compress (const char *const *names, int count, char **text,
                       berth_error_t *err)
{
    size_t slots = count ? (size_t) count : 1;
    struct entry *e = calloc (slots, sizeof (*e));
    struct group *g = calloc (slots, sizeof (*g));
    long *nums = calloc (slots, sizeof (long));
    int ng = 0, rc = -1;
    char *s = NULL;
    size_t len = 0, cap = 0;
    if (!e || !g || !nums) {
        errprintf (err, "out of memory compressing a host list");
        goto done;
    }
    for (int i = 0; i < count; i++) {
        if (!*names[i] || strpbrk (names[i], "[], \t\n")) {
            errprintf (err, "host name '%s' cannot be put in a host list "
                       "(empty, or holds a bracket, comma or space)", names[i]);
            goto done;
        }
        e[i] = (struct entry){ .name = names[i], .index = i };
        if (!split_name (names[i], &e[i].plen, &e[i].slen, &e[i].width,
                         &e[i].num))
            e[i].plen = -1;
    }
    /* Sorting, not a search per name, keeps 100,000 distinct prefixes
     * (one name each) to n log n. */
    qsort (e, (size_t) count, sizeof (*e), by_group);
    for (int i = 0; i < count;) {
        int j = i + 1;
        while (j < count && group_key_cmp (&e[i], &e[j]) == 0)
            j++;
        struct group *k = &g[ng++];
        *k = (struct group){ .name = e[i].name, .plen = e[i].plen,
                             .slen = e[i].slen, .width = e[i].width,
                             .first = e[i].index, .nums = nums + i,
                             .n = e[i].plen < 0 ? -1 : j - i };
        for (int m = i; m < j; m++)
            nums[m] = e[m].num;
        i = j;
    }
    qsort (g, (size_t) ng, sizeof (*g), by_first);
    for (int k = 0; k < ng; k++) {
        if ((k && append (&s, &len, &cap, ",") < 0)
            || (g[k].n < 0 ? append (&s, &len, &cap, "%s", g[k].name)
                           : format_group (&g[k], &s, &len, &cap)) < 0) {
            errprintf (err, "out of memory compressing a host list");
            goto done;
        }
    }
    *text = s ? s : strdup ("");
    s = NULL;
    rc = *text ? 0 : errprintf (err, "out of memory compressing a host list");
done:
    free (s);
    free (e);
    free (g);
    free (nums);
    return rc;
}
