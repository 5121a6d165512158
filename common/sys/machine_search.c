/* SPDX-License-Identifier: MIT */
/* The machine search path and the layering of machine files over a config:
 * <name>.cfg from the first directory that has it, else the shipped text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_file.h"
#include "machine_search.h"

int machine_search_init (struct machine_search *s,
                         const char *const *option_dirs,
                         const char *(*getenv_fn) (void *, const char *),
                         void *arg, berth_error_t *err)
{
    struct stat st;
    memset (s, 0, sizeof (*s));
    for (int i = 0; option_dirs && option_dirs[i]; i++) {
        if (s->count == MACHINE_SEARCH_MAX)
            return errprintf (err, "too many machine path directories (at "
                              "most %d)", MACHINE_SEARCH_MAX);
        if (stat (option_dirs[i], &st) < 0 || !S_ISDIR (st.st_mode))
            return errprintf (err, "--machine-path %s: %s", option_dirs[i],
                              stat (option_dirs[i], &st) < 0
                                  ? strerror (errno) : "not a directory");
        s->dirs[s->count] = option_dirs[i];
        snprintf (s->source[s->count++], sizeof (s->source[0]),
                  "--machine-path");
    }
    const char *env = getenv_fn (arg, "BERTH_MACHINE_PATH");
    if (env && !(s->env_copy = strdup (env)))
        return errprintf (err, "out of memory");
    int entry = 0;
    char *save = NULL;
    for (char *dir = s->env_copy ? strtok_r (s->env_copy, ":", &save) : NULL;
         dir; dir = strtok_r (NULL, ":", &save)) {
        entry++;
        if (s->count == MACHINE_SEARCH_MAX) {
            machine_search_free (s);
            return errprintf (err, "BERTH_MACHINE_PATH names too many "
                              "directories (at most %d)", MACHINE_SEARCH_MAX);
        }
        /* Like PATH: an entry that is not a directory is passed over. */
        if (stat (dir, &st) < 0 || !S_ISDIR (st.st_mode))
            continue;
        s->dirs[s->count] = dir;
        snprintf (s->source[s->count++], sizeof (s->source[0]),
                  "BERTH_MACHINE_PATH entry %d", entry);
    }
    const char *legacy = getenv_fn (arg, "BERTH_MACHINES_DIR");
    if (legacy && s->count < MACHINE_SEARCH_MAX) {
        s->dirs[s->count] = legacy;
        snprintf (s->source[s->count++], sizeof (s->source[0]),
                  "BERTH_MACHINES_DIR");
    }
    return 0;
}

void machine_search_free (struct machine_search *s)
{
    free (s->env_copy);
    memset (s, 0, sizeof (*s));
}

static int set_file (char **file, char **why, const char *path,
                     const char *because)
{
    if (file && !(*file = strdup (path)))
        return -1;
    if (why && !(*why = strdup (because))) {
        if (file) {
            free (*file);
            *file = NULL;
        }
        return -1;
    }
    return 0;
}

int machine_layer_named (struct config *cfg, const char *name,
                         const struct machine_search *search, bool *found,
                         char **file, char **why, berth_error_t *err)
{
    char path[4096], because[2304], dirs[2048];
    *found = false;
    /* A name is a file name in a directory, never a path. */
    if (!name || !*name || strchr (name, '/'))
        return 0;
    for (int i = 0; search && i < search->count; i++) {
        int w = snprintf (path, sizeof (path), "%s/%s.cfg", search->dirs[i],
                          name);
        if (w > 0 && (size_t)w < sizeof (path) && access (path, F_OK) == 0) {
            *found = true;
            snprintf (because, sizeof (because), "found in %s (%s)",
                      search->dirs[i], search->source[i]);
            if (set_file (file, why, path, because) < 0)
                return errprintf (err, "out of memory");
            return config_load_file (cfg, path, err);
        }
    }
    const char *text = machine_shipped_text (name);
    if (!text)
        return 0;
    snprintf (path, sizeof (path), "machines/%s.cfg", name);
    machine_search_dirs_text (search, dirs, sizeof (dirs));
    if (*dirs)
        snprintf (because, sizeof (because), "shipped with berth: no %s.cfg "
                  "in the machine path, %s", name, dirs);
    else
        snprintf (because, sizeof (because), "shipped with berth: no "
                  "--machine-path or BERTH_MACHINE_PATH set");
    *found = true;
    if (set_file (file, why, path, because) < 0)
        return errprintf (err, "out of memory");
    return config_load_string (cfg, path, text, err);
}

struct machine *machine_new (const char *name, const char *why,
                             const struct machine_search *search,
                             berth_error_t *err)
{
    struct machine *m = calloc (1, sizeof (*m));
    bool found;
    if (!m || !(m->name = strdup (name)) || !(m->chosen_why = strdup (why))
        || !(m->cfg = config_create ())) {
        errprintf (err, "out of memory loading machine %s", name);
        goto fail;
    }
    m->par.memory_per_node = -1;
    if (machine_layer_named (m->cfg, "default", search, &found, NULL, NULL,
                             err) < 0)
        goto fail;
    return m;
fail:
    machine_destroy (m);
    return NULL;
}
