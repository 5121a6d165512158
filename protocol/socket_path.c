/* SPDX-License-Identifier: MIT */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "socket_path.h"

int socket_default_path (const char *xdg_runtime_dir, uid_t uid, const char *job,
                         char *buf, size_t size, berth_error_t *err)
{
    int n;
    if (!job || !*job || strchr (job, '/'))
        job = "local";
    if (xdg_runtime_dir && *xdg_runtime_dir == '/')
        n = snprintf (buf, size, "%s/berth/%s.sock", xdg_runtime_dir, job);
    else
        n = snprintf (buf, size, "/tmp/berth-%u/%s.sock", (unsigned) uid, job);
    struct sockaddr_un sa;
    if (n < 0 || (size_t) n >= size || (size_t) n >= sizeof (sa.sun_path))
        return errprintf (err, "socket path for job %s is too long (at most %zu "
                          "bytes); give --socket", job, sizeof (sa.sun_path) - 1);
    return 0;
}

pid_t lock_text_pid (const char *text, size_t len)
{
    char buf[32];
    if (len >= sizeof (buf))
        len = sizeof (buf) - 1;
    memcpy (buf, text, len);
    buf[len] = '\0';
    char *end;
    long v = strtol (buf, &end, 10);
    return v > 0 && v <= INT_MAX && end != buf && (*end == '\n' || *end == '\0')
           ? (pid_t) v : 0;
}
