/* SPDX-License-Identifier: MIT */
/* The machine search path and machine files layered from it (berthsys).
 * Not a public API: machine_select.c's. */
#ifndef BERTH_MACHINE_SEARCH_H
#define BERTH_MACHINE_SEARCH_H

#include "machine_private.h"

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

#endif
