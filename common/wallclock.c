/* SPDX-License-Identifier: MIT */
/* Wall times read in the forms sbatch and qsub take, and written back. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "wallclock.h"

/* One field is at most 9 digits, so the sum cannot overflow long long. */
#define FIELD_DIGITS_MAX 9

/* Up to `max` colon-separated digit fields of text into f (most significant
 * first); the count, or -1 when a field is empty, too long or not digits, or
 * there are more. */
static int fields (const char *text, long long *f, int max)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        int digits = 0;
        long long v = 0;
        while (isdigit ((unsigned char) *p) && digits <= FIELD_DIGITS_MAX) {
            v = v * 10 + (*p++ - '0');
            digits++;
        }
        if (digits == 0 || digits > FIELD_DIGITS_MAX || n == max)
            return -1;
        f[n++] = v;
        if (*p == '\0')
            return n;
        if (*p++ != ':')
            return -1;
    }
}

int wallclock_parse (const char *text, long long *seconds)
{
    long long f[3];
    if (!text || fields (text, f, 3) != 3)
        return -1;
    *seconds = f[0] * 3600 + f[1] * 60 + f[2];
    return 0;
}

int wallclock_read (const char *text, enum wallclock_dialect d,
                    long long *seconds)
{
    long long f[3], days = 0, s;
    const char *rest = text;
    int n;

    if (!text)
        return -1;
    const char *dash = strchr (text, '-');
    if (dash) {
        /* D-HH, D-HH:MM, D-HH:MM:SS: sbatch's forms with days */
        long long dd[1];
        char head[FIELD_DIGITS_MAX + 2];
        size_t len = (size_t) (dash - text);
        if (len == 0 || len >= sizeof (head))
            return -1;
        memcpy (head, text, len);
        head[len] = '\0';
        if (fields (head, dd, 1) != 1)
            return -1;
        days = dd[0];
        rest = dash + 1;
        if ((n = fields (rest, f, 3)) < 0)
            return -1;
        s = f[0] * 3600 + (n > 1 ? f[1] * 60 : 0) + (n > 2 ? f[2] : 0);
    } else {
        if ((n = fields (rest, f, 3)) < 0)
            return -1;
        if (n == 1)
            s = d == WALLCLOCK_PBS ? f[0] : f[0] * 60;
        else if (n == 2)
            s = f[0] * 60 + f[1];
        else
            s = f[0] * 3600 + f[1] * 60 + f[2];
    }
    *seconds = days * 86400 + s;
    return 0;
}

enum wallclock_dialect wallclock_dialect_of (const char *system)
{
    return system && !strcmp (system, "pbs") ? WALLCLOCK_PBS : WALLCLOCK_SLURM;
}

const char *wallclock_format (long long seconds, char *buf, size_t size)
{
    if (seconds < 0)
        seconds = 0;
    snprintf (buf, size, "%02lld:%02lld:%02lld", seconds / 3600,
              seconds / 60 % 60, seconds % 60);
    return buf;
}

void wallclock_format_brief (double seconds, char *buf, size_t size)
{
    long long s = seconds > 0 && isfinite (seconds) ? (long long) seconds : 0;
    if (s < 60)
        snprintf (buf, size, "%llds", s);
    else if (s < 3600)
        snprintf (buf, size, "%lldm%02llds", s / 60, s % 60);
    else if (s < 86400)
        snprintf (buf, size, "%lldh%02lldm", s / 3600, s % 3600 / 60);
    else
        snprintf (buf, size, "%lldd%lldh", s / 86400, s % 86400 / 3600);
}
