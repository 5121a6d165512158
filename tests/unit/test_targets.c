/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "config.h"
#include "targets.h"
#include "targets_view.h"
#include "testutil.h"

static struct config *cfg_of (const char *text)
{
    berth_error_t err;
    struct config *cfg = config_create ();
    ck_assert_ptr_nonnull (cfg);
    ck_assert_msg (config_load_string (cfg, "t.cfg", text, &err) == 0, "%s",
                   err.text);
    return cfg;
}

static struct machine_targets *load (const char *text, const char *compiler)
{
    berth_error_t err;
    struct machine_targets *t = NULL;
    struct config *cfg = cfg_of (text);
    ck_assert_msg (targets_load (cfg, compiler, &t, &err) == 0, "%s", err.text);
    config_destroy (cfg);
    return t;
}

static void load_fails (const char *text, const char *want1, const char *want2)
{
    berth_error_t err;
    struct machine_targets *t = (struct machine_targets *) &err;
    struct config *cfg = cfg_of (text);
    ck_assert_int_eq (targets_load (cfg, NULL, &t, &err), -1);
    ck_assert_ptr_eq (t, (struct machine_targets *) &err);
    ck_assert_msg (strstr (err.text, want1), "'%s' lacks '%s'", err.text, want1);
    ck_assert_msg (!want2 || strstr (err.text, want2), "'%s' lacks '%s'",
                   err.text, want2);
    config_destroy (cfg);
}

static const char frontier[] =
    "[parallel]\n"
    "system = slurm\n"
    "account = cli115\n"
    "partitions = batch, extended\n"
    "qos = normal, debug\n"
    "[partition.batch]\n"
    "min_nodes = 1\n"
    "max_nodes = 9472\n"
    "max_wallclock_bins = 9472: 12:00:00, 91: 02:00:00, 183: 06:00:00\n"
    "[partition.extended]\n"
    "min_nodes = 1\n"
    "max_nodes = 64\n"
    "max_wallclock = 24:00:00\n"
    "[qos.debug]\n"
    "max_wallclock = 02:00:00\n"
    "[parallel.craygnu_mphipcc]\n"
    "gpus_per_node = 8\n";

START_TEST (frontier_targets)
{
    struct machine_targets *t = load (frontier, NULL);
    ck_assert_str_eq (t->system, "slurm");
    ck_assert_str_eq (t->account, "cli115");
    ck_assert_str_eq (t->gpus_per_node, "0");
    ck_assert_int_eq (t->partition.count, 2);
    ck_assert_str_eq (t->partition.name, "partition");
    ck_assert_str_eq (t->qos.name, "qos");
    ck_assert_str_eq (t->queue.name, "queue");
    ck_assert_int_eq (t->queue.count, 0);
    const struct target *b = &t->partition.targets[0];
    ck_assert_str_eq (b->name, "batch");
    ck_assert_int_eq (b->min_nodes, 1);
    ck_assert_int_eq (b->max_nodes, 9472);
    ck_assert_ptr_null (b->max_wallclock);
    /* Bins are sorted ascending whatever the written order. */
    ck_assert_int_eq (b->nbins, 3);
    ck_assert_int_eq (b->bins[0].bound, 91);
    ck_assert_str_eq (b->bins[0].clock, "02:00:00");
    ck_assert_int_eq (b->bins[1].bound, 183);
    ck_assert_int_eq (b->bins[2].bound, 9472);
    ck_assert_str_eq (b->bins[2].clock, "12:00:00");
    /* The first bound >= nodes applies; above every bound the last. */
    ck_assert_str_eq (target_max_wallclock (b, 1), "02:00:00");
    ck_assert_str_eq (target_max_wallclock (b, 90), "02:00:00");
    ck_assert_str_eq (target_max_wallclock (b, 91), "02:00:00");
    ck_assert_str_eq (target_max_wallclock (b, 92), "06:00:00");
    ck_assert_str_eq (target_max_wallclock (b, 183), "06:00:00");
    ck_assert_str_eq (target_max_wallclock (b, 184), "12:00:00");
    ck_assert_str_eq (target_max_wallclock (b, 20000), "12:00:00");
    const struct target *e = target_axis_find (&t->partition, "extended");
    ck_assert_ptr_eq (e, &t->partition.targets[1]);
    ck_assert_str_eq (target_max_wallclock (e, 64), "24:00:00");
    ck_assert_int_eq (target_clamp (e, 65), 64);
    ck_assert_int_eq (target_clamp (e, 64), 64);
    ck_assert_int_eq (target_clamp (e, 1), 1);
    /* A listed target without a section has no limits. */
    const struct target *n = target_axis_find (&t->qos, "normal");
    ck_assert_int_eq (n->min_nodes, 0);
    ck_assert_int_eq (n->max_nodes, 0);
    ck_assert_ptr_null (target_max_wallclock (n, 5));
    ck_assert_int_eq (target_clamp (n, 100000), 100000);
    ck_assert_str_eq (target_max_wallclock (&t->qos.targets[1], 9000),
                      "02:00:00");
    ck_assert_ptr_null (target_axis_find (&t->qos, "Debug"));
    char *names = target_axis_names (&t->partition);
    ck_assert_str_eq (names, "batch, extended");
    free (names);
    targets_destroy (t);
}
END_TEST

