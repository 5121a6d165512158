/* Shared between machine.c (layering, parsing, queries) and machine_select.c
 * (which machine, generic machines, detected figures). Not a public API. */
#ifndef BERTH_MACHINE_PRIVATE_H
#define BERTH_MACHINE_PRIVATE_H

#include <stdbool.h>

#include "machine.h"

/* The directories searched for <name>.cfg before the shipped machines, in
 * order: each --machine-path, then BERTH_MACHINE_PATH's entries, then
 * BERTH_MACHINES_DIR. `source` says where each came from, for people. */
#define MACHINE_SEARCH_MAX 32
struct machine_search {
    const char *dirs[MACHINE_SEARCH_MAX];
    char source[MACHINE_SEARCH_MAX][64];
    int count;
    char *env_copy;     /* BERTH_MACHINE_PATH, split in place; owned */
};

/* Fill s from the options and the environment (getenv_fn(arg, name)). An
 * explicit --machine-path that is not a directory is an error; environment
 * entries that are not are skipped (PATH-like). */
int machine_search_init (struct machine_search *s,
                         const char *const *option_dirs,
                         const char *(*getenv_fn) (void *, const char *),
                         void *arg, berth_error_t *err);
void machine_search_free (struct machine_search *s);

/* A machine holding only default.cfg (the first found on the search path,
 * else the shipped one). */
struct machine *machine_new (const char *name, const char *why,
                             const struct machine_search *search,
                             berth_error_t *err);

/* Layer <name>.cfg over cfg: the first search directory that has it, else
 * the shipped text. *found is false (and nothing happens) when none has it.
 * When file/why are not NULL they get (owned) the file read and why that
 * one: "found in DIR (BERTH_MACHINE_PATH entry 1)", "shipped with berth". */
int machine_layer_named (struct config *cfg, const char *name,
                         const struct machine_search *search, bool *found,
                         char **file, char **why, berth_error_t *err);

/* Choose the compiler (given, else [build] compiler) and so the overlay. */
int machine_set_compiler (struct machine *m, const char *compiler,
                          berth_error_t *err);

/* Effective [parallel] value of key: NULL when absent or empty. */
int machine_effective_get (struct machine *m, const char *key,
                           const char **value, berth_error_t *err);

/* Set key where its effective value comes from (the overlay when the overlay
 * has it, else [parallel]). */
int machine_effective_set (struct machine *m, const char *key,
                           const char *value, const char *origin,
                           berth_error_t *err);

/* Fill m->par from the effective options. */
int machine_parse_parallel (struct machine *m, berth_error_t *err);

/* Split a comma list into trimmed items, empty ones dropped; the array is
 * NULL-terminated. machine_free_list frees items and array. */
int machine_split_list (const char *text, char ***items, int *count,
                        berth_error_t *err);
void machine_free_list (char **items);

/* An error listing the shipped machines and the directories searched, for an
 * unknown name. */
int machine_unknown_error (const char *name,
                           const struct machine_search *search,
                           berth_error_t *err);

#endif
