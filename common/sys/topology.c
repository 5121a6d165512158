/* SPDX-License-Identifier: MIT */
/* Physical cores from sysfs thread siblings, and the node's usable core ids. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"
#include "topology.h"

static int cmp_int (const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

static int in_sorted (const int *v, int n, int id)
{
    return bsearch (&id, v, n, sizeof (int), cmp_int) != NULL;
}

/* The lowest usable sibling of id (id itself when the file cannot be read
 * or parsed, or lists no usable sibling below id). */
static int core_name (const char *root, int id, const int *usable, int n)
{
    char path[4096], text[4096];
    snprintf (path, sizeof (path),
              "%s/devices/system/cpu/cpu%d/topology/thread_siblings_list",
              root, id);
    FILE *f = fopen (path, "r");
    if (!f)
        return id;
    size_t k = fread (text, 1, sizeof (text) - 1, f);
    fclose (f);
    text[k] = '\0';
    text[strcspn (text, "\n")] = '\0';
    int *sib, nsib, name = id;
    if (idset_parse (text, &sib, &nsib, NULL) < 0)
        return id;
    /* A sibling held back from this process cannot name the core: a
     * placement must be able to bind to the id it names. */
    for (int i = 0; i < nsib && sib[i] < name; i++)
        if (in_sorted (usable, n, sib[i]))
            name = sib[i];
    free (sib);
    return name;
}

int topology_physical_cores (const char *sysfs_root, const int *usable_ids,
                             int nusable, int **cores, int *ncores,
                             berth_error_t *err)
{
    const char *root = sysfs_root ? sysfs_root : "/sys";
    int *sorted = malloc ((nusable ? nusable : 1) * sizeof (int));
    int *out = malloc ((nusable ? nusable : 1) * sizeof (int));
    if (!sorted || !out) {
        free (sorted);
        free (out);
        return errprintf (err, "out of memory reading the core topology");
    }
    if (nusable > 0) {   /* memcpy from NULL is undefined even for 0 bytes */
        memcpy (sorted, usable_ids, nusable * sizeof (int));
        qsort (sorted, nusable, sizeof (int), cmp_int);
    }
    int n = 0;
    for (int i = 0; i < nusable; i++)
        out[n++] = core_name (root, sorted[i], sorted, nusable);
    qsort (out, n, sizeof (int), cmp_int);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || out[k - 1] != out[i])
            out[k++] = out[i];
    free (sorted);
    *cores = out;
    *ncores = k;
    return 0;
}

int topology_affinity_ids (int **ids, int *count, berth_error_t *err)
{
    for (int ncpu = 1024; ncpu <= (1 << 20); ncpu *= 2) {
        cpu_set_t *set = CPU_ALLOC (ncpu);
        size_t size = CPU_ALLOC_SIZE (ncpu);
        if (!set)
            return errprintf (err, "out of memory reading CPU affinity");
        if (sched_getaffinity (0, size, set) < 0) {
            int e = errno;
            CPU_FREE (set);
            if (e == EINVAL)
                continue; /* the kernel's mask is larger: try again */
            return errprintf (err, "sched_getaffinity: %s", strerror (e));
        }
        int n = CPU_COUNT_S (size, set), k = 0;
        int *v = malloc ((n ? n : 1) * sizeof (int));
        if (!v) {
            CPU_FREE (set);
            return errprintf (err, "out of memory reading CPU affinity");
        }
        for (int i = 0; i < ncpu && k < n; i++)
            if (CPU_ISSET_S (i, size, set))
                v[k++] = i;
        CPU_FREE (set);
        *ids = v;
        *count = k;
        return 0;
    }
    return errprintf (err, "sched_getaffinity: the CPU mask is larger than "
                      "%d CPUs", 1 << 20);
}

int topology_usable_core_ids (const int *physical, int nphysical,
                              int cores_per_node, int **ids, int *count,
                              char *warn, size_t warnsize, berth_error_t *err)
{
    if (warnsize)
        warn[0] = '\0';
    if (nphysical <= 0 && cores_per_node <= 0)
        return errprintf (err, "no usable cores: this process may run on no "
                          "CPU and cores_per_node is not set");
    int n = cores_per_node > 0 ? cores_per_node : nphysical;
    bool renumber = cores_per_node > 0 && 2 * nphysical < cores_per_node;
    if (!renumber && nphysical < n)
        n = nphysical;
    int *v = malloc (n * sizeof (int));
    if (!v)
        return errprintf (err, "out of memory choosing core ids");
    for (int i = 0; i < n; i++)
        v[i] = renumber ? i : physical[i];
    if (renumber)
        snprintf (warn, warnsize, "this process may use only %d physical "
                  "cores, less than half of cores_per_node = %d (not on a "
                  "compute node of the allocation?); numbering cores 0-%d "
                  "from the config instead", nphysical, cores_per_node, n - 1);
    else if (cores_per_node > 0 && nphysical < cores_per_node)
        snprintf (warn, warnsize, "this process may use only %d physical "
                  "cores of cores_per_node = %d; using those %d", nphysical,
                  cores_per_node, nphysical);
    *ids = v;
    *count = n;
    return 0;
}
