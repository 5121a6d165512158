/* SPDX-License-Identifier: MIT */
/* Properties of rendering over every shipped machine and compiler section,
 * unplaced and placed, for every launcher version its system can have, with
 * and without memory caps: no flag twice, and an unplaced launch never says
 * --exact, --gres=none or --env-remove. */
#include <string.h>

#include "launcher.h"
#include "machine.h"
#include "machine_select.h"
#include "placement.h"
#include "render.h"
#include "testutil.h"

static char *const prog[] = { "./prog", "-x", NULL };
static int renders, refusals;

/* The flag name of a launcher argv item ("--mem=8M" -> "--mem"), or NULL
 * for values. */
static const char *flag_of (const char *item, char *buf, size_t size)
{
    if (item[0] != '-')
        return NULL;
    size_t n = strcspn (item, "=");
    if (n >= size)
        n = size - 1;
    memcpy (buf, item, n);
    buf[n] = '\0';
    return buf;
}

static void check_launch (const char *what, const struct machine *m,
                          const struct launch *l, bool placed)
{
    /* the launcher's part starts at the launcher (after a placement prefix
     * such as taskset's, which is another program) and ends where the
     * program starts */
    int end = l->argc - 2, start = 0;
    char exe[128];
    snprintf (exe, sizeof (exe), "%.*s", (int) strcspn (m->par.parallel_executable, " "),
              m->par.parallel_executable);
    while (start < end && strcmp (l->argv[start], exe))
        start++;
    ck_assert_msg (start < end, "%s: launcher %s missing", what, exe);
    ck_assert_msg (end > 0 && !strcmp (l->argv[end], "./prog"), "%s: program not last", what);
    for (int i = start; i < end; i++) {
        char a[128], b[128];
        const char *fa = flag_of (l->argv[i], a, sizeof (a));
        if (!fa || !strcmp (fa, "--env"))
            continue;
        for (int j = i + 1; j < end; j++) {
            const char *fb = flag_of (l->argv[j], b, sizeof (b));
            ck_assert_msg (!fb || strcmp (fa, fb), "%s: flag %s twice", what, fa);
        }
        if (!placed) {
            ck_assert_msg (strcmp (fa, "--exact") && strcmp (fa, "--env-remove"),
                           "%s: unplaced launch says %s", what, fa);
            ck_assert_msg (strcmp (l->argv[i], "--gres=none"),
                           "%s: unplaced launch says --gres=none", what);
        }
        ck_assert_msg (strcmp (fa, "--env-remove"), "%s: --env-remove rendered", what);
    }
}

static void try_render (const char *what, struct machine *m, int alloc_nodes,
                        const struct launcher_caps *caps, struct launch_request *q)
{
    struct launch l = { 0 };
    berth_error_t err = { 0 };
    if (render_launch (&m->par, alloc_nodes, caps, q, &l, &err) < 0) {
        /* a refusal is fine (e.g. GPUs on Slurm 20.02), but it says why */
        ck_assert_msg (err.code && !strcmp (err.code, "render") && err.text[0],
                       "%s: refusal without a render message", what);
        ck_assert_ptr_null (l.argv);
        refusals++;
        return;
    }
    check_launch (what, m, &l, q->placement != NULL);
    renders++;
    launch_free (&l);
}

static const char *const slurm_specs[] = { "slurm:25.11", "slurm:20.11.3", "slurm:20.11.2",
                                           "slurm:20.02", "none", NULL };
static const char *const pbs_specs[] = { "pals", "none", NULL };
static const char *const single_specs[] = { "taskset", "none", NULL };

