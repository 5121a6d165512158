/* SPDX-License-Identifier: MIT */
/* Shared between machine.c (parsing, queries), machine_compiler.c,
 * sys/machine_search.c (the search path, layering files) and
 * sys/machine_select.c (which machine, generic machines).
 * Not a public API. */
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

/* The search directories joined with ", " into buf ("" when none). */
const char *machine_search_dirs_text (const struct machine_search *s,
                                      char *buf, size_t size);

/* An error listing the shipped machines and the directories searched, for an
 * unknown name. */
int machine_unknown_error (const char *name,
                           const struct machine_search *search,
                           berth_error_t *err);

#endif
