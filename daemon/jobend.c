/* The allocation's end: from the environment where the scheduler states it
 * (SLURM_JOB_END_TIME, Slurm 23.02 and later), else asked once, lazily, the
 * first time a request states a duration or someone asks for the time left
 * (never at start-up: a start inside an allocation asks the scheduler
 * nothing). The one query blocks the loop for at most its timeout. */
#include <stdio.h>
#include <syslog.h>

#include "berthd.h"
#include "deadline_query.h"

#define JOBEND_QUERY_TIMEOUT 10.0   /* seconds */

double jobend_get (struct berthd *d)
{
    berth_error_t err;
    if (d->job_end_looked)
        return d->job_end;
    d->job_end_looked = true;
    d->job_end = -1;
    if (deadline_from_env (NULL, &d->job_end, &d->job_end_src))
        return d->job_end;
    if (!d->alloc->job_id || (d->alloc->system != BERTH_SYSTEM_SLURM
                              && d->alloc->system != BERTH_SYSTEM_PBS))
        return -1;
    if (deadline_query (d->alloc->system, d->alloc->job_id, NULL,
                        JOBEND_QUERY_TIMEOUT, &d->job_end, &d->job_end_src,
                        &err) < 0) {
        d->job_end = -1;
        log_msg (LOG_WARNING, "the end of job %s is not known (%s); requests "
                 "that state a duration are not checked against it",
                 d->alloc->job_id, err.text);
    }
    else
        log_msg (LOG_INFO, "job %s ends at %.0f (%s)", d->alloc->job_id,
                 d->job_end, d->job_end_src.name);
    return d->job_end;
}

int jobend_admit (struct berthd *d, const struct proto_acquire *a, char *warn,
                  size_t size, berth_error_t *err)
{
    char msg[sizeof (err->text)];
    warn[0] = '\0';
    if (a->duration < 0)
        return 0;
    double end = jobend_get (d);
    if (deadline_check (now_wall (), end, a->duration, a->step.label, msg,
                        sizeof (msg)) == 0)
        return 0;
    if (d->cfg.deadline_policy == DEADLINE_WARN) {
        snprintf (warn, size, "%s", msg);
        return 0;
    }
    return errprintf_code (err, PROTO_ERR_UNSATISFIABLE, "%s", msg);
}

/* What is known without asking: an earlier answer, or the environment. */
static double jobend_known (struct berthd *d)
{
    if (d->job_end_looked)
        return d->job_end;
    double end;
    struct deadline_source src;
    if (deadline_from_env (NULL, &end, &src)) {
        d->job_end_looked = true;
        d->job_end = end;
        d->job_end_src = src;
        return end;
    }
    return -1;
}

int jobend_status (struct berthd *d, json_t *allocation, bool ask)
{
    /* a plain status (every `berth status` of a batch script) must not cost
     * a scheduler query; asking for the time left may, once */
    double end = ask ? jobend_get (d) : jobend_known (d);
    json_t *left = end >= 0 ? json_real (end - now_wall () > 0
                                         ? end - now_wall () : 0)
                            : json_null ();
    return json_object_update_new (allocation, json_pack (
        "{s:o s:o s:s? s:s}", "job_end", end >= 0 ? json_real (end) : json_null (),
        "time_left_s", left, "job_end_source",
        end >= 0 ? d->job_end_src.name : NULL,
        "deadline_policy", deadline_policy_name (d->cfg.deadline_policy)));
}
