/* SPDX-License-Identifier: MIT */
/* Loading a config file from disk (berthsys). */
#ifndef BERTH_CONFIG_FILE_H
#define BERTH_CONFIG_FILE_H

#include "config.h"

/* Parse an INI file and layer it over what is already loaded. On a syntax
 * error nothing is changed and err names the file and line. */
int config_load_file (struct config *cfg, const char *path, berth_error_t *err);

#endif
