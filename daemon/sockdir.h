/* SPDX-License-Identifier: MIT */
/* Making the place of berthd's socket safe: a directory this user owns that
 * nobody else can enter, no symlinks, a 0600 socket. (Where the socket lives
 * by default is the protocol's: protocol/socket_path.h.) */
#ifndef BERTH_SOCKDIR_H
#define BERTH_SOCKDIR_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Make sure dir is safe to hold the socket. With create, a missing directory
 * is made with mode 0700 (its parent must exist). Refused: a symlink, not a
 * directory, owned by another uid, or open to group/others (mode & 077). */
int sockdir_secure (const char *dir, uid_t uid, int create, berth_error_t *err);

/* Before binding path: a live socket there (a daemon answers) is an error; a
 * dead one is removed; anything that is not a socket is refused. */
int sockdir_clear_stale (const char *path, berth_error_t *err);

#endif
