/* SPDX-License-Identifier: MIT */
/* Reading a config file into memory for config_load_string (the parser is
 * the pure config.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_file.h"

int config_load_file (struct config *cfg, const char *path, berth_error_t *err)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return errprintf (err, "%s: cannot open: %s", path, strerror (errno));
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream (&text, &size);
    char buf[8192];
    size_t n;
    int rc = -1;
    if (!mem) {
        errprintf (err, "%s: out of memory", path);
        goto out;
    }
    while ((n = fread (buf, 1, sizeof (buf), f)) > 0)
        fwrite (buf, 1, n, mem);
    if (ferror (f)) {
        errprintf (err, "%s: read error: %s", path, strerror (errno));
        fclose (mem);
        goto out;
    }
    fclose (mem);
    if (memchr (text, '\0', size)) {
        errprintf (err, "%s: contains a NUL byte; not a text file", path);
        goto out;
    }
    rc = config_load_string (cfg, path, text, err);
out:
    free (text);
    fclose (f);
    return rc;
}
