/* SPDX-License-Identifier: MIT */
/* berthd's messages (log.c): stderr, with syslog priority prefixes when
 * journald reads it. A header of its own so that the daemon's objects
 * (events, jobend, notify) log without knowing struct berthd. */
#ifndef BERTHD_LOG_H
#define BERTHD_LOG_H

void log_init (void);
void log_msg (int prio, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
int log_to_file (const char *path);   /* stderr goes there from now on */
void log_reopen (void);               /* SIGHUP: reopen that file */

#endif
