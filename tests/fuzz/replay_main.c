/* SPDX-License-Identifier: MIT */
/* Runs a fuzz target over files without fuzzing, for builds without
 * libFuzzer: every argument is a file or a directory of files (the
 * committed corpus), each given to LLVMFuzzerTestOneInput once. A crash or
 * a failed check aborts; the sanitizers of the build report as usual. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
        return -1;
    }
    size_t cap = 4096, n = 0, r;
    unsigned char *buf = malloc (cap);
    while (buf && (r = fread (buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            unsigned char *b = realloc (buf, cap * 2);
            if (!b)
                break;
            buf = b;
            cap *= 2;
        }
    }
    fclose (f);
    if (!buf) {
        fprintf (stderr, "replay: out of memory reading %s\n", path);
        return -1;
    }
    /* A copy of exactly n bytes, so that ASan sees reads past the input. */
    unsigned char *exact = malloc (n ? n : 1);
    if (!exact) {
        free (buf);
        return -1;
    }
    memcpy (exact, buf, n);
    free (buf);
    LLVMFuzzerTestOneInput (exact, n);
    free (exact);
    return 0;
}

static int by_name (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static int run_path (const char *path, int *count)
{
    struct stat st;
    if (stat (path, &st) < 0) {
        fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
        return -1;
    }
    if (!S_ISDIR (st.st_mode)) {
        (*count)++;
        return run_file (path);
    }
    DIR *d = opendir (path);
    if (!d) {
        fprintf (stderr, "replay: %s: %s\n", path, strerror (errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (e->d_name[0] == '.')
            continue;
        char **nn = realloc (names, (n + 1) * sizeof (*names));
        if (!nn)
            break;
        names = nn;
        size_t len = strlen (path) + strlen (e->d_name) + 2;
        if (!(names[n] = malloc (len)))
            break;
        snprintf (names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir (d);
    qsort (names, n, sizeof (*names), by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (run_path (names[i], count) < 0)
            rc = -1;
        free (names[i]);
    }
    free (names);
    return rc;
}

int main (int argc, char **argv)
{
    int count = 0, rc = 0;
    LLVMFuzzerInitialize (&argc, &argv);
    if (argc < 2) {
        fprintf (stderr, "usage: %s FILE-OR-DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (run_path (argv[i], &count) < 0)
            rc = 1;
    printf ("replayed %d inputs\n", count);
    return rc || count == 0 ? 1 : 0;
}
