/* SPDX-License-Identifier: MIT */
/* json_scan.h: the strict reader of the protocol's hot lines. jsmn finds the
 * tokens; it is lenient about what lies between them (a missing comma or
 * colon passes), so every byte between tokens is checked here against the
 * JSON grammar, and every scalar against the subset the header promises. */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"

#define DECLINE 1
#define MAX_INTEGER_DIGITS 18   /* always within a 64-bit json_int_t */
#define MAX_REAL_BYTES 63       /* json_scan_real copies a real to read it */

static bool is_space (char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The walk: pos is the next byte to read; each check consumes one value. */
struct walk {
    struct json_scan *s;
    const jsmntok_t *tok;
    int len;
    int pos;
    int next;                   /* the next token to consume */
};

static void skip_space (struct walk *w)
{
    while (w->pos < w->len && is_space (w->s->line[w->pos]))
        w->pos++;
}

static bool expect (struct walk *w, char c)
{
    skip_space (w);
    if (w->pos >= w->len || w->s->line[w->pos] != c)
        return false;
    w->pos++;
    return true;
}

/* Printable ASCII and no escape: the bytes are the value as jansson reads it. */
static bool plain_string (const char *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] > 0x7e || p[i] == '\\' || p[i] == '"')
            return false;
    return true;
}

/* The JSON number grammar without an exponent; -1 when it is not one. */
static int number_kind (const char *p, int n)
{
    int i = 0, digits = 0;
    if (i < n && p[i] == '-')
        i++;
    if (i < n && p[i] == '0') {
        i++;
        digits = 1;
    }
    else
        while (i < n && p[i] >= '0' && p[i] <= '9') {
            i++;
            digits++;
        }
    if (digits == 0)
        return -1;
    if (i == n)
        return digits <= MAX_INTEGER_DIGITS ? JSON_SCAN_INTEGER : -1;
    if (p[i] != '.')
        return -1;
    int frac = 0;
    for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++)
        frac++;
    return frac > 0 && i == n && n <= MAX_REAL_BYTES ? JSON_SCAN_REAL : -1;
}

static int scalar_kind (const char *p, int n)
{
    if (n == 4 && !memcmp (p, "true", 4))
        return JSON_SCAN_TRUE;
    if (n == 5 && !memcmp (p, "false", 5))
        return JSON_SCAN_FALSE;
    if (n == 4 && !memcmp (p, "null", 4))
        return JSON_SCAN_NULL;
    return number_kind (p, n);
}

static bool same_key (const struct json_scan *s, int a, int b)
{
    const struct json_scan_token *x = &s->tokens[a], *y = &s->tokens[b];
    return x->end - x->start == y->end - y->start
           && !memcmp (s->line + x->start, s->line + y->start, (size_t) (x->end - x->start));
}

static bool check_value (struct walk *w, bool key);

/* jansson (JSON_REJECT_DUPLICATES) refuses an object with a key twice. */
static bool keys_unique (const struct json_scan *s, int object)
{
    const struct json_scan_token *t = s->tokens;
    for (int a = object + 1; a < t[object].next; a = t[a + 1].next)
        for (int b = object + 1; b < a; b = t[b + 1].next)
            if (same_key (s, a, b))
                return false;
    return true;
}

static bool check_container (struct walk *w, int i, const jsmntok_t *t)
{
    bool object = t->type == JSMN_OBJECT;
    w->pos = t->start + 1;
    for (int k = 0; k < t->size; k++) {
        if (k > 0 && !expect (w, ','))
            return false;
        if (object && (!check_value (w, true) || !expect (w, ':')))
            return false;
        if (!check_value (w, false))
            return false;
    }
    if (!expect (w, object ? '}' : ']') || w->pos != t->end)
        return false;
    w->s->tokens[i].size = t->size;
    w->s->tokens[i].next = w->next;
    return !object || keys_unique (w->s, i);
}

/* The token w->next, starting after optional whitespace at w->pos. */
static bool check_value (struct walk *w, bool key)
{
    skip_space (w);
    int i = w->next;
    if (i >= w->s->ntokens)
        return false;
    const jsmntok_t *t = &w->tok[i];
    struct json_scan_token *out = &w->s->tokens[i];
    const char *p = w->s->line + t->start;
    int n = t->end - t->start;
    w->next++;
    out->start = t->start;
    out->end = t->end;
    out->size = 0;
    out->next = i + 1;
    switch (t->type) {
    case JSMN_OBJECT:
    case JSMN_ARRAY:
        if (key || t->start != w->pos)
            return false;
        out->kind = t->type == JSMN_OBJECT ? JSON_SCAN_OBJECT : JSON_SCAN_ARRAY;
        return check_container (w, i, t);
    case JSMN_STRING:
        /* jsmn's span is inside the quotes */
        if (t->start != w->pos + 1 || !plain_string (p, n))
            return false;
        out->kind = JSON_SCAN_STRING;
        w->pos = t->end + 1;
        return true;
    case JSMN_PRIMITIVE: {
        int kind = scalar_kind (p, n);
        if (key || t->start != w->pos || kind < 0)
            return false;
        out->kind = (enum json_scan_kind) kind;
        w->pos = t->end;
        return true;
    }
    default:
        return false;
    }
}

