/* Shared between machine.c (layering, parsing, queries) and machine_select.c
 * (which machine, generic machines, detected figures). Not a public API. */
#ifndef BERTH_MACHINE_PRIVATE_H
#define BERTH_MACHINE_PRIVATE_H

#include <stdbool.h>

#include "machine.h"

/* A machine holding only default.cfg (from `dir` when it has default.cfg). */
struct machine *machine_new (const char *name, const char *why,
                             const char *dir, berth_error_t *err);

/* Layer machines/<name>.cfg over cfg: <dir>/<name>.cfg when dir is set and
 * has it, else the shipped text. *found is false (and nothing happens) when
 * neither exists. */
int machine_layer_named (struct config *cfg, const char *name,
                         const char *dir, bool *found, berth_error_t *err);

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

/* An error listing the shipped machines, for an unknown name. */
int machine_unknown_error (const char *name, berth_error_t *err);

#endif
