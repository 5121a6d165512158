/* SPDX-License-Identifier: MIT */
/* A grant record's "shape" and "held" built with jansson: the reference the
 * tests hold lease_text's hand-written grant record to, and the pieces they
 * build records for journal_grant_lease from (berthd itself writes them
 * through lease_text). */
#ifndef BERTH_TEST_GRANT_JSON_H
#define BERTH_TEST_GRANT_JSON_H

#include <jansson.h>

#include "ledger.h"
#include "step.h"

static inline json_t *journal_shape_json (const struct step_shape *s)
{
    return json_pack ("{s:b s:i s:i s:i s:i s:I s:I s:b s:b}", "mpi", s->mpi,
                      "ntasks", s->ntasks, "cpus_per_task", s->cpus_per_task,
                      "cores", s->cores, "gpus", s->gpus,
                      "memory", (json_int_t) s->memory,
                      "budget", (json_int_t) s->budget,
                      "may_span", s->may_span, "local", s->local);
}

/* "held": per node of the lease, its ledger index, GPU indices and MB. */
static inline json_t *journal_held_json (const struct ledger_lease *ll)
{
    json_t *held = json_array ();
    for (int i = 0; held && i < ll->nnodes; i++) {
        const struct ledger_lease_node *ln = &ll->nodes[i];
        json_t *gpus = json_array ();
        for (int j = 0; gpus && j < ln->ngpus; j++)
            if (json_array_append_new (gpus, json_integer (ln->gpus[j])) < 0) {
                json_decref (gpus);
                gpus = NULL;
            }
        if (!gpus || json_array_append_new (held, json_pack (
                         "{s:i s:o s:I}", "node", ln->node, "gpus", gpus,
                         "memory", (json_int_t) ln->memory)) < 0) {
            json_decref (held);
            return NULL;
        }
    }
    return held;
}

#endif
