/* SPDX-License-Identifier: MIT */
/* Memory this node can really give: the kernel's MemAvailable and the
 * process's cgroup limit (v1 or v2, the tightest along the cgroup path). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"

#define UNLIMITED_BYTES (INT64_C (1) << 62)

/* MemTotal / MemAvailable in MB; absent file or line leaves -1. */
static int read_meminfo (const char *proc_root, struct memory_facts *f,
                         berth_error_t *err)
{
    char path[4096], line[256];
    snprintf (path, sizeof (path), "%s/meminfo", proc_root);
    FILE *fp = fopen (path, "r");
    if (!fp)
        return 0;
    while (fgets (line, sizeof (line), fp)) {
        int64_t *slot = !strncmp (line, "MemTotal:", 9) ? &f->mem_total_mb
                      : !strncmp (line, "MemAvailable:", 13)
                          ? &f->mem_available_mb
                          : NULL;
        if (!slot)
            continue;
        char *colon = strchr (line, ':'), *end;
        errno = 0;
        long long kb = strtoll (colon + 1, &end, 10);
        while (isspace ((unsigned char) *end))
            end++;
        if (errno || end == colon + 1 || kb < 0
            || (*end && strncmp (end, "kB", 2))) {
            line[strcspn (line, "\n")] = '\0';
            fclose (fp);
            return errprintf (err, "%s: cannot read '%s' (want a number of "
                              "kB)", path, line);
        }
        *slot = kb / 1024;
    }
    fclose (fp);
    return 0;
}

/* The memory cgroup path of this process and whether it is v1. 0 with an
 * empty path when none is listed. */
static int find_cgroup (const char *proc_root, char *cg, size_t size,
                        int *v1)
{
    char path[4096], line[4096];
    snprintf (path, sizeof (path), "%s/self/cgroup", proc_root);
    cg[0] = '\0';
    FILE *fp = fopen (path, "r");
    if (!fp)
        return 0;
    while (fgets (line, sizeof (line), fp)) {
        line[strcspn (line, "\n")] = '\0';
        char *c1 = strchr (line, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        int is_v2 = c1[1] == '\0';
        int is_mem = 0;
        for (char *tok = strtok (c1 + 1, ","); tok; tok = strtok (NULL, ","))
            is_mem |= !strcmp (tok, "memory");
        /* A v1 memory line wins over the v2 line of a hybrid system: there
         * the memory controller lives in v1. */
        if (is_mem || (is_v2 && !*cg)) {
            snprintf (cg, size, "%s", c2 + 1);
            *v1 = is_mem;
            if (is_mem)
                break;
        }
    }
    fclose (fp);
    return 0;
}

/* Limit in one file in MB; -1 when unlimited or absent. */
static int read_limit (const char *file, int64_t *mb, berth_error_t *err)
{
    char text[64];
    *mb = -1;
    FILE *fp = fopen (file, "r");
    if (!fp)
        return 0;
    size_t k = fread (text, 1, sizeof (text) - 1, fp);
    fclose (fp);
    text[k] = '\0';
    text[strcspn (text, "\n")] = '\0';
    if (!strcmp (text, "max"))
        return 0;
    char *end;
    errno = 0;
    long long bytes = strtoll (text, &end, 10);
    if (errno == ERANGE || (end != text && !*end && bytes >= UNLIMITED_BYTES))
        return 0;
    if (errno || end == text || *end || bytes < 0)
        return errprintf (err, "%s: cannot read memory limit '%s' (want a "
                          "number of bytes or 'max')", file, text);
    *mb = bytes / (1024 * 1024);
    return 0;
}

/* The tightest limit from the cgroup up to the root of its hierarchy. */
static int read_cgroup_limit (const char *cgroup_root, const char *cg, int v1,
                              int64_t *limit, berth_error_t *err)
{
    char dir[4096], file[4200];
    snprintf (dir, sizeof (dir), "%s%s%s", cgroup_root, v1 ? "/memory" : "",
              cg);
    size_t base = strlen (cgroup_root) + (v1 ? 7 : 0);
    *limit = -1;
    for (;;) {
        while (strlen (dir) > base && dir[strlen (dir) - 1] == '/')
            dir[strlen (dir) - 1] = '\0';
        snprintf (file, sizeof (file), "%s/%s", dir,
                  v1 ? "memory.limit_in_bytes" : "memory.max");
        int64_t mb;
        if (read_limit (file, &mb, err) < 0)
            return -1;
        if (mb >= 0 && (*limit < 0 || mb < *limit))
            *limit = mb;
        char *slash = strrchr (dir + base, '/');
        if (!slash)
            return 0;
        *slash = '\0';
    }
}

int memory_read_facts (const char *proc_root, const char *cgroup_root,
                       struct memory_facts *facts, berth_error_t *err)
{
    struct memory_facts f = { -1, -1, -1, -1 };
    char cg[4096];
    int v1 = 0;
    if (!proc_root)
        proc_root = "/proc";
    if (!cgroup_root)
        cgroup_root = "/sys/fs/cgroup";
    if (read_meminfo (proc_root, &f, err) < 0
        || find_cgroup (proc_root, cg, sizeof (cg), &v1) < 0
        || (*cg == '/'
            && read_cgroup_limit (cgroup_root, cg, v1, &f.cgroup_limit_mb, err)
                   < 0))
        return -1;
    f.credited_mb = f.mem_available_mb;
    if (f.cgroup_limit_mb >= 0
        && (f.credited_mb < 0 || f.cgroup_limit_mb < f.credited_mb))
        f.credited_mb = f.cgroup_limit_mb;
    *facts = f;
    return 0;
}
