/* SPDX-License-Identifier: MIT */
/* Reading a machine's scheduler targets from its layered config. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "machine.h"
#include "targets.h"
#include "text.h"
#include "wallclock.h"


static void strv_free (char **v, int n)
{
    for (int i = 0; i < n; i++)
        free (v[i]);
    free (v);
}

/* Split a comma list into trimmed items, dropping empty ones. */
static int split_list (const char *text, char ***items, int *count)
{
    char **v = NULL;
    int n = 0;
    const char *p = text;

    while (p && *p) {
        const char *comma = strchr (p, ',');
        size_t len = comma ? (size_t) (comma - p) : strlen (p);
        char *raw = strndup (p, len);
        char *item = raw ? text_trim_dup (raw) : NULL;
        free (raw);
        if (item) {
            char **nv = realloc (v, (n + 1) * sizeof (*v));
            if (!nv) {
                free (item);
                strv_free (v, n);
                return -1;
            }
            v = nv;
            v[n++] = item;
        }
        p = comma ? comma + 1 : NULL;
    }
    *items = v;
    *count = n;
    return 0;
}

static bool has_own_key (const struct config *cfg, const char *section,
                         const char *key)
{
    size_t n = config_key_count (cfg, section);
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp (config_key_name (cfg, section, i), key))
            return true;
    return false;
}

/* An effective [parallel] option as a trimmed copy (NULL when unset). The
 * compiler section wins only for keys it sets itself, so that a [DEFAULT]
 * value does not shadow [parallel]. */
static int parallel_get (struct config *cfg, const char *compsec,
                         const char *key, char **value, berth_error_t *err)
{
    const char *section = "parallel";
    const char *v;
    if (compsec && has_own_key (cfg, compsec, key))
        section = compsec;
    if (config_get (cfg, section, key, &v, err) < 0)
        return -1;
    *value = text_trim_dup (v);
    return 0;
}

static int parallel_list (struct config *cfg, const char *compsec,
                          const char *key, char ***items, int *count,
                          berth_error_t *err)
{
    char *text;
    if (parallel_get (cfg, compsec, key, &text, err) < 0)
        return -1;
    int rc = split_list (text, items, count);
    free (text);
    if (rc < 0)
        return errprintf (err, "out of memory reading [parallel] %s", key);
    return 0;
}

static int parse_positive (const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol (text, &end, 10);
    if (!isdigit ((unsigned char) *text) || *end || errno || v < 1
        || v > 1000000000)
        return -1;
    *out = (int) v;
    return 0;
}

static void bins_free (struct target_bin *bins, int n)
{
    for (int i = 0; i < n; i++)
        free (bins[i].clock);
    free (bins);
}

/* A limit as HH:MM:SS in a new string, from any form the scheduler takes. */
static int clock_read (const char *text, enum wallclock_dialect d,
                       char **clock, long long *secs)
{
    char buf[32];
    if (wallclock_read (text, d, secs) < 0)
        return -1;
    *clock = strdup (wallclock_format (*secs, buf, sizeof (buf)));
    return *clock ? 0 : -1;
}

int target_bins_parse (const char *section, const char *text,
                       enum wallclock_dialect d, struct target_bin **bins,
                       int *count, berth_error_t *err)
{
    char **entries;
    int n;
    struct target_bin *b;

    if (split_list (text, &entries, &n) < 0)
        return errprintf (err, "out of memory reading [%s]", section);
    if (n == 0)
        return errprintf (err, "[%s] max_wallclock_bins = '%s' lists no bins; "
                          "write 'NODES: HH:MM:SS, ...' or leave it empty",
                          section, text);
    if (!(b = calloc (n, sizeof (*b)))) {
        strv_free (entries, n);
        return errprintf (err, "out of memory reading [%s]", section);
    }
    for (int i = 0; i < n; i++) {
        char *colon = strchr (entries[i], ':');
        char *bound = NULL, *clock = NULL;
        if (colon) {
            *colon = '\0';
            bound = text_trim_dup (entries[i]);
            clock = text_trim_dup (colon + 1);
            *colon = ':';
        }
        if (!bound || !clock || parse_positive (bound, &b[i].bound) < 0
            || clock_read (clock, d, &b[i].clock, &b[i].seconds) < 0) {
            errprintf (err, "[%s] max_wallclock_bins: malformed entry '%s'; "
                       "each entry is 'NODES: CLOCK' with NODES a positive "
                       "integer and CLOCK one of " WALLCLOCK_FORMS, section,
                       entries[i]);
            free (bound);
            free (clock);
            bins_free (b, n);
            strv_free (entries, n);
            return -1;
        }
        free (bound);
        free (clock);
    }
    strv_free (entries, n);
    /* Insertion sort: stable, so equal bounds keep their written order. */
    for (int i = 1; i < n; i++) {
        struct target_bin x = b[i];
        int j = i;
        for (; j > 0 && b[j - 1].bound > x.bound; j--)
            b[j] = b[j - 1];
        b[j] = x;
    }
    *bins = b;
    *count = n;
    return 0;
}

