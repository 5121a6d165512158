/* SPDX-License-Identifier: MIT */
/* Fuzz target: Slurm host lists. The input is a host list as
 * SLURM_JOB_NODELIST gives it. What expands compresses, and the compressed
 * text expands to the same names (repeats dropped); the input read as
 * names (one per line) compresses without harm. */
#include "fuzz.h"
#include "hostlist.h"

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    return 0;
}

static int by_name (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Sorted with repeats dropped, in place; the new count. */
static int uniq (char **v, int n)
{
    int k = 0;
    qsort (v, (size_t) n, sizeof (*v), by_name);
    for (int i = 0; i < n; i++)
        if (k == 0 || strcmp (v[k - 1], v[i]))
            v[k++] = v[i];
    return k;
}

static void round_trip (char **names, int count)
{
    berth_error_t err;
    char *text;
    FUZZ_CHECK (hostlist_compress ((const char *const *) names, count, &text, &err) == 0,
                "expanded names compress: %s", err.text);
    char **back;
    int nback;
    FUZZ_CHECK (hostlist_expand (text, &back, &nback, &err) == 0,
                "compressed text '%.200s' expands: %s", text, err.text);
    char **a = malloc ((size_t) count * sizeof (*a) + 1);
    char **b = malloc ((size_t) nback * sizeof (*b) + 1);
    FUZZ_CHECK (a && b, "memory");
    if (count)
        memcpy (a, names, (size_t) count * sizeof (*a));
    if (nback)
        memcpy (b, back, (size_t) nback * sizeof (*b));
    int na = uniq (a, count), nb = uniq (b, nback);
    FUZZ_CHECK (na == nb, "'%.200s' holds %d distinct names, not %d", text, nb, na);
    for (int i = 0; i < na; i++)
        FUZZ_CHECK (!strcmp (a[i], b[i]), "'%s' != '%s' after a round trip via '%.200s'",
                    a[i], b[i], text);
    free (a);
    free (b);
    hostlist_free (back, nback);
    free (text);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (fuzz_skip_big (data, size))
        return 0;
    char *text = fuzz_cstr (data, size);
    char **names;
    int count;
    berth_error_t err;
    if (hostlist_expand (text, &names, &count, &err) == 0) {
        FUZZ_CHECK (count >= 0 && count <= HOSTLIST_MAX, "count %d", count);
        if (count <= 20000)
            round_trip (names, count);
        hostlist_free (names, count);
    }
    else
        FUZZ_CHECK (err.text[0], "a refused host list says why");
    /* the same bytes as a list of names, one per line */
    char *lines[256];
    int n = 0;
    for (char *p = text, *nl; n < 256 && p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr (p, '\n');
        if (nl)
            *nl = '\0';
        lines[n++] = p;
    }
    char *out;
    if (hostlist_compress ((const char *const *) lines, n, &out, &err) == 0)
        free (out);
    free (text);
    return 0;
}
