/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "idset.h"

static bool member (const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static int cmp_int (const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

/* Siblings of core as sysfs lists them; {core} when it does not say. */
static int siblings (const char *root, int core, int **ids, int *n)
{
    char path[4096], text[1024];
    snprintf (path, sizeof (path), "%s/devices/system/cpu/cpu%d/topology/thread_siblings_list",
              root, core);
    FILE *f = fopen (path, "r");
    bool ok = f && fgets (text, sizeof (text), f);
    if (f)
        fclose (f);
    if (ok) {
        text[strcspn (text, "\n")] = '\0';
        if (idset_parse (text, ids, n, NULL) == 0 && member (*ids, *n, core))
            return 0;
    }
    if (!(*ids = malloc (sizeof (int))))
        return -1;
    (*ids)[0] = core;
    *n = 1;
    return 0;
}

int affinity_threads (const char *sysfs_root, const int *cores, int ncores,
                      const int *usable, int nusable, int **threads, int *nthreads,
                      berth_error_t *err)
{
    const char *root = sysfs_root ? sysfs_root : "/sys";
    int *out = NULL, n = 0;
    for (int i = 0; i < ncores; i++) {
        int *sib, ns;
        if (siblings (root, cores[i], &sib, &ns) < 0) {
            free (out);
            return errprintf (err, "out of memory");
        }
        int *grown = realloc (out, (size_t) (n + ns + 1) * sizeof (int));
        if (!grown) {
            free (sib);
            free (out);
            return errprintf (err, "out of memory");
        }
        out = grown;
        for (int k = 0; k < ns; k++)
            if (member (usable, nusable, sib[k]) && !member (out, n, sib[k]))
                out[n++] = sib[k];
        free (sib);
    }
    if (n == 0) {
        char want[256], have[256];
        idset_format (cores, ncores, want, sizeof (want));
        idset_format (usable, nusable, have, sizeof (have));
        free (out);
        return errprintf (err, "none of the placed cores %s may be used here (this "
                          "process may use CPUs %s); run berth run --local on "
                          "berthd's node", want[0] ? want : "(none)",
                          have[0] ? have : "(none)");
    }
    qsort (out, (size_t) n, sizeof (int), cmp_int);
    *threads = out;
    *nthreads = n;
    return 0;
}