static void matrix (struct machine *m, const char *label)
{
    const char *const *specs = m->par.system == BERTH_SYSTEM_SLURM ? slurm_specs
                               : m->par.system == BERTH_SYSTEM_PBS ? pbs_specs
                                                                   : single_specs;
    int cores = m->par.cores_per_node > 0 ? m->par.cores_per_node : 4;
    int gpus = m->par.gpus_per_node;
    for (const char *const *spec = specs; *spec; spec++) {
        struct launcher_caps caps;
        berth_error_t err;
        ck_assert_msg (launcher_caps_parse (*spec, m->par.system, &caps, &err) == 0,
                       "%s %s: %s", label, *spec, err.text);
        int ntasks_v[] = { 1, 2, 4 }, cpt_v[] = { 0, 1, 2 };
        for (size_t a = 0; a < 3; a++) {
            for (size_t b = 0; b < 3; b++) {
                int nt = ntasks_v[a], cpt = cpt_v[b], per = cpt ? cpt : 1;
                if (nt * per > cores)
                    continue;
                for (int g = 0; g <= (gpus > 0 ? 1 : 0); g++) {
                    for (int capped = 0; capped < 2; capped++) {
                        char what[256];
                        /* unplaced */
                        struct launch_request q = {
                            .argv = prog, .ntasks = nt, .cpus_per_task = cpt,
                            .gpus_per_task = g, .has_memory_cap = capped,
                            .memory_cap = 1000,
                        };
                        snprintf (what, sizeof (what), "%s %s unplaced n%d c%d g%d cap%d",
                                  label, *spec, nt, cpt, g, capped);
                        try_render (what, m, 2, &caps, &q);
                        /* placed on one node and on two nodes */
                        for (int nn = 1; nn <= 2; nn++) {
                            struct placement_node nodes[2];
                            int ids[2][512];
                            for (int k = 0; k < nn; k++) {
                                for (int i = 0; i < nt * per && i < 512; i++)
                                    ids[k][i] = i;
                                nodes[k] = (struct placement_node){
                                    .name = k ? "node-b" : "node-a", .cores = ids[k],
                                    .ncores = nt * per };
                            }
                            int gid[1] = { 0 };
                            struct placement p = { .nodes = nodes, .nnodes = nn, .gpus = g,
                                                  .gpu_ids = g ? gid : NULL, .ngpu_ids = g };
                            q.placement = &p;
                            snprintf (what, sizeof (what), "%s %s placed on %d n%d c%d g%d cap%d",
                                      label, *spec, nn, nt, cpt, g, capped);
                            try_render (what, m, 2, &caps, &q);
                            q.placement = NULL;
                        }
                    }
                }
            }
        }
    }
}

START_TEST (every_machine_every_compiler)
{
    int machines = 0;
    for (const char *const *name = machine_shipped_names (); *name; name++) {
        if (!strcmp (*name, "default"))
            continue;
        struct machine_options opts = { .name = *name };
        struct machine *m;
        berth_error_t err;
        ck_assert_msg (machine_load (&opts, &m, &err) == 0, "%s: %s", *name, err.text);
        matrix (m, *name);
        /* every compiler section of the file */
        size_t nsec = config_section_count (m->cfg);
        char **compilers = calloc (nsec, sizeof (char *));
        int nc = 0;
        for (size_t i = 0; i < nsec; i++) {
            const char *sec = config_section_name (m->cfg, i);
            if (!strncmp (sec, "parallel.", 9))
                compilers[nc++] = strdup (sec + 9);
        }
        machine_destroy (m);
        for (int i = 0; i < nc; i++) {
            opts.compiler = compilers[i];
            ck_assert_msg (machine_load (&opts, &m, &err) == 0, "%s %s: %s", *name,
                           compilers[i], err.text);
            char label[128];
            snprintf (label, sizeof (label), "%s/%s", *name, compilers[i]);
            matrix (m, label);
            machine_destroy (m);
            free (compilers[i]);
        }
        free (compilers);
        machines++;
    }
    ck_assert_int_ge (machines, 11);
    /* the matrix really rendered (and the refusals are the exception) */
    ck_assert_int_gt (renders, 1000);
    ck_assert_int_lt (refusals, renders);
    printf ("%d launches rendered, %d refused\n", renders, refusals);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("render_machines");
    TCase *tc = tcase_create ("all");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, every_machine_every_compiler);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
