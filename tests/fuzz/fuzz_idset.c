/* SPDX-License-Identifier: MIT */
/* Fuzz target: id sets ("0-3,8") and ordered id lists ("4-7,0-3"), as cpu
 * lists, GPU lists and journal records give them. A parsed set is sorted and
 * unique, formats back to text that parses to the same set, and has a hex
 * mask; a parsed list holds ids in range, and as a set equals the set
 * parsed from the same text. */
#include "fuzz.h"
#include "idset.h"

#define MAX_ID (1 << 20)

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    return 0;
}

static int cmp_int (const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (fuzz_skip_big (data, size))
        return 0;
    char *text = fuzz_cstr (data, size);
    berth_error_t err;
    int *set = NULL, nset = -1;
    if (idset_parse (text, &set, &nset, &err) == 0) {
        for (int i = 0; i < nset; i++) {
            FUZZ_CHECK (set[i] >= 0 && set[i] <= MAX_ID, "id %d in range", set[i]);
            FUZZ_CHECK (i == 0 || set[i - 1] < set[i], "sorted and unique");
        }
        int need = idset_format (set, nset, NULL, 0);
        FUZZ_CHECK (need >= 0, "format length");
        char *buf = malloc ((size_t) need + 1);
        FUZZ_CHECK (buf, "memory");
        FUZZ_CHECK (idset_format (set, nset, buf, (size_t) need + 1) == need, "same length");
        int *back, nback;
        FUZZ_CHECK (idset_parse (buf, &back, &nback, &err) == 0,
                    "formatted '%.100s' parses: %s", buf, err.text);
        FUZZ_CHECK (nback == nset && (nset == 0 || !memcmp (back, set, (size_t) nset * sizeof (int))),
                    "'%.100s' round trips", buf);
        /* a short buffer is cut, never overrun */
        char small[8];
        FUZZ_CHECK (idset_format (set, nset, small, sizeof (small)) == need, "cut length");
        FUZZ_CHECK (memchr (small, '\0', sizeof (small)), "cut text ends");
        int mneed = idset_hexmask (set, nset, NULL, 0);
        FUZZ_CHECK (mneed >= 3, "mask length %d", mneed);
        char *mask = malloc ((size_t) mneed + 1);
        FUZZ_CHECK (mask && idset_hexmask (set, nset, mask, (size_t) mneed + 1) == mneed,
                    "mask");
        FUZZ_CHECK (mask[0] == '0' && mask[1] == 'x', "mask is hex");
        free (mask);
        free (back);
        free (buf);
    }
    else
        FUZZ_CHECK (err.text[0], "a refused set says why");
    int *list = NULL, nlist = 0;
    if (idlist_parse (text, &list, &nlist, &err) == 0) {
        FUZZ_CHECK (nlist >= 0 && nlist <= 2 * (MAX_ID + 1), "list length %d", nlist);
        for (int i = 0; i < nlist; i++)
            FUZZ_CHECK (list[i] >= 0 && list[i] <= MAX_ID, "list id %d", list[i]);
        if (nset >= 0) {
            if (nlist > 1)
                qsort (list, (size_t) nlist, sizeof (int), cmp_int);
            int k = 0;
            for (int i = 0; i < nlist; i++)
                if (k == 0 || list[k - 1] != list[i])
                    list[k++] = list[i];
            FUZZ_CHECK (k == nset && (k == 0 || !memcmp (list, set, (size_t) k * sizeof (int))),
                        "the list and the set of '%.100s' hold the same ids", text);
        }
    }
    else
        FUZZ_CHECK (err.text[0], "a refused list says why");
    free (list);
    free (set);
    free (text);
    return 0;
}
