#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idlist.h"

static int parse_id (const char *s, const char **end, long *out)
{
    char *e;
    if (!isdigit ((unsigned char) *s))
        return -1;
    errno = 0;
    long v = strtol (s, &e, 10);
    if (errno || v > IDLIST_MAX_ID)
        return -1;
    *out = v;
    *end = e;
    return 0;
}

int idlist_parse (const char *text, int **ids, int *count, berth_error_t *err)
{
    int *v = NULL;
    size_t n = 0, cap = 0;
    const char *p = text;
    while (isspace ((unsigned char) *p))
        p++;
    while (*p) {
        const char *item = p, *e;
        long a, b;
        size_t len = strcspn (item, ",");
        if (parse_id (p, &e, &a) < 0)
            goto bad;
        b = a;
        if (*e == '-') {
            if (parse_id (e + 1, &e, &b) < 0 || b < a)
                goto bad;
        }
        while (isspace ((unsigned char) *e))
            e++;
        if (*e != ',' && *e != '\0')
            goto bad;
        if (n + (size_t) (b - a + 1) > IDLIST_MAX_ID) {
            free (v);
            return errprintf (err, "'%s' lists more than %d ids", text, IDLIST_MAX_ID);
        }
        while (n + (size_t) (b - a + 1) > cap) {
            cap = cap ? cap * 2 : 16;
            int *nv = realloc (v, cap * sizeof (*v));
            if (!nv) {
                free (v);
                return errprintf (err, "out of memory");
            }
            v = nv;
        }
        for (long i = a; i <= b; i++)
            v[n++] = (int) i;
        p = *e == ',' ? e + 1 : e;
        while (isspace ((unsigned char) *p))
            p++;
        if (*e == ',' && *p == '\0') {
            item = e;
            len = 0;
            goto bad;
        }
        continue;
bad:
        free (v);
        if (len == 0 || (len == 1 && *item == ','))
            return errprintf (err, "'%s' has an empty item", text);
        return errprintf (err, "'%.*s' in '%s' is not an id or range of ids "
                          "(want N or A-B with 0 <= A <= B <= %d)",
                          (int) len, item, text, IDLIST_MAX_ID);
    }
    *ids = v;
    *count = (int) n;
    return 0;
}
