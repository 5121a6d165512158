/* SPDX-License-Identifier: MIT */
/* An injected environment for machine_load_env: fixed variables, host name
 * and host facts, and a count of detection calls. */
#ifndef BERTH_MACHINE_FAKE_H
#define BERTH_MACHINE_FAKE_H

#include <string.h>

#include "machine.h"
#include "machine_select.h"

struct fake {
    const char *vars[16];   /* "NAME=value" */
    struct machine_facts facts;
    int detect_calls;
    int detect_fails;
    struct machine_env env;
};

static const char *fake_getenv (void *arg, const char *name)
{
    struct fake *f = arg;
    size_t len = strlen (name);
    for (int i = 0; i < 16 && f->vars[i]; i++)
        if (strncmp (f->vars[i], name, len) == 0 && f->vars[i][len] == '=')
            return f->vars[i] + len + 1;
    return NULL;
}

static int fake_detect (void *arg, struct machine_facts *facts,
                        berth_error_t *err)
{
    struct fake *f = arg;
    f->detect_calls++;
    if (f->detect_fails)
        return errprintf (err, "no sysfs here");
    *facts = f->facts;
    return 0;
}

/* A fake with no variables, host "testhost", 8 cores, 2 NVIDIA GPUs,
 * 16000 MB, mpiexec on PATH. */
static inline void fake_init (struct fake *f)
{
    memset (f, 0, sizeof (*f));
    f->facts.cores = 8;
    f->facts.gpus = 2;
    f->facts.gpu_visible_devices_var = "CUDA_VISIBLE_DEVICES";
    f->facts.memory_mb = 16000;
    strcpy (f->facts.launcher, "mpiexec");
    f->env.getenv = fake_getenv;
    f->env.detect = fake_detect;
    f->env.hostname = "testhost";
    f->env.arg = f;
}

#endif
