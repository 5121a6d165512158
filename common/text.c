/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

void text_trim_span (const char **start, size_t *len)
{
    const char *s = *start;
    size_t n = *len;
    while (n && isspace ((unsigned char) *s))
        s++, n--;
    while (n && isspace ((unsigned char) s[n - 1]))
        n--;
    *start = s;
    *len = n;
}

char *text_trim_dup (const char *text)
{
    if (!text)
        return NULL;
    size_t n = strlen (text);
    text_trim_span (&text, &n);
    if (n == 0) {
        errno = 0;
        return NULL;
    }
    return strndup (text, n);
}

void text_first_line (const char *text, char *buf, size_t size)
{
    text += strspn (text, " \t\r\n");
    snprintf (buf, size, "%.*s", (int) strcspn (text, "\r\n"), text);
    for (size_t n = strlen (buf); n && isspace ((unsigned char) buf[n - 1]);)
        buf[--n] = '\0';
}

void text_buf_put (struct text_buf *b, const char *p, size_t n)
{
    if (b->bad)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;   /* most lines fit at once */
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *s = realloc (b->s, cap);
        if (!s) {
            b->bad = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy (b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void text_buf_puts (struct text_buf *b, const char *p)
{
    text_buf_put (b, p, strlen (p));
}

void text_buf_int (struct text_buf *b, long long v)
{
    char d[24], *p = d + sizeof (d);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long) v
                                 : (unsigned long long) v;
    do
        *--p = (char) ('0' + u % 10);
    while ((u /= 10));
    if (v < 0)
        *--p = '-';
    text_buf_put (b, p, (size_t) (d + sizeof (d) - p));
}

void text_buf_shell_word (struct text_buf *b, const char *text,
                          bool always_quote)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_@%+=:,./-";
    if (!always_quote && *text && strspn (text, safe) == strlen (text)) {
        text_buf_puts (b, text);
        return;
    }
    text_buf_put (b, "'", 1);
    for (const char *p = text; *p;) {
        size_t run = strcspn (p, "'");
        text_buf_put (b, p, run);
        p += run;
        if (*p == '\'') {
            text_buf_puts (b, "'\\''");
            p++;
        }
    }
    text_buf_put (b, "'", 1);
}

size_t text_utf8_chars (const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char) *s & 0xC0) != 0x80;
    return n;
}

size_t text_utf8_prefix (const char *s, size_t chars)
{
    size_t i = 0, n = 0;
    for (; s[i]; i++) {
        if (((unsigned char) s[i] & 0xC0) != 0x80) {
            if (n == chars)
                break;
            n++;
        }
    }
    return i;
}

double text_seconds_or (const char *text, double lo, double hi, double dflt)
{
    if (!text || !*text)
        return dflt;
    char *end;
    double s = strtod (text, &end);
    return !*end && s >= lo && s <= hi ? s : dflt;
}
