/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pidlock.h"
#include "socket_path.h"

/* The pid on the first line of the file open at fd; 0 if none. */
static pid_t written_pid (int fd)
{
    char buf[32];
    ssize_t n = pread (fd, buf, sizeof (buf), 0);
    pid_t pid = n > 0 ? lock_text_pid (buf, (size_t) n) : 0;
    /* a crashed holder's pid stays until the next holder writes its own */
    return pid && kill (pid, 0) < 0 && errno == ESRCH ? 0 : pid;
}

int pidlock_take (const char *path, const char *what, const char *option,
                  const char *note, pid_t *holder, berth_error_t *err)
{
    *holder = 0;
    /* A stopping holder removes the file: a lock taken on the inode it
     * removed guards nothing, so take it again on the one the path names. */
    for (int tries = 0; tries < 100; tries++) {
        int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            return errprintf (err, "cannot open the lock %s for %s: %s", path,
                              what, strerror (errno));
        if (flock (fd, LOCK_EX | LOCK_NB) < 0) {
            int e = errno;
            /* the holder writes its pid just after it locks: give it a
             * moment (at most 0.2 s) to, so that the answer names it */
            for (int i = 0; i < 100 && e == EWOULDBLOCK
                            && !(*holder = written_pid (fd)); i++) {
                struct timespec ts = { 0, 2000000 };
                nanosleep (&ts, NULL);
            }
            close (fd);
            if (e != EWOULDBLOCK)
                return errprintf (err, "cannot lock %s for %s: %s", path, what,
                                  strerror (e));
            if (*holder)
                return errprintf (err, "another berthd (pid %d) holds %s (its "
                                  "lock %s); stop it first (berth shutdown), "
                                  "or give another %s", (int) *holder, what,
                                  path, option);
            return errprintf (err, "another berthd holds %s (its lock %s; it "
                              "is starting); stop it first, or give another "
                              "%s", what, path, option);
        }
        struct stat held, named;
        if (fstat (fd, &held) == 0 && stat (path, &named) == 0
            && held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
            char line[4096 + 32];
            int n = snprintf (line, sizeof (line), "%d\n%s\n", (int) getpid (),
                              note ? note : "");
            if (ftruncate (fd, 0) < 0
                || pwrite (fd, line, (size_t) n, 0) != (ssize_t) n) {
                int e = errno;
                close (fd);
                return errprintf (err, "cannot write the lock %s: %s", path,
                                  strerror (e));
            }
            return fd;
        }
        close (fd);
    }
    return errprintf (err, "the lock %s for %s is removed as soon as it is "
                      "made; is another berthd starting and stopping on it?",
                      path, what);
}

void pidlock_drop (const char *path, int fd)
{
    if (fd < 0)
        return;
    unlink (path);
    close (fd);
}
