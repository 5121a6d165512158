/* Wall-clock parsing, comparison and capping. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>

#include "wallclock.h"

/* One field is at most 9 digits, so the sum cannot overflow long long. */
#define FIELD_DIGITS_MAX 9

int wallclock_parse (const char *text, long long *seconds)
{
    long long field[3];
    const char *p = text;

    if (!text)
        return -1;
    for (int i = 0; i < 3; i++) {
        int digits = 0;
        field[i] = 0;
        while (isdigit ((unsigned char) *p) && digits < FIELD_DIGITS_MAX + 1) {
            field[i] = field[i] * 10 + (*p++ - '0');
            digits++;
        }
        if (digits == 0 || digits > FIELD_DIGITS_MAX)
            return -1;
        if (*p != (i < 2 ? ':' : '\0'))
            return -1;
        if (i < 2)
            p++;
    }
    *seconds = field[0] * 3600 + field[1] * 60 + field[2];
    return 0;
}

int wallclock_compare (const char *a, const char *b, int *cmp)
{
    long long sa, sb;
    if (wallclock_parse (a, &sa) < 0 || wallclock_parse (b, &sb) < 0)
        return -1;
    *cmp = (sa > sb) - (sa < sb);
    return 0;
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

const char *cap_wall_time (const char *desired, const char *max)
{
    int cmp;
    if (!desired || !*desired || !max || !*max)
        return desired;
    if (wallclock_compare (desired, max, &cmp) < 0 || cmp <= 0)
        return desired;
    return max;
}
