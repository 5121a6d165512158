/* berthd's own messages go to stderr: plain lines for a person or a log file,
 * and with "<N>" syslog priority prefixes when journald reads stderr
 * (JOURNAL_STREAM names stderr's device and inode), so that it files them
 * at the right level. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>

#include "berthd.h"

static bool journald;

void log_init (void)
{
    const char *js = getenv ("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    journald = js && sscanf (js, "%llu:%llu", &dev, &ino) == 2
               && fstat (2, &st) == 0 && st.st_dev == (dev_t) dev
               && st.st_ino == (ino_t) ino;
}

void log_msg (int prio, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (journald)
        fprintf (stderr, "<%d>%s\n", prio, buf);
    else
        fprintf (stderr, "berthd: %s%s\n",
                 prio <= LOG_ERR ? "error: " : prio == LOG_WARNING ? "warning: " : "",
                 buf);
    fflush (stderr);
}
