/* SPDX-License-Identifier: MIT */
/* GPUs of this node from driver files alone (no GPU runtime loaded). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpus.h"

/* First line of a file, newline cut; 0 when readable. */
static int read_line (const char *path, char *text, size_t size)
{
    FILE *fp = fopen (path, "r");
    if (!fp)
        return -1;
    if (!fgets (text, (int) size, fp))
        text[0] = '\0';
    fclose (fp);
    text[strcspn (text, "\n")] = '\0';
    return 0;
}

/* Value after "key:" (NVIDIA information) or "key " (kfd properties) in a
 * file of such lines, white space trimmed; 0 when found. */
static int read_field (const char *path, const char *key, char sep, char *val,
                       size_t size)
{
    char line[512];
    size_t klen = strlen (key);
    FILE *fp = fopen (path, "r");
    if (!fp)
        return -1;
    int rc = -1;
    while (rc < 0 && fgets (line, sizeof (line), fp)) {
        if (strncmp (line, key, klen) || line[klen] != sep)
            continue;
        char *v = line + klen + 1;
        v += strspn (v, " \t");
        v[strcspn (v, "\n")] = '\0';
        for (size_t n = strlen (v); n && (v[n - 1] == ' ' || v[n - 1] == '\t');)
            v[--n] = '\0';
        snprintf (val, size, "%s", v);
        rc = 0;
    }
    fclose (fp);
    return rc;
}

/* numa_node and local_cpulist of a PCI device. */
static void pci_locality (const char *sysfs_root, struct gpu_info *g)
{
    char path[4096], text[64];
    g->numa_node = -1;
    g->local_cpulist[0] = '\0';
    if (!g->bus_id[0])
        return;
    snprintf (path, sizeof (path), "%s/bus/pci/devices/%s/numa_node",
              sysfs_root, g->bus_id);
    if (read_line (path, text, sizeof (text)) == 0)
        g->numa_node = atoi (text) >= 0 ? atoi (text) : -1;
    snprintf (path, sizeof (path), "%s/bus/pci/devices/%s/local_cpulist",
              sysfs_root, g->bus_id);
    read_line (path, g->local_cpulist, sizeof (g->local_cpulist));
}

static int cmp_name (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/* kfd node directories are numbers: order them as numbers. */
static int cmp_number (const void *a, const void *b)
{
    long x = atol (*(char *const *) a), y = atol (*(char *const *) b);
    return (x > y) - (x < y);
}

static void free_list (char **v, int n)
{
    for (int i = 0; i < n; i++)
        free (v[i]);
    free (v);
}

/* Sorted entry names of a directory (no dot entries); count -1 when the
 * directory cannot be opened. */
static char **list_dir (const char *path, int *count,
                        int (*cmp) (const void *, const void *))
{
    DIR *d = opendir (path);
    char **v = NULL;
    int n = 0;
    *count = -1;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (e->d_name[0] == '.')
            continue;
        char **nv = realloc (v, (n + 1) * sizeof (char *));
        char *s = strdup (e->d_name);
        if (nv)
            v = nv;
        if (!nv || !s) {
            free (s);
            free_list (v, n);
            closedir (d);
            return NULL;
        }
        v[n++] = s;
    }
    closedir (d);
    qsort (v, n, sizeof (char *), cmp);
    *count = n;
    return v;
}

static int add_gpu (struct gpu_facts *f, const struct gpu_info *g,
                    berth_error_t *err)
{
    struct gpu_info *v = realloc (f->gpus, (f->count + 1) * sizeof (*v));
    if (!v)
        return errprintf (err, "out of memory listing GPUs");
    f->gpus = v;
    f->gpus[f->count++] = *g;
    return 0;
}

/* Where one vendor's driver lists its GPUs: a directory with an entry per
 * device (dir, under root), the order of its entries, and how an entry is
 * read (false: the entry is no GPU). */
struct gpu_scan {
    const char *root;
    const char *dir;
    int (*cmp) (const void *, const void *);
    bool (*read) (const char *root, const char *name, struct gpu_info *g);
    enum gpu_vendor vendor;
};

/* Every vendor's scan ends alike: the entries in order, each GPU with its
 * PCI locality, and the vendor set when any was found. */
