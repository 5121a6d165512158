/* SPDX-License-Identifier: MIT */
/* A PBS job's allocation: its nodes from PBS_NODEFILE, else their count
 * from `qstat -f`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocation_private.h"
#include "hostlist.h"

/* PBS_NODEFILE: one line per slot; stripped, short names, empties and
 * repeats dropped, order kept. */
static int read_nodefile (const char *path, char ***names, int *n,
                          berth_error_t *err)
{
    FILE *fp = fopen (path, "r");
    char line[1024], **v = NULL;
    int k = 0;
    if (!fp)
        return errprintf (err, "PBS_NODEFILE=%s cannot be read: %s", path,
                          strerror (errno));
    while (fgets (line, sizeof (line), fp)) {
        char *s = line + strspn (line, " \t\r\n");
        s[strcspn (s, " \t\r\n.")] = '\0';
        if (!*s || alloc_find_host (v, k, s) >= 0)
            continue;
        char **nv = realloc (v, (k + 1) * sizeof (char *));
        if (nv)
            v = nv;
        if (!nv || !(v[k] = strdup (s))) {
            fclose (fp);
            hostlist_free (v, k);
            return errprintf (err, "out of memory reading %s", path);
        }
        k++;
    }
    fclose (fp);
    *names = v;
    *n = k;
    return 0;
}

/* Leading count of a qstat -f value ("2:ncpus=64" -> 2); -1 when none. */
static int leading_count (const char *v)
{
    int n;
    char buf[32];
    snprintf (buf, sizeof (buf), "%.*s", (int) strspn (v, "0123456789"), v);
    return alloc_parse_count (buf, &n) == 0 ? n : -1;
}

/* Node count of a PBS job without a node file, from `qstat -f`. */
static int qstat_node_count (struct alloc_ctx *c, const char *job, int *count,
                             berth_error_t *err)
{
    static const char *keys[] = { "Resource_List.nodect",
                                  "Resource_List.select",
                                  "Resource_List.nodes" };
    const char *argv[] = { "qstat", "-f", job, NULL };
    int found[3] = { -1, -1, -1 };
    char *out;
    if (alloc_query (c, argv, &out, err) < 0)
        return errprefix (err, "PBS job %s has no PBS_NODEFILE, and asking "
                          "qstat failed: ", job);
    for (char *line = strtok (out, "\n"); line; line = strtok (NULL, "\n")) {
        line += strspn (line, " \t");
        for (int i = 0; i < 3; i++) {
            size_t kl = strlen (keys[i]);
            if (strncmp (line, keys[i], kl) || !strchr (" =", line[kl]))
                continue;
            const char *v = line + kl + strspn (line + kl, " =");
            found[i] = leading_count (v);
        }
    }
    free (out);
    for (int i = 0; i < 3; i++)
        if (found[i] > 0) {
            *count = found[i];
            return 0;
        }
    return errprintf (err, "cannot tell the nodes of PBS job %s: no "
                      "PBS_NODEFILE, and `qstat -f %s` shows no node count "
                      "(Resource_List.nodect, select or nodes)", job, job);
}

int alloc_discover_pbs (struct alloc_ctx *c, const char *job, int *local,
                         berth_error_t *err)
{
    struct allocation *a = c->a;
    char **names = NULL;
    int n = 0;
    const char *nodefile = alloc_getvar (c, "PBS_NODEFILE");
    if (!(a->job_id = strdup (job)) || !(a->liveness = strdup ("none")))
        return errprintf (err, "out of memory");
    if (nodefile && read_nodefile (nodefile, &names, &n, err) < 0)
        return -1;
    *local = alloc_find_host (names, n, c->host);
    if (n == 0) {
        free (names);
        if (qstat_node_count (c, job, &n, err) < 0)
            return -1;
        /* A PBS job's shell runs on its first node. */
        if (!(names = alloc_numbered_names ("pbs-node-", n)))
            return errprintf (err, "out of memory");
        free (names[0]);
        if (!(names[0] = strdup (c->host))) {
            hostlist_free (names, n);
            return errprintf (err, "out of memory");
        }
        *local = 0;
        alloc_warn (c, "PBS job %s has no PBS_NODEFILE: %d nodes from qstat, "
              "named after this host and pbs-node-1..", job, n);
    }
    if (alloc_set_nodes (c, names, n, err) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        a->nodes[i].ncores = c->par->cores_per_node;
    return 0;
}
