/* SPDX-License-Identifier: MIT */
/* The launch of a --local step that berthd had srun place (SCHEDULER
 * mode): the rendered srun line with `berth placed` in front of the
 * program. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local_launch.h"

/* berthd launches a local step through srun where Slurm picks every step's
 * CPUs (PROTOCOL.md "placed"): its launch is then not the program itself
 * but ends with it. The step runs with `berth placed` in front of the
 * program, which reports the CPUs srun gave it. NULL: bind it here (the
 * launch is the program), or out of memory (*oom). */
char **local_launch (const berth_lease_t *l, char *const *prog, bool *oom)
{
    char *const *launch = (char *const *) berth_launch_argv (berth_lease_launch (l));
    int n = 0, np = 0;
    *oom = false;
    while (launch && launch[n])
        n++;
    while (prog[np])
        np++;
    if (n <= np)
        return NULL;
    for (int i = 0; i < np; i++)
        if (strcmp (launch[n - np + i], prog[i]))
            return NULL;
    static char self[4096];    /* lives as long as the step's argv */
    ssize_t len = readlink ("/proc/self/exe", self, sizeof (self) - 1);
    char **argv = calloc ((size_t) n + 4, sizeof (*argv));   /* + self, "placed", "--", NULL */
    if (!argv || len <= 0) {
        free (argv);
        *oom = true;
        return NULL;
    }
    self[len] = '\0';
    int k = 0;
    for (int i = 0; i < n - np; i++)
        argv[k++] = launch[i];
    argv[k++] = self;
    argv[k++] = "placed";
    argv[k++] = "--";
    for (int i = 0; i < np; i++)
        argv[k++] = prog[i];
    return argv;
}