int json_scan_parse (struct json_scan *s, const char *line, size_t len)
{
    jsmntok_t tok[JSON_SCAN_MAX_TOKENS];
    jsmn_parser parser;
    s->line = line;
    s->ntokens = 0;
    if (len > (size_t) 1 << 30)
        return DECLINE;
    jsmn_init (&parser);
    int n = jsmn_parse (&parser, line, len, tok, JSON_SCAN_MAX_TOKENS);
    if (n < 1 || tok[0].type != JSMN_OBJECT)
        return DECLINE;
    s->ntokens = n;
    struct walk w = { s, tok, (int) len, 0, 0 };
    if (!check_value (&w, false) || w.next != n) {
        s->ntokens = 0;
        return DECLINE;
    }
    skip_space (&w);
    if (w.pos != w.len) {       /* anything after the object */
        s->ntokens = 0;
        return DECLINE;
    }
    return 0;
}

int json_scan_skip (const struct json_scan *s, int i)
{
    return s->tokens[i].next;
}

bool json_scan_is (const struct json_scan *s, int i, const char *name)
{
    const struct json_scan_token *t = &s->tokens[i];
    size_t n = (size_t) (t->end - t->start);
    return t->kind == JSON_SCAN_STRING && strlen (name) == n
           && !memcmp (s->line + t->start, name, n);
}

bool json_scan_given (const struct json_scan *s, int i)
{
    return i >= 0 && s->tokens[i].kind != JSON_SCAN_NULL;
}

/* Which of names key token k is; -1 for none. (json_scan_is without its
 * strlen per name: a key's bytes hold no NUL, so strncmp stops within a
 * shorter name, and only a name that matches all len bytes is read at len.) */
static int member_of (const struct json_scan *s, int k, const char *const *names, int n)
{
    const struct json_scan_token *t = &s->tokens[k];
    size_t len = (size_t) (t->end - t->start);
    const char *key = s->line + t->start;
    if (t->kind != JSON_SCAN_STRING || len == 0)
        return -1;            /* no name is empty */
    for (int m = 0; m < n; m++)
        if (names[m][0] == key[0] && strncmp (names[m], key, len) == 0
            && names[m][len] == '\0')
            return m;
    return -1;
}

int json_scan_members (const struct json_scan *s, int obj, const char *const *names,
                       int n, int *at)
{
    if (s->tokens[obj].kind != JSON_SCAN_OBJECT)
        return DECLINE;
    for (int m = 0; m < n; m++)
        at[m] = -1;
    int k = obj + 1;
    for (int i = 0; i < s->tokens[obj].size; i++) {
        int m = member_of (s, k, names, n);
        if (m < 0)
            return DECLINE;
        at[m] = k + 1;          /* keys_unique has refused a key given twice */
        k = json_scan_skip (s, k + 1);
    }
    return 0;
}

bool json_scan_string_in (const struct json_scan *s, int i, size_t min, size_t max)
{
    const struct json_scan_token *t = &s->tokens[i];
    size_t n = (size_t) (t->end - t->start);
    return t->kind == JSON_SCAN_STRING && n >= min && n <= max;
}

int json_scan_integer_in (const struct json_scan *s, int i, long long min,
                          long long max, long long *out)
{
    long long v;
    if (json_scan_integer (s, i, &v) < 0 || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int json_scan_integer (const struct json_scan *s, int i, long long *out)
{
    const struct json_scan_token *t = &s->tokens[i];
    if (t->kind != JSON_SCAN_INTEGER)
        return -1;
    long long v = 0;
    const char *p = s->line + t->start, *end = s->line + t->end;
    bool negative = *p == '-';
    for (p += negative; p < end; p++)
        v = v * 10 + (*p - '0');   /* at most 18 digits: no overflow */
    *out = negative ? -v : v;
    return 0;
}

int json_scan_real (const struct json_scan *s, int i, double *out)
{
    const struct json_scan_token *t = &s->tokens[i];
    long long v;
    if (t->kind == JSON_SCAN_INTEGER && json_scan_integer (s, i, &v) == 0) {
        *out = (double) v;
        return 0;
    }
    if (t->kind != JSON_SCAN_REAL)
        return -1;
    /* strtod, as jansson reads reals (in the C locale: berth never sets
     * LC_NUMERIC); the span is copied for its terminating NUL */
    char buf[MAX_REAL_BYTES + 1];
    int n = t->end - t->start;
    memcpy (buf, s->line + t->start, (size_t) n);
    buf[n] = '\0';
    errno = 0;
    double d = strtod (buf, NULL);
    if (errno == ERANGE)
        return -1;
    *out = d;
    return 0;
}

int json_scan_strdup (const struct json_scan *s, int i, bool allow_null, char **out)
{
    const struct json_scan_token *t = &s->tokens[i];
    if (allow_null && t->kind == JSON_SCAN_NULL) {
        *out = NULL;
        return 0;
    }
    if (t->kind != JSON_SCAN_STRING)
        return -1;
    char *v = strndup (s->line + t->start, (size_t) (t->end - t->start));
    if (!v)
        return -1;
    *out = v;
    return 0;
}