START_TEST (compiler_overlay)
{
    struct machine_targets *t = load (frontier, "craygnu-mphipcc");
    ck_assert_str_eq (t->gpus_per_node, "8");
    targets_destroy (t);
    /* [build] compiler picks the section when none is given. */
    char *text;
    ck_assert_int_ge (asprintf (&text, "%s[build]\ncompiler = craygnu-mphipcc\n",
                                frontier), 0);
    t = load (text, NULL);
    ck_assert_str_eq (t->gpus_per_node, "8");
    targets_destroy (t);
    free (text);
    /* A [DEFAULT] value does not shadow [parallel] through the compiler
     * section; a compiler section may override the lists. */
    t = load ("[DEFAULT]\nqos = fromdefault\n"
              "[parallel]\nsystem = slurm\nqos = regular, debug\n"
              "gpus_per_node = 4\nconstraints = gpu\n"
              "[parallel.gnu]\ngpus_per_node = 0\nconstraints = cpu, gpu\n",
              "gnu");
    ck_assert_int_eq (t->qos.count, 2);
    ck_assert_str_eq (t->qos.targets[0].name, "regular");
    ck_assert_str_eq (t->gpus_per_node, "0");
    ck_assert_int_eq (t->nconstraints, 2);
    ck_assert_str_eq (t->constraints[0], "cpu");
    targets_destroy (t);
}
END_TEST

START_TEST (lists_and_empty_values)
{
    struct machine_targets *t = load (
        "[DEFAULT]\nsite = flare\n"
        "[parallel]\nsystem = pbs\naccount =\nqueues = prod , ,debug,\n"
        "partitions =\nconstraints =   \nfilesystems = home, ${site}\n"
        "[queue.prod]\nmin_nodes =\nmax_nodes = 512\nmax_wallclock = \n"
        "max_wallclock_bins =\n", NULL);
    ck_assert_ptr_null (t->account);
    ck_assert_int_eq (t->queue.count, 2);
    ck_assert_str_eq (t->queue.targets[1].name, "debug");
    ck_assert_int_eq (t->queue.targets[0].min_nodes, 0);
    ck_assert_int_eq (t->queue.targets[0].max_nodes, 512);
    ck_assert_ptr_null (t->queue.targets[0].max_wallclock);
    ck_assert_int_eq (t->queue.targets[0].nbins, 0);
    ck_assert_int_eq (t->partition.count, 0);
    ck_assert_int_eq (t->nconstraints, 0);
    ck_assert_int_eq (t->nfilesystems, 2);
    ck_assert_str_eq (t->filesystems[1], "flare");
    targets_destroy (t);
    /* Nothing at all. */
    t = load ("[parallel]\nsystem = single_node\n", NULL);
    ck_assert_int_eq (t->partition.count + t->qos.count + t->queue.count, 0);
    ck_assert_str_eq (t->gpus_per_node, "0");
    targets_destroy (t);
}
END_TEST

