#include <ctype.h>
#include <errno.h>
#include <stdio.h>
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
