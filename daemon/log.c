/* SPDX-License-Identifier: MIT */
/* berthd's own messages go to stderr: plain lines for a person or a log file,
 * and with "<N>" syslog priority prefixes when journald reads stderr
 * (JOURNAL_STREAM names stderr's device and inode), so that it files them
 * at the right level. Under --detach stderr is a file in the state
 * directory, reopened on SIGHUP so that a rotated log starts anew. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

static bool journald;
static char log_path[PATH_MAX + 16];     /* stderr's file, or "" */

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

static int open_onto_stderr (const char *path)
{
    int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    fflush (stderr);
    int rc = dup2 (fd, 2);
    close (fd);
    return rc < 0 ? -1 : 0;
}

int log_to_file (const char *path)
{
    snprintf (log_path, sizeof (log_path), "%s", path);
    journald = false;
    return open_onto_stderr (path);
}

void log_reopen (void)
{
    if (!log_path[0])
        return;
    if (open_onto_stderr (log_path) < 0)
        log_msg (LOG_ERR, "cannot reopen the log %s: %s; logging on to the "
                 "old file", log_path, strerror (errno));
}