START_TEST (bins_parse)
{
    struct target_bin *b;
    int n;
    berth_error_t err;
    ck_assert_int_eq (target_bins_parse ("partition.x", " 10:01:00:00 ",
                                         WALLCLOCK_SLURM, &b, &n, &err), 0);
    ck_assert_int_eq (n, 1);
    ck_assert_int_eq (b[0].bound, 10);
    ck_assert_str_eq (b[0].clock, "01:00:00");
    free (b[0].clock);
    free (b);
    /* Any form the scheduler takes, kept as HH:MM:SS: D-HH:MM:SS, MM:SS,
     * and a bare number as Slurm (minutes) or PBS (seconds) reads it. */
    ck_assert_int_eq (target_bins_parse ("partition.x",
                                         "9: 1-00:00:00, 5: 02:30, 2: 90",
                                         WALLCLOCK_SLURM, &b, &n, &err), 0);
    ck_assert_str_eq (b[0].clock, "01:30:00");
    ck_assert_int_eq (b[0].seconds, 5400);
    ck_assert_str_eq (b[1].clock, "00:02:30");
    ck_assert_str_eq (b[2].clock, "24:00:00");
    ck_assert_int_eq (b[2].seconds, 86400);
    for (int i = 0; i < n; i++)
        free (b[i].clock);
    free (b);
    ck_assert_int_eq (target_bins_parse ("queue.x", "2: 90", WALLCLOCK_PBS,
                                         &b, &n, &err), 0);
    ck_assert_str_eq (b[0].clock, "00:01:30");
    free (b[0].clock);
    free (b);
    /* Equal bounds keep their written order. */
    ck_assert_int_eq (target_bins_parse ("partition.x",
                                         "5: 03:00:00, 2: 1:00:00, 5: 04:00:00",
                                         WALLCLOCK_SLURM, &b, &n, &err), 0);
    ck_assert_int_eq (n, 3);
    ck_assert_int_eq (b[0].bound, 2);
    ck_assert_str_eq (b[1].clock, "03:00:00");
    ck_assert_str_eq (b[2].clock, "04:00:00");
    for (int i = 0; i < n; i++)
        free (b[i].clock);
    free (b);
}
END_TEST

START_TEST (bins_malformed)
{
    static const char *bad[] = {
        "91 02:00:00", "x: 02:00:00", "0: 02:00:00", "-5: 02:00:00",
        "91: 2h", "91:", ": 02:00:00", "91: 2 hours", "91: 1-00:00:00:00",
        "91: 02:00:00:00", "91: -02:00:00", "91: 02:00:00, 183 06:00:00",
        "9.5: 02:00:00",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        struct target_bin *b = NULL;
        int n = -7;
        berth_error_t err;
        ck_assert_int_eq (target_bins_parse ("partition.batch", bad[i],
                                             WALLCLOCK_SLURM, &b, &n, &err),
                          -1);
        ck_assert_ptr_null (b);
        ck_assert_int_eq (n, -7);
        ck_assert_msg (strstr (err.text, "[partition.batch]")
                       && strstr (err.text, "malformed entry"), "%s: %s",
                       bad[i], err.text);
    }
    berth_error_t err;
    struct target_bin *b = NULL;
    int n;
    ck_assert_int_eq (target_bins_parse ("qos.x", " , ,", WALLCLOCK_SLURM, &b,
                                         &n, &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "[qos.x]"));
    ck_assert_ptr_nonnull (strstr (err.text, "lists no bins"));
}
END_TEST

