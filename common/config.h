/* SPDX-License-Identifier: MIT */
/* Reader for the INI dialect of E3SM machine files (Python configparser with
 * ExtendedInterpolation): [section] headers, `key = value` or `key: value`,
 * `#`/`;` comment lines, indented continuation lines, case-insensitive keys,
 * ${opt} and ${section:opt} interpolation, `$$` for a literal dollar.
 *
 * Files are layered: each file loaded later wins key by key. Interpolation is
 * done lazily on config_get (against the layered result) and cached, so an
 * unresolvable reference in a section nobody reads is not an error. */
#ifndef BERTH_CONFIG_H
#define BERTH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct config;

struct config *config_create (void);
void config_destroy (struct config *cfg);

/* Parse INI text and layer it over what is already loaded; `name` (a file
 * name) is used in messages. On a syntax error nothing is changed and err
 * names the file and line. Reading a file: sys/config_file.h. */
int config_load_string (struct config *cfg, const char *name, const char *text,
                        berth_error_t *err);

/* Set one raw value (no file behind it, e.g. detected facts); `origin` is used
 * in messages. The value is interpolated like any other. */
int config_set (struct config *cfg, const char *section, const char *key,
                const char *value, const char *origin, berth_error_t *err);

/* The interpolated value of `key` in `section`, falling back to [DEFAULT].
 * Returns 0 with *value NULL when absent. Returns -1 on an interpolation error
 * (loop, undefined reference, bad syntax) naming file, line, section and key.
 * The string stays valid until the config is destroyed or changed. */
int config_get (struct config *cfg, const char *section, const char *key,
                const char **value, berth_error_t *err);

/* Raw (uninterpolated) value, or NULL. */
const char *config_get_raw (const struct config *cfg, const char *section,
                            const char *key);

bool config_has_section (const struct config *cfg, const char *section);

/* Sections in order of first appearance ([DEFAULT] not included). */
size_t config_section_count (const struct config *cfg);
const char *config_section_name (const struct config *cfg, size_t i);

/* Keys of one section in order of first appearance (lower case), without the
 * [DEFAULT] keys. */
size_t config_key_count (const struct config *cfg, const char *section);
const char *config_key_name (const struct config *cfg, const char *section,
                             size_t i);

/* Where a key's winning value was written; returns -1 when absent. */
int config_origin (const struct config *cfg, const char *section,
                   const char *key, const char **file, int *line);

#endif
