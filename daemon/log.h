/* SPDX-License-Identifier: MIT */
/* berthd's log (log.c): stderr, with syslog priority prefixes when journald
 * reads it, or a file once berthd has detached. A header of its own so that
 * the daemon's objects log without seeing struct berthd. */
#ifndef BERTHD_LOG_H
#define BERTHD_LOG_H

void log_init (void);
void log_msg (int prio, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
int log_to_file (const char *path);   /* stderr goes there from now on */
void log_reopen (void);               /* SIGHUP: reopen that file */

#endif
