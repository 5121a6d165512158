/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "srun_steps.h"

/* The value of "key=" in the line [line, end), as [*v, return), or NULL. */
static const char *field (const char *line, const char *end, const char *key,
                          const char **v)
{
    size_t kl = strlen (key);
    for (const char *p = line; p < end; ) {
        const char *q = p;
        while (q < end && *q != ' ')
            q++;
        if ((size_t) (q - p) > kl && !strncmp (p, key, kl)) {
            *v = p + kl;
            return q;
        }
        p = q < end ? q + 1 : q;
    }
    return NULL;
}

static size_t short_len (const char *h, size_t len)
{
    const char *dot = memchr (h, '.', len);
    return dot ? (size_t) (dot - h) : len;
}

static bool same_host (const char *a, size_t al, const char *b, size_t bl)
{
    if (al == bl && !strncmp (a, b, al))
        return true;
    size_t as = short_len (a, al), bs = short_len (b, bl);
    return as == bs && as > 0 && !strncmp (a, b, as);
}

bool srun_step_find (const char *text, const char *host, long pid, char *id, size_t n)
{
    if (pid <= 0)
        return false;     /* the batch and extern steps have "(null):0" */
    for (const char *line = text; line && *line; ) {
        const char *end = strchr (line, '\n');
        if (!end)
            end = line + strlen (line);
        const char *v, *ve, *s, *se;
        if ((ve = field (line, end, "SrunHost:Pid=", &v))
            && (se = field (line, end, "StepId=", &s))) {
            const char *colon = NULL;
            for (const char *c = v; c < ve; c++)
                if (*c == ':')
                    colon = c;    /* the last: a host name has none */
            char *pe;
            long p = colon ? strtol (colon + 1, &pe, 10) : -1;
            if (colon && pe == ve && p == pid
                && same_host (v, (size_t) (colon - v), host, strlen (host))
                && (size_t) (se - s) < n) {
                memcpy (id, s, (size_t) (se - s));
                id[se - s] = '\0';
                return true;
            }
        }
        line = *end ? end + 1 : end;
    }
    return false;
}

bool srun_step_listed (const char *text, const char *id)
{
    size_t il = strlen (id);
    for (const char *line = text; line && *line; ) {
        const char *end = strchr (line, '\n');
        if (!end)
            end = line + strlen (line);
        const char *a = line, *b = end;
        while (a < b && *a == ' ')
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\r'))
            b--;
        if ((size_t) (b - a) == il && !strncmp (a, id, il))
            return true;
        line = *end ? end + 1 : end;
    }
    return false;
}
