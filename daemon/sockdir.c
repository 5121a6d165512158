/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sockdir.h"

int sockdir_secure (const char *dir, uid_t uid, int create, berth_error_t *err)
{
    struct stat st;
    if (lstat (dir, &st) < 0) {
        if (errno != ENOENT || !create)
            return errprintf (err, "socket directory %s: %s", dir, strerror (errno));
        if (mkdir (dir, 0700) < 0 && errno != EEXIST)
            return errprintf (err, "cannot create socket directory %s: %s", dir,
                              strerror (errno));
        if (lstat (dir, &st) < 0)
            return errprintf (err, "socket directory %s: %s", dir, strerror (errno));
    }
    if (S_ISLNK (st.st_mode))
        return errprintf (err, "socket directory %s is a symbolic link; refusing "
                          "it (remove it or give --socket elsewhere)", dir);
    if (!S_ISDIR (st.st_mode))
        return errprintf (err, "socket directory %s is not a directory", dir);
    if (st.st_uid != uid)
        return errprintf (err, "socket directory %s belongs to uid %u, not to you "
                          "(uid %u); refusing it", dir, (unsigned) st.st_uid,
                          (unsigned) uid);
    if (st.st_mode & 077)
        return errprintf (err, "socket directory %s has mode %04o; it must be "
                          "0700 so that no one else can reach the socket "
                          "(chmod 700 %s)", dir, (unsigned) (st.st_mode & 07777), dir);
    return 0;
}

int sockdir_clear_stale (const char *path, berth_error_t *err)
{
    struct stat st;
    if (lstat (path, &st) < 0)
        return errno == ENOENT ? 0
                               : errprintf (err, "%s: %s", path, strerror (errno));
    if (!S_ISSOCK (st.st_mode))
        return errprintf (err, "%s exists and is not a socket; refusing to "
                          "replace it", path);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen (path) >= sizeof (sa.sun_path))
        return errprintf (err, "socket path %s is too long", path);
    strcpy (sa.sun_path, path);
    /* non-blocking: a full backlog (a stopped berthd) answers EAGAIN at
     * once rather than holding this start */
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return errprintf (err, "socket: %s", strerror (errno));
    int rc = connect (fd, (struct sockaddr *) &sa, sizeof (sa));
    int saved = errno;
    close (fd);
    if (rc == 0)
        return errprintf (err, "a berthd already serves %s; stop it first "
                          "(berth shutdown) or give another --socket", path);
    if (saved == EAGAIN)
        return errprintf (err, "a berthd listens on %s but takes no "
                          "connections (its backlog is full: stopped or "
                          "hung?); resume or stop it, or give another --socket",
                          path);
    if (saved != ECONNREFUSED && saved != ENOENT)
        return errprintf (err, "%s: cannot tell whether a daemon serves it: %s",
                          path, strerror (saved));
    if (unlink (path) < 0 && errno != ENOENT)
        return errprintf (err, "cannot remove stale socket %s: %s", path,
                          strerror (errno));
    return 0;
}
