/* SPDX-License-Identifier: MIT */
#include "launcher_detect.h"
#include "launcher_probe.h"

static void *probe_main (void *arg)
{
    struct launcher_probe *p = arg;
    launcher_detect (p->machine, &p->caps);
    return NULL;
}

void launcher_probe_start (struct launcher_probe *p, const struct machine *m)
{
    p->machine = m;
    p->threaded = pthread_create (&p->thread, NULL, probe_main, p) == 0;
    if (!p->threaded)
        launcher_detect (m, &p->caps);
}

void launcher_probe_finish (struct launcher_probe *p,
                            struct launcher_caps *caps)
{
    if (p->threaded)
        pthread_join (p->thread, NULL);
    p->threaded = false;
    *caps = p->caps;
}
