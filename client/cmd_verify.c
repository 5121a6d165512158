/* SPDX-License-Identifier: MIT */
/* berth verify: run inside a launched rank (through the same rendered
 * launch), report what the rank really got: host, CPU affinity counted in
 * physical cores, the visible-devices variables and the BERTH_* share.
 * Mismatches are reported, never corrected. Needs no berthd. */
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "idset.h"
#include "topology.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: berth verify [--json] [--sysfs-root DIR]\n"
"Report what this process was given: host, CPU affinity (hardware threads\n"
"and the physical cores they belong to), CUDA_VISIBLE_DEVICES,\n"
"ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK, SLURM_STEP_GPUS and the BERTH_*\n"
"variables. Run it as the program of a step: berth run -n 4 -- berth verify.\n"
"Exits 1 when the host is not one BERTH_NODES names.\n\n"
"  --json             one JSON object on one line\n"
"  --sysfs-root DIR   read the CPU topology under DIR (default /sys)\n"
"  -h, --help         this text\n");
}

enum { OPT_JSON = 256, OPT_SYSFS };

static const struct option options[] = {
    { "json", no_argument, NULL, OPT_JSON },
    { "sysfs-root", required_argument, NULL, OPT_SYSFS },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static const char *const device_vars[] = {
    "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "SLURM_STEP_GPUS",
};
static const char *const berth_vars[] = {
    "BERTH_LEASE", "BERTH_NODES", "BERTH_CORES", "BERTH_GPUS", "BERTH_MEMORY_MB",
};
/* The rank as the launchers number it. */
static const char *const rank_vars[] = { "SLURM_PROCID", "PALS_RANKID", "PMI_RANK",
                                          "OMPI_COMM_WORLD_RANK" };

#define N(a) ((int) (sizeof (a) / sizeof ((a)[0])))

/* Short host names compare: "nid001234" and "nid001234.chn.perlmutter". */
static bool same_host (const char *a, const char *b)
{
    size_t la = strcspn (a, "."), lb = strcspn (b, ".");
    return la == lb && !strncmp (a, b, la);
}

static bool host_in (const char *host, const char *nodes)
{
    char *copy = strdup (nodes), *save = NULL;
    bool found = false;
    for (char *t = copy ? strtok_r (copy, ", ", &save) : NULL; t && !found;
         t = strtok_r (NULL, ", ", &save))
        found = same_host (host, t);
    free (copy);
    return found;
}

static json_t *env_object (const char *const *names, int n)
{
    json_t *o = json_object ();
    for (int i = 0; o && i < n; i++) {
        const char *v = getenv (names[i]);
        json_object_set_new (o, names[i], v ? json_string (v) : json_null ());
    }
    return o;
}

/* Whether every physical core is in BERTH_CORES; -1 when it is not set or
 * unreadable. */
static int within_berth_cores (const int *cores, int n)
{
    const char *text = getenv ("BERTH_CORES");
    int *ids, nids;
    if (!text || idset_parse (text, &ids, &nids, NULL) < 0)
        return -1;
    int inside = 1;
    for (int i = 0; i < n && inside; i++) {
        inside = 0;
        for (int k = 0; k < nids; k++)
            inside |= ids[k] == cores[i];
    }
    free (ids);
    return inside;
}

static json_t *report (const char *sysfs_root, berth_error_t *err)
{
    char host[256] = "", threads_text[4096], cores_text[4096];
    int *threads = NULL, nthreads = 0, *cores = NULL, ncores = 0;
    /* Slurm's name for this node: several slurmd may share one host (the
     * local test cluster), and the placement names Slurm nodes */
    const char *slurm_node = getenv ("SLURMD_NODENAME");
    if (slurm_node && *slurm_node)
        snprintf (host, sizeof (host), "%s", slurm_node);
    else if (gethostname (host, sizeof (host) - 1) < 0)
        snprintf (host, sizeof (host), "unknown");
    if (topology_affinity_ids (&threads, &nthreads, err) < 0
        || topology_physical_cores (sysfs_root, threads, nthreads, &cores, &ncores, err) < 0) {
        free (threads);
        return NULL;
    }
    idset_format (threads, nthreads, threads_text, sizeof (threads_text));
    idset_format (cores, ncores, cores_text, sizeof (cores_text));
    int within = within_berth_cores (cores, ncores);
    free (threads);
    free (cores);

    const char *rank = NULL;
    for (int i = 0; i < N (rank_vars) && !rank; i++)
        rank = getenv (rank_vars[i]);
    const char *nodes = getenv ("BERTH_NODES");
    json_t *mismatches = json_array ();
    if (nodes && *nodes && !host_in (host, nodes)) {
        char text[1024];
        snprintf (text, sizeof (text), "host %s is not one of the placement's nodes "
                  "(BERTH_NODES=%s)", host, nodes);
        json_array_append_new (mismatches, json_string (text));
    }
    json_t *o = json_pack ("{s:s s:s? s:s s:i s:s s:i s:o s:o s:o s:o}", "host", host,
                           "rank", rank, "cpus", threads_text, "threads", nthreads,
                           "cores", cores_text, "ncores", ncores,
                           "within_berth_cores", within < 0 ? json_null ()
                                                            : json_boolean (within),
                           "devices", env_object (device_vars, N (device_vars)),
                           "berth", env_object (berth_vars, N (berth_vars)),
                           "mismatches", mismatches);
    if (!o)
        errprintf (err, "out of memory");
    return o;
}

static void print_text (const json_t *r)
{
    json_t *v;
    const char *key;
    printf ("host     %s", json_string_value (json_object_get (r, "host")));
    if (json_is_string (json_object_get (r, "rank")))
        printf (" (rank %s)", json_string_value (json_object_get (r, "rank")));
    printf ("\ncpus     %s: %d hardware threads of %d physical cores (%s)\n",
            json_string_value (json_object_get (r, "cpus")),
            (int) json_integer_value (json_object_get (r, "threads")),
            (int) json_integer_value (json_object_get (r, "ncores")),
            json_string_value (json_object_get (r, "cores")));
    json_object_foreach (json_object_get (r, "devices"), key, v)
        printf ("%-21s %s\n", key, json_is_string (v) ? json_string_value (v) : "(unset)");
    json_object_foreach (json_object_get (r, "berth"), key, v)
        printf ("%-21s %s\n", key, json_is_string (v) ? json_string_value (v) : "(unset)");
    size_t i;
    json_array_foreach (json_object_get (r, "mismatches"), i, v)
        printf ("MISMATCH: %s\n", json_string_value (v));
}

int cmd_verify (int argc, char **argv)
{
    const char *sysfs_root = NULL;
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt (argc, argv, "h", options)) != -1) {
        switch (c) {
        case OPT_JSON:
            json = true;
            break;
        case OPT_SYSFS:
            sysfs_root = optarg;
            break;
        default:
            return cli_help_or_bad_option (c, "verify", argv, usage);
        }
    }
    if (cli_no_operands ("verify", "", argc, argv))
        return 2;
    berth_error_t err = { 0 };
    json_t *r = report (sysfs_root, &err);
    if (!r)
        return cli_fail (1, "verify", "%s", err.text);
    if (json) {
        char *s = json_dumps (r, JSON_COMPACT);
        if (s)
            printf ("%s\n", s);
        free (s);
    } else
        print_text (r);
    int rc = json_array_size (json_object_get (r, "mismatches")) ? 1 : 0;
    json_decref (r);
    return fflush (stdout) == 0 ? rc : 1;
}
