/* SPDX-License-Identifier: MIT */
/* The allocation's data: freeing it (discovery is sys/allocation_discover.c). */
#include <errno.h>
#include <stdlib.h>

#include "allocation.h"

void allocation_destroy (struct allocation *a)
{
    if (!a)
        return;
    int saved = errno;
    for (int i = 0; i < a->nnodes; i++) {
        free (a->nodes[i].name);
        free (a->nodes[i].core_ids);
    }
    free (a->nodes);
    for (int i = 0; i < a->nwarnings; i++)
        free (a->warnings[i]);
    free (a->warnings);
    free (a->machine);
    free (a->job_id);
    free (a->liveness);
    free (a);
    errno = saved;
}