static void target_free (struct target *t)
{
    free (t->name);
    free (t->max_wallclock);
    bins_free (t->bins, t->nbins);
}

static int section_get (struct config *cfg, const char *section,
                        const char *key, char **value, berth_error_t *err)
{
    const char *v;
    if (config_get (cfg, section, key, &v, err) < 0)
        return -1;
    *value = text_trim_dup (v);
    return 0;
}

static int section_nodes (struct config *cfg, const char *section,
                          const char *key, int *out, berth_error_t *err)
{
    char *text;
    *out = 0;
    if (section_get (cfg, section, key, &text, err) < 0)
        return -1;
    if (text && parse_positive (text, out) < 0) {
        errprintf (err, "[%s] %s = '%s' is not a positive whole number of "
                   "nodes; fix it or leave it empty", section, key, text);
        free (text);
        return -1;
    }
    free (text);
    return 0;
}

/* Fill t (name already set) from [<axis>.<name>], when that section exists;
 * limits are read as dialect d reads them. */
static int target_read (struct config *cfg, const char *axis, struct target *t,
                        enum wallclock_dialect d, berth_error_t *err)
{
    char section[512];
    char *bins = NULL;

    t->max_wallclock_s = -1;
    snprintf (section, sizeof (section), "%s.%s", axis, t->name);
    if (!config_has_section (cfg, section))
        return 0;
    if (section_nodes (cfg, section, "min_nodes", &t->min_nodes, err) < 0
        || section_nodes (cfg, section, "max_nodes", &t->max_nodes, err) < 0
        || section_get (cfg, section, "max_wallclock", &t->max_wallclock,
                        err) < 0
        || section_get (cfg, section, "max_wallclock_bins", &bins, err) < 0)
        return -1;
    if (t->min_nodes && t->max_nodes && t->min_nodes > t->max_nodes) {
        return errprintf (err, "[%s] min_nodes = %d is above max_nodes = %d",
                          section, t->min_nodes, t->max_nodes);
    }
    if (bins && t->max_wallclock) {
        free (bins);
        return errprintf (err, "[%s] sets both max_wallclock and "
                          "max_wallclock_bins; keep only one", section);
    }
    if (t->max_wallclock) {
        char *raw = t->max_wallclock;
        t->max_wallclock = NULL;
        if (clock_read (raw, d, &t->max_wallclock, &t->max_wallclock_s) < 0) {
            errprintf (err, "[%s] max_wallclock = '%s' is not a wall time: "
                       "write " WALLCLOCK_FORMS ", or leave it empty",
                       section, raw);
            free (raw);
            return -1;
        }
        free (raw);
    }
    if (bins) {
        int rc = target_bins_parse (section, bins, d, &t->bins, &t->nbins,
                                    err);
        free (bins);
        return rc;
    }
    return 0;
}

static int axis_load (struct config *cfg, const char *compsec,
                      const char *axis, const char *key,
                      enum wallclock_dialect d, struct target_axis *a,
                      berth_error_t *err)
{
    char **names;
    int n;

    a->name = axis;
    if (parallel_list (cfg, compsec, key, &names, &n, err) < 0)
        return -1;
    if (n && !(a->targets = calloc (n, sizeof (*a->targets)))) {
        strv_free (names, n);
        return errprintf (err, "out of memory reading [parallel] %s", key);
    }
    for (int i = 0; i < n; i++) {
        a->targets[i].name = names[i];
        a->count = i + 1;
        if (target_read (cfg, axis, &a->targets[i], d, err) < 0) {
            for (int j = i + 1; j < n; j++)
                free (names[j]);
            free (names);
            return -1;
        }
    }
    free (names);
    return 0;
}

static void axis_free (struct target_axis *a)
{
    for (int i = 0; i < a->count; i++)
        target_free (&a->targets[i]);
    free (a->targets);
}

void targets_destroy (struct machine_targets *t)
{
    if (!t)
        return;
    int saved = errno;
    free (t->system);
    free (t->account);
    free (t->gpus_per_node);
    axis_free (&t->partition);
    axis_free (&t->qos);
    axis_free (&t->queue);
    strv_free (t->constraints, t->nconstraints);
    strv_free (t->filesystems, t->nfilesystems);
    free (t);
    errno = saved;
}

