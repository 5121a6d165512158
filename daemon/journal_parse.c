/* Journal records without the files (journal_parse.h). */
#include <string.h>

#include "journal_parse.h"

json_t *journal_parse_line (const char *line, size_t len)
{
    if (len == 0 || line[len - 1] != '\n')
        return NULL;
    json_t *r = json_loadb (line, len, 0, NULL);
    if (r && !json_is_object (r)) {
        json_decref (r);
        return NULL;
    }
    return r;
}

int journal_parse_shape (json_t *o, struct step_shape *s)
{
    int mpi, span, local;
    json_int_t mem, budget;
    struct step_shape x;
    if (json_unpack (o, "{s:b s:i s:i s:i s:i s:I s:I s:b s:b}", "mpi", &mpi,
                     "ntasks", &x.ntasks, "cpus_per_task", &x.cpus_per_task,
                     "cores", &x.cores, "gpus", &x.gpus, "memory", &mem,
                     "budget", &budget, "may_span", &span, "local",
                     &local) < 0)
        return -1;
    x.mpi = mpi;
    x.may_span = span;
    x.local = local;
    x.memory = mem;
    x.budget = budget;
    *s = x;
    return 0;
}

int journal_replay_grant (struct ledger *l, json_t *rec, uint64_t max_gap,
                          berth_error_t *err)
{
    json_int_t want;
    json_t *shape;
    const char *layout;
    struct step_shape sh;
    if (json_unpack (rec, "{s:I s:o s:s}", "id", &want, "shape", &shape,
                     "layout", &layout) < 0
        || journal_parse_shape (shape, &sh) < 0)
        return errprintf (err, "a grant record is unreadable");
    if (want <= 0)
        return errprintf (err, "a grant record has the lease id %lld",
                          (long long) want);
    enum ledger_layout lay = strcmp (layout, "scheduler") == 0
                             ? LEDGER_SCHEDULER : LEDGER_CPU_BINDING;
    for (uint64_t tries = 0; tries <= max_gap; tries++) {
        uint64_t id;
        char why[256];
        int rc = ledger_acquire (l, &sh, lay, &id, why, sizeof (why), err);
        if (rc != 0)
            return errprintf (err, "L%lld does not fit again (%s)",
                              (long long) want, rc < 0 ? err->text : why);
        if (id == (uint64_t) want)
            return 0;
        ledger_release (l, id, NULL);
        if (id > (uint64_t) want || (uint64_t) want - id > max_gap)
            break;
    }
    return errprintf (err, "L%lld cannot be granted again under its id",
                      (long long) want);
}
