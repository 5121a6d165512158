/* SPDX-License-Identifier: MIT */
/* A lock file that names its holder: one berthd per state directory and
 * per socket, decided by flock (atomic, and released by the kernel however
 * the holder ends, kill -9 included), with the holder's pid written in it
 * so that the one that lost can say who won. */
#ifndef BERTH_PIDLOCK_H
#define BERTH_PIDLOCK_H

#include <sys/types.h>

#include "error.h"

/* Take the lock at path (made 0600 if missing), for as long as the process
 * lives or until pidlock_drop, and write this process's pid and note (one
 * line each) in it. Refused, naming what holds it: another process holds
 * it (*holder its pid, 0 if it wrote none), or it cannot be opened. The
 * descriptor is returned; what (e.g. "the socket /run/x.sock") says what the
 * lock guards, option the berthd option that names another. */
int pidlock_take (const char *path, const char *what, const char *option,
                  const char *note, pid_t *holder, berth_error_t *err);

/* Remove the lock file and close fd (a clean stop; after a crash the file
 * stays, and the next pidlock_take takes it over). */
void pidlock_drop (const char *path, int fd);

#endif
