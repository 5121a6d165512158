/* SPDX-License-Identifier: MIT */
/* Run an external command without a shell: argv as given, the program found
 * on the PATH of the given environment, stdout and stderr captured apart, a
 * timeout that kills the command (and its process group). */
#ifndef BERTH_RUN_COMMAND_H
#define BERTH_RUN_COMMAND_H

#include "error.h"

struct run_output {
    char *out;   /* stdout, NUL-terminated */
    char *err;   /* stderr, NUL-terminated */
};

/* Run argv (NULL-terminated) with environment envp (NULL: environ; its PATH,
 * else "/usr/bin:/bin", is searched when argv[0] has no '/'), stdin from
 * /dev/null, for at most timeout_s seconds. Success is exit status 0: *res
 * gets both outputs (caller frees with run_output_free). Otherwise nothing is
 * returned and err names the command line with its stderr; codes:
 * "command_not_found", "command_timeout", "command_failed" (non-zero exit or
 * killed by a signal; *status, when not NULL, gets the exit status, or 128 +
 * the signal), "error" (pipes, spawning). */
int run_command (const char *const *argv, char *const *envp, double timeout_s,
                 struct run_output *res, int *status, berth_error_t *err);

void run_output_free (struct run_output *res);

/* The value of NAME in envp ("NAME=value" strings, NULL-terminated; NULL
 * envp holds nothing), or NULL when it is not there. */
const char *run_command_env (char *const *envp, const char *name);

/* The program run_command would execute for prog: prog itself when it names
 * a path, else the first executable regular file of that name in the
 * colon-separated directories of path (an empty entry is the current
 * directory, as for execvp). NULL when none (or out of memory); the caller
 * frees. */
char *run_command_find (const char *prog, const char *path);

#endif