/* "parallel.<compiler>" with '-' read as '_', or NULL without a compiler. */
static int compiler_section (struct config *cfg, const char *compiler,
                             char **out, berth_error_t *err)
{
    char *name = NULL;
    *out = NULL;
    if (!compiler) {
        const char *v;
        if (config_get (cfg, "build", "compiler", &v, err) < 0)
            return -1;
        compiler = v;
    }
    if (!(name = text_trim_dup (compiler)))
        return 0;
    for (char *p = name; *p; p++)
        if (*p == '-')
            *p = '_';
    if (asprintf (out, "parallel.%s", name) < 0) {
        *out = NULL;
        free (name);
        return errprintf (err, "out of memory");
    }
    free (name);
    return 0;
}

int targets_load (struct config *cfg, const char *compiler,
                  struct machine_targets **out, berth_error_t *err)
{
    struct machine_targets *t;
    char *compsec;

    if (compiler_section (cfg, compiler, &compsec, err) < 0)
        return -1;
    if (!(t = calloc (1, sizeof (*t)))) {
        free (compsec);
        return errprintf (err, "out of memory");
    }
    if (parallel_get (cfg, compsec, "system", &t->system, err) < 0
        || parallel_get (cfg, compsec, "account", &t->account, err) < 0
        || parallel_get (cfg, compsec, "gpus_per_node", &t->gpus_per_node,
                         err) < 0)
        goto fail;
    enum wallclock_dialect d = wallclock_dialect_of (t->system);
    if (axis_load (cfg, compsec, "partition", "partitions", d, &t->partition,
                   err) < 0
        || axis_load (cfg, compsec, "qos", "qos", d, &t->qos, err) < 0
        || axis_load (cfg, compsec, "queue", "queues", d, &t->queue, err) < 0
        || parallel_list (cfg, compsec, "constraints", &t->constraints,
                          &t->nconstraints, err) < 0
        || parallel_list (cfg, compsec, "filesystems", &t->filesystems,
                          &t->nfilesystems, err) < 0)
        goto fail;
    if (!t->gpus_per_node && !(t->gpus_per_node = strdup ("0"))) {
        errprintf (err, "out of memory");
        goto fail;
    }
    free (compsec);
    *out = t;
    return 0;
fail:
    free (compsec);
    targets_destroy (t);
    return -1;
}

int targets_load_machine (struct machine *m, struct machine_targets **out,
                          berth_error_t *err)
{
    struct machine_targets *t;
    char *system, *gpus;

    if (targets_load (m->cfg, m->compiler, &t, err) < 0)
        return -1;
    /* The machine's checked options are the authority for these two. */
    system = strdup (berth_system_name (m->par.system));
    if (!system || asprintf (&gpus, "%d", m->par.gpus_per_node) < 0) {
        free (system);
        targets_destroy (t);
        return errprintf (err, "out of memory");
    }
    free (t->system);
    free (t->gpus_per_node);
    t->system = system;
    t->gpus_per_node = gpus;
    *out = t;
    return 0;
}

int target_clamp (const struct target *t, int nodes)
{
    if (t->min_nodes && nodes < t->min_nodes)
        nodes = t->min_nodes;
    if (t->max_nodes && nodes > t->max_nodes)
        nodes = t->max_nodes;
    return nodes;
}

/* The bin that applies at `nodes` (the first bound >= nodes, above every
 * bound the last), or NULL when the target has no bins. */
static const struct target_bin *bin_at (const struct target *t, int nodes)
{
    for (int i = 0; i < t->nbins; i++)
        if (t->bins[i].bound >= nodes)
            return &t->bins[i];
    return t->nbins ? &t->bins[t->nbins - 1] : NULL;
}

const char *target_max_wallclock (const struct target *t, int nodes)
{
    const struct target_bin *b = bin_at (t, nodes);
    return b ? b->clock : t->max_wallclock;
}

long long target_max_seconds (const struct target *t, int nodes)
{
    const struct target_bin *b = bin_at (t, nodes);
    return b ? b->seconds : t->max_wallclock_s;
}

const struct target *target_axis_find (const struct target_axis *axis,
                                       const char *name)
{
    for (int i = 0; i < axis->count; i++)
        if (!strcmp (axis->targets[i].name, name))
            return &axis->targets[i];
    return NULL;
}

char *target_axis_names (const struct target_axis *axis)
{
    size_t len = 1;
    for (int i = 0; i < axis->count; i++)
        len += strlen (axis->targets[i].name) + 2;
    char *s = malloc (len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < axis->count; i++) {
        if (i)
            strcat (s, ", ");
        strcat (s, axis->targets[i].name);
    }
    return s;
}

void targets_account_defaults (const struct machine_targets *t,
                               struct account_defaults *d)
{
    d->account = t->account;
    d->partition = t->partition.count ? t->partition.targets[0].name : NULL;
    d->constraint = t->nconstraints ? t->constraints[0] : NULL;
    d->qos = t->qos.count ? t->qos.targets[0].name : NULL;
}
