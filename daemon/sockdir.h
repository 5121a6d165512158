/* Where berthd's socket lives, and making that place safe: a directory this
 * user owns that nobody else can enter, no symlinks, a 0600 socket. */
#ifndef BERTH_SOCKDIR_H
#define BERTH_SOCKDIR_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* The default socket path for a job: <runtime>/berth/<job>.sock where
 * runtime is $XDG_RUNTIME_DIR (when given), else /tmp/berth-<uid>/<job>.sock.
 * job is the batch job id, or "local" outside a job. */
int sockdir_default_path (const char *xdg_runtime_dir, uid_t uid,
                          const char *job, char *buf, size_t size,
                          berth_error_t *err);

/* Make sure dir is safe to hold the socket. With create, a missing directory
 * is made with mode 0700 (its parent must exist). Refused: a symlink, not a
 * directory, owned by another uid, or open to group/others (mode & 077). */
int sockdir_secure (const char *dir, uid_t uid, int create, berth_error_t *err);

/* Before binding path: a live socket there (a daemon answers) is an error; a
 * dead one is removed; anything that is not a socket is refused. */
int sockdir_clear_stale (const char *path, berth_error_t *err);

#endif