static int scan_gpus (const struct gpu_scan *s, const char *sysfs_root,
                      struct gpu_facts *f, berth_error_t *err)
{
    char path[4096];
    snprintf (path, sizeof (path), "%s/%s", s->root, s->dir);
    int n, rc = 0;
    char **names = list_dir (path, &n, s->cmp);
    for (int i = 0; i < n && rc == 0; i++) {
        struct gpu_info g = { .minor = -1 };
        if (!s->read (s->root, names[i], &g))
            continue;
        pci_locality (sysfs_root, &g);
        rc = add_gpu (f, &g, err);
    }
    free_list (names, n);
    if (rc == 0 && f->count)
        f->vendor = s->vendor;
    return rc;
}

/* One directory per GPU, named by its PCI bus id, ordered by bus id (the
 * order CUDA_DEVICE_ORDER=PCI_BUS_ID numbers them in). */
static bool read_nvidia (const char *proc_root, const char *name,
                         struct gpu_info *g)
{
    char path[4096], text[64];
    snprintf (path, sizeof (path), "%s/driver/nvidia/gpus/%s/information",
              proc_root, name);
    snprintf (g->bus_id, sizeof (g->bus_id), "%s", name);
    for (char *c = g->bus_id; *c; c++)
        *c = (char) (*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
    read_field (path, "Model", ':', g->model, sizeof (g->model));
    read_field (path, "GPU UUID", ':', g->uuid, sizeof (g->uuid));
    if (read_field (path, "Device Minor", ':', text, sizeof (text)) == 0)
        g->minor = atoi (text);
    return true;
}

/* kfd topology nodes; CPUs have gpu_id 0. The PCI address comes from the
 * node's properties (domain, location_id = bus << 8 | device << 3 | fn). */
static bool read_amd (const char *sysfs_root, const char *name,
                      struct gpu_info *g)
{
    char path[4096], props[4096], text[64];
    snprintf (path, sizeof (path),
              "%s/class/kfd/kfd/topology/nodes/%s/gpu_id", sysfs_root, name);
    if (read_line (path, text, sizeof (text)) < 0 || atol (text) == 0)
        return false;
    snprintf (path, sizeof (path), "%s/class/kfd/kfd/topology/nodes/%s/name",
              sysfs_root, name);
    read_line (path, g->model, sizeof (g->model));
    snprintf (props, sizeof (props),
              "%s/class/kfd/kfd/topology/nodes/%s/properties", sysfs_root,
              name);
    read_field (props, "unique_id", ' ', g->uuid, sizeof (g->uuid));
    if (read_field (props, "location_id", ' ', text, sizeof (text)) == 0) {
        unsigned long loc = strtoul (text, NULL, 10), dom = 0;
        if (read_field (props, "domain", ' ', text, sizeof (text)) == 0)
            dom = strtoul (text, NULL, 10);
        snprintf (g->bus_id, sizeof (g->bus_id), "%04lx:%02lx:%02lx.%lx",
                  dom, (loc >> 8) & 0xff, (loc >> 3) & 0x1f, loc & 0x7);
    }
    return true;
}

int gpus_detect (const char *proc_root, const char *sysfs_root,
                 struct gpu_facts *facts, berth_error_t *err)
{
    struct gpu_facts f = { GPU_VENDOR_NONE, NULL, 0 };
    if (!proc_root)
        proc_root = "/proc";
    if (!sysfs_root)
        sysfs_root = "/sys";
    /* A node has one vendor's GPUs; NVIDIA's files are checked first. */
    const struct gpu_scan nvidia = {
        proc_root, "driver/nvidia/gpus", cmp_name, read_nvidia,
        GPU_VENDOR_NVIDIA,
    };
    const struct gpu_scan amd = {
        sysfs_root, "class/kfd/kfd/topology/nodes", cmp_number, read_amd,
        GPU_VENDOR_AMD,
    };
    if (scan_gpus (&nvidia, sysfs_root, &f, err) < 0
        || (f.count == 0 && scan_gpus (&amd, sysfs_root, &f, err) < 0)) {
        gpu_facts_free (&f);
        return -1;
    }
    *facts = f;
    return 0;
}

void gpu_facts_free (struct gpu_facts *facts)
{
    if (facts) {
        free (facts->gpus);
        facts->gpus = NULL;
        facts->count = 0;
        facts->vendor = GPU_VENDOR_NONE;
    }
}

const char *gpus_visible_devices_var (enum gpu_vendor vendor)
{
    switch (vendor) {
    case GPU_VENDOR_NVIDIA:
        return "CUDA_VISIBLE_DEVICES";
    case GPU_VENDOR_AMD:
        return "ROCR_VISIBLE_DEVICES";
    default:
        return NULL;
    }
}
