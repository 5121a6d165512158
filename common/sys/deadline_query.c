/* SPDX-License-Identifier: MIT */
/* The edges of the allocation's end: what the environment states, and the
 * one question to the scheduler when it states nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deadline_query.h"
#include "run_command.h"

extern char **environ;

int deadline_from_env (char *const *envp, double *end, struct deadline_source *src)
{
    const char *v = run_command_env (envp ? envp : environ, "SLURM_JOB_END_TIME");
    if (!v || deadline_parse_epoch (v, end) < 0)
        return 0;
    snprintf (src->name, sizeof (src->name), "SLURM_JOB_END_TIME");
    return 1;
}

/* envp with SLURM_TIME_FORMAT=standard, so that squeue prints ISO times
 * whatever the user's own setting. */
static char **standard_time_env (char *const *envp)
{
    size_t n = 0;
    while (envp[n])
        n++;
    char **v = calloc (n + 2, sizeof (*v));
    size_t k = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp (envp[i], "SLURM_TIME_FORMAT=", 18))
            v[k++] = envp[i];
    v[k] = (char *) "SLURM_TIME_FORMAT=standard";
    return v;
}

int deadline_query (enum berth_system system, const char *job_id,
                    char *const *envp, double timeout_s, double *end,
                    struct deadline_source *src, berth_error_t *err)
{
    struct run_output out;
    int rc;
    if (!job_id)
        return errprintf (err, "no batch job: the allocation has no end time");
    if (system == BERTH_SYSTEM_SLURM) {
        const char *argv[] = { "squeue", "-h", "-j", job_id, "-o", "%e", NULL };
        char **env = standard_time_env (envp ? envp : environ);
        if (!env)
            return errprintf (err, "out of memory");
        rc = run_command (argv, env, timeout_s, &out, NULL, err);
        free (env);
        if (rc < 0)
            return -1;
        rc = deadline_parse_squeue (out.out, end, err);
        snprintf (src->name, sizeof (src->name), "squeue");
    }
    else if (system == BERTH_SYSTEM_PBS) {
        const char *argv[] = { "qstat", "-f", job_id, NULL };
        if (run_command (argv, envp, timeout_s, &out, NULL, err) < 0)
            return -1;
        rc = deadline_parse_qstat (out.out, end, err);
        snprintf (src->name, sizeof (src->name), "qstat");
    }
    else
        return errprintf (err, "a %s allocation has no end time",
                          berth_system_name (system));
    run_output_free (&out);
    return rc;
}
