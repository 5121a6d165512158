/* SPDX-License-Identifier: MIT */
/* Where a client finds berthd's socket when it is not told: one rule for the
 * daemon, libberth and the CLI, kept with the rest of the wire's contract so
 * that the client side needs nothing of the daemon's. */
#ifndef BERTH_SOCKET_PATH_H
#define BERTH_SOCKET_PATH_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* The default socket path for a job: <runtime>/berth/<job>.sock where
 * runtime is $XDG_RUNTIME_DIR (when given and absolute), else
 * /tmp/berth-<uid>/<job>.sock. job is the batch job id, or "local" outside
 * a job (or when it holds a '/'). Fails, writing nothing useful to buf, when
 * the path would not fit buf or a socket address. */
int socket_default_path (const char *xdg_runtime_dir, uid_t uid, const char *job,
                         char *buf, size_t size, berth_error_t *err);

/* One berthd serves a socket: it holds a lock (flock) on the socket's path
 * with this added, and writes its pid on the lock's first line, so that a
 * client can name a berthd that takes no connections. berthd's state
 * directory lock is written the same way. */
#define SOCKET_LOCK_SUFFIX ".lock"

/* The pid on the first line of a lock's text (len bytes), 0 when there is
 * none. */
pid_t lock_text_pid (const char *text, size_t len);

#endif