START_TEST (config_errors)
{
    load_fails ("[parallel]\npartitions = batch\n[partition.batch]\n"
                "max_wallclock = 02:00:00\nmax_wallclock_bins = 9: 01:00:00\n",
                "[partition.batch]", "both max_wallclock and max_wallclock_bins");
    load_fails ("[parallel]\nqos = debug\n[qos.debug]\nmin_nodes = 9\n"
                "max_nodes = 8\n", "[qos.debug] min_nodes = 9 is above "
                "max_nodes = 8", NULL);
    load_fails ("[parallel]\nqueues = prod\n[queue.prod]\nmax_wallclock_bins = "
                "512 24:00:00\n", "[queue.prod]", "malformed entry '512 24:00:00'");
    load_fails ("[parallel]\nqueues = prod\n[queue.prod]\nmax_wallclock_bins = "
                ",\n", "[queue.prod]", "lists no bins");
    load_fails ("[parallel]\nqueues = prod\n[queue.prod]\nmax_wallclock = "
                "2 hours\n", "[queue.prod] max_wallclock = '2 hours' is not a "
                "wall time", "D-HH:MM:SS");
    load_fails ("[parallel]\nqueues = prod\n[queue.prod]\nmin_nodes = many\n",
                "[queue.prod] min_nodes = 'many'", "positive whole number");
    load_fails ("[parallel]\nqueues = prod\n[queue.prod]\nmax_nodes = 0\n",
                "[queue.prod] max_nodes = '0'", NULL);
    load_fails ("[parallel]\nqueues = prod\n[queue.prod]\nmax_nodes = 12x\n",
                "max_nodes = '12x'", NULL);
    /* Interpolation errors come from the config reader. */
    load_fails ("[parallel]\nqos = ${nowhere}\n", "nowhere", NULL);
    load_fails ("[parallel]\nqos = debug\n[qos.debug]\nmax_nodes = ${x}\n",
                "qos.debug", NULL);
}
END_TEST

START_TEST (defaults_and_json)
{
    struct machine_targets *t = load (frontier, NULL);
    struct account_defaults d;
    targets_account_defaults (t, &d);
    ck_assert_str_eq (d.account, "cli115");
    ck_assert_str_eq (d.partition, "batch");
    ck_assert_str_eq (d.qos, "normal");
    ck_assert_ptr_null (d.constraint);

    json_t *o = targets_to_json (t);
    ck_assert_ptr_nonnull (o);
    ck_assert_int_eq (json_array_size (json_object_get (o, "queue")), 0);
    const char *name, *clock, *mw;
    int min, max, bound;
    json_t *bins, *nmax, *nmw;
    ck_assert_int_eq (json_unpack (json_object_get (o, "partition"),
                                   "[{s:s s:i s:i s:o s:o}, {s:s s:s}]",
                                   "name", &name, "min_nodes", &min,
                                   "max_nodes", &max, "max_wallclock", &nmw,
                                   "max_wallclock_bins", &bins,
                                   "name", &name, "max_wallclock", &mw), 0);
    ck_assert_str_eq (name, "extended");
    ck_assert_str_eq (mw, "24:00:00");
    ck_assert_int_eq (max, 9472);
    ck_assert (json_is_null (nmw));
    ck_assert_int_eq (json_unpack (bins, "[{s:i s:s}, {}, {}]", "nodes", &bound,
                                   "max_wallclock", &clock), 0);
    ck_assert_int_eq (bound, 91);
    ck_assert_str_eq (clock, "02:00:00");
    ck_assert_int_eq (json_unpack (json_object_get (o, "qos"),
                                   "[{s:s s:o}, {s:s}]", "name", &name,
                                   "max_nodes", &nmax, "max_wallclock", &mw),
                      0);
    ck_assert (json_is_null (nmax));
    ck_assert_str_eq (mw, "02:00:00");
    json_decref (o);

    o = account_defaults_to_json (t);
    const char *acc, *part, *qos;
    json_t *con;
    ck_assert_int_eq (json_unpack (o, "{s:s s:s s:s s:o !}", "account", &acc,
                                   "partition", &part, "qos", &qos,
                                   "constraint", &con), 0);
    ck_assert_str_eq (acc, "cli115");
    ck_assert_str_eq (part, "batch");
    ck_assert_str_eq (qos, "normal");
    ck_assert (json_is_null (con));
    json_decref (o);
    targets_destroy (t);
    targets_destroy (NULL);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("targets");
    TCase *tc = tcase_create ("targets");
    tcase_add_test (tc, frontier_targets);
    tcase_add_test (tc, compiler_overlay);
    tcase_add_test (tc, lists_and_empty_values);
    tcase_add_test (tc, bins_parse);
    tcase_add_test (tc, bins_malformed);
    tcase_add_test (tc, config_errors);
    tcase_add_test (tc, defaults_and_json);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
