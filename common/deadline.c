/* SPDX-License-Identifier: MIT */
/* The allocation's end in the scheduler's words, and the check of a step's
 * stated duration against it. Times are local, as squeue and qstat print
 * them; mktime turns them into Unix seconds. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "deadline.h"
#include "text.h"
#include "wallclock.h"

const char *deadline_policy_name (enum deadline_policy p)
{
    return p == DEADLINE_WARN ? "warn" : "refuse";
}

int deadline_policy_parse (const char *text, enum deadline_policy *p,
                           berth_error_t *err)
{
    if (text && !strcmp (text, "refuse"))
        *p = DEADLINE_REFUSE;
    else if (text && !strcmp (text, "warn"))
        *p = DEADLINE_WARN;
    else
        return errprintf (err, "deadline policy must be 'refuse' or 'warn', got '%s'",
                          text ? text : "");
    return 0;
}

int deadline_parse_epoch (const char *text, double *end)
{
    char *stop;
    if (!text || !isdigit ((unsigned char) text[0]))
        return -1;
    errno = 0;
    long long v = strtoll (text, &stop, 10);
    if (errno || *stop || v <= 0)
        return -1;
    *end = (double) v;
    return 0;
}

/* Local broken-down time -> Unix seconds; the whole text must be used. */
static int local_time (const char *text, const char *format, double *out)
{
    struct tm tm;
    memset (&tm, 0, sizeof (tm));
    const char *rest = strptime (text, format, &tm);
    if (!rest || *rest)
        return -1;
    tm.tm_isdst = -1;
    time_t t = mktime (&tm);
    if (t == (time_t) -1)
        return -1;
    *out = (double) t;
    return 0;
}

int deadline_parse_squeue (const char *text, double *end, berth_error_t *err)
{
    char line[128];
    text_first_line (text ? text : "", line, sizeof (line));
    if (!line[0])
        return errprintf (err, "squeue printed no end time (the job is not listed)");
    if (!strcasecmp (line, "N/A") || !strcasecmp (line, "Unknown")
        || !strcasecmp (line, "NONE") || !strcasecmp (line, "UNLIMITED"))
        return errprintf (err, "squeue gives the job no end time ('%s'): it has no "
                          "time limit", line);
    double t;
    if (local_time (line, "%Y-%m-%dT%H:%M:%S", &t) < 0)
        return errprintf (err, "squeue printed '%s' for the end time, not "
                          "YYYY-MM-DDTHH:MM:SS", line);
    *end = t;
    return 0;
}

/* The value of "key = value" among qstat -f's lines, trimmed, into buf. */
static bool qstat_value (const char *text, const char *key, char *buf, size_t size)
{
    size_t klen = strlen (key);
    for (const char *p = text; p && *p; p = strchr (p, '\n'), p = p ? p + 1 : NULL) {
        const char *s = p + strspn (p, " \t");
        if (strncmp (s, key, klen))
            continue;
        s += klen;
        s += strspn (s, " \t");
        if (*s != '=')
            continue;
        s++;
        s += strspn (s, " \t");
        text_first_line (s, buf, size);
        return true;
    }
    return false;
}

int deadline_parse_qstat (const char *text, double *end, berth_error_t *err)
{
    char stime[128], wall[64];
    long long limit;
    double start;
    if (!text || !qstat_value (text, "stime", stime, sizeof (stime)))
        return errprintf (err, "qstat -f shows no stime: the job has not started");
    if (!qstat_value (text, "Resource_List.walltime", wall, sizeof (wall)))
        return errprintf (err, "qstat -f shows no Resource_List.walltime: the job "
                          "has no wall-time limit");
    /* "Mon Aug  5 10:00:00 2024": %e takes the space-padded day. */
    if (local_time (stime, "%a %b %e %H:%M:%S %Y", &start) < 0)
        return errprintf (err, "qstat -f shows stime = '%s', not a time like "
                          "'Mon Aug  5 10:00:00 2024'", stime);
    if (wallclock_parse (wall, &limit) < 0)
        return errprintf (err, "qstat -f shows Resource_List.walltime = '%s', not "
                          "HH:MM:SS", wall);
    *end = start + (double) limit;
    return 0;
}

int deadline_check (double now, double end, double duration, const char *label,
                    char *msg, size_t size)
{
    if (end < 0 || duration < 0 || now + duration <= end) {
        if (size)
            msg[0] = '\0';
        return 0;
    }
    char need[32], left[32], over[32];
    wallclock_format_brief (duration, need, sizeof (need));
    wallclock_format_brief (end - now, left, sizeof (left));
    wallclock_format_brief (now + duration - end, over, sizeof (over));
    snprintf (msg, size, "%s%s%s states a duration of %s (%.0f s) but the "
              "allocation ends in %s: it would run %s past the end; shorten the "
              "step, give a smaller duration, or run it in a later allocation",
              label ? "step '" : "request", label ? label : "", label ? "'" : "",
              need, duration, end > now ? left : "0s (it has ended)", over);
    return 1;
}
