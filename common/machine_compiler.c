/* SPDX-License-Identifier: MIT */
/* Which compiler section of a machine is in force, why, and which compilers
 * the machine knows: [parallel.<c>] sections, the [build] compilers list and
 * the [build] compiler. A compiler the machine does not know is refused where
 * the machine lists its compilers; where it lists none, a compiler without a
 * section of its own may be a CPU build that uses [parallel] as it is, so it
 * is taken with a warning. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "machine_private.h"

static bool blank (const char *s)
{
    while (s && isspace ((unsigned char)*s))
        s++;
    return !s || !*s;
}

/* Same compiler: '-' and '_' alike (sections spell '-' as '_'), any case. */
static bool same_compiler (const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a == '-' ? '_' : (char)tolower ((unsigned char)*a);
        char y = *b == '-' ? '_' : (char)tolower ((unsigned char)*b);
        if (x != y)
            return false;
    }
    return *a == *b;
}

static const char *section_compiler (const char *section)
{
    return strncasecmp (section, "parallel.", 9) == 0 && section[9] ? section + 9 : NULL;
}

bool machine_has_compiler_section (const struct machine *m, const char *compiler)
{
    size_t n = config_section_count (m->cfg);
    for (size_t i = 0; compiler && i < n; i++) {
        const char *c = section_compiler (config_section_name (m->cfg, i));
        if (c && same_compiler (c, compiler))
            return true;
    }
    return false;
}

/* Append name unless the list has it; -1 out of memory. */
static int add_name (char ***v, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (same_compiler ((*v)[i], name))
            return 0;
    char **nv = realloc (*v, (size_t)(*n + 1) * sizeof (char *));
    if (!nv)
        return -1;
    *v = nv;
    if (!(nv[*n] = strdup (name)))
        return -1;
    (*n)++;
    return 0;
}

int machine_compilers (struct machine *m, char ***names, int *count,
                       berth_error_t *err)
{
    char **v = NULL, **listed = NULL;
    int n = 0, nlisted = 0;
    const char *build;
    size_t ns = config_section_count (m->cfg);
    if (config_get (m->cfg, "build", "compiler", &build, err) < 0
        || machine_list (m, "build", "compilers", &listed, &nlisted, err) < 0)
        return -1;
    bool oom = false;
    if (!blank (build))
        oom |= add_name (&v, &n, build) < 0;
    for (int i = 0; i < nlisted; i++)
        oom |= add_name (&v, &n, listed[i]) < 0;
    for (size_t i = 0; i < ns; i++) {
        const char *c = section_compiler (config_section_name (m->cfg, i));
        if (c)
            oom |= add_name (&v, &n, c) < 0;
    }
    for (int i = 0; i < nlisted; i++)
        free (listed[i]);
    free (listed);
    if (oom) {
        for (int i = 0; i < n; i++)
            free (v[i]);
        free (v);
        return errprintf (err, "out of memory listing compilers");
    }
    *names = v;
    *count = n;
    return 0;
}

/* "a, b and c" of the machine's compilers, for messages. */
static void known_text (struct machine *m, char *buf, size_t size)
{
    char **v = NULL;
    int n = 0;
    berth_error_t e;
    buf[0] = '\0';
    if (machine_compilers (m, &v, &n, &e) < 0)
        return;
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf (buf + len, size - len, "%s%s", i == 0 ? "" : i == n - 1
                          ? " and " : ", ", v[i]);
        if (w > 0 && (size_t)w < size - len)
            len += (size_t)w;
        free (v[i]);
    }
    free (v);
    if (n == 0)
        snprintf (buf, size, "none");
}

static int set_text (char **dst, berth_error_t *err, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int set_text (char **dst, berth_error_t *err, const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start (ap, fmt);
    int rc = vasprintf (&s, fmt, ap);
    va_end (ap);
    if (rc < 0)
        return errprintf (err, "out of memory");
    free (*dst);
    *dst = s;
    return 0;
}

int machine_set_compiler (struct machine *m, const char *compiler,
                          berth_error_t *err)
{
    char origin[512] = "";
    bool given = !blank (compiler);
    if (!given) {
        if (config_get (m->cfg, "build", "compiler", &compiler, err) < 0)
            return -1;
        const char *file;
        int line;
        if (!blank (compiler)
            && config_origin (m->cfg, "build", "compiler", &file, &line) == 0 && file)
            snprintf (origin, sizeof (origin), " (%s:%d)", file, line);
    }
    free (m->compiler);
    m->compiler = NULL;
    free (m->compiler_warning);
    m->compiler_warning = NULL;
    if (!blank (compiler) && !(m->compiler = strdup (compiler)))
        return errprintf (err, "out of memory");
    if (!m->compiler)
        return set_text (&m->compiler_why, err, "no compiler given and no [build] "
                         "compiler: [parallel] as it is");

    char **listed = NULL, known[1024];
    int nlisted = 0;
    if (machine_list (m, "build", "compilers", &listed, &nlisted, err) < 0)
        return -1;
    bool in_list = false;
    for (int i = 0; i < nlisted; i++) {
        in_list |= same_compiler (listed[i], m->compiler);
        free (listed[i]);
    }
    free (listed);
    const char *build;
    if (config_get (m->cfg, "build", "compiler", &build, err) < 0)
        return -1;
    bool is_build = !blank (build) && same_compiler (build, m->compiler);
    bool section = machine_has_compiler_section (m, m->compiler);
    const char *how = given ? "given (--compiler)" : "the machine's [build] compiler";
    if (section) {
        char sec[256];
        snprintf (sec, sizeof (sec), "%s", m->compiler);
        for (char *p = sec; *p; p++)
            *p = *p == '-' ? '_' : *p;
        return set_text (&m->compiler_why, err, "%s%s: [parallel.%s] over [parallel]",
                         how, origin, sec);
    }
    if (in_list || is_build)
        return set_text (&m->compiler_why, err, "%s%s: no [parallel.%s] section, "
                         "[parallel] as it is", how, origin, m->compiler);
    known_text (m, known, sizeof (known));
    if (nlisted > 0) {
        int rc = errprintf (err, "machine %s has no compiler '%s': it knows %s ([build] "
                            "compilers and its [parallel.<compiler>] sections); give "
                            "one of them with --compiler", m->name, m->compiler, known);
        free (m->compiler);
        m->compiler = NULL;
        return rc;
    }
    if (set_text (&m->compiler_warning, err, "machine %s has no [parallel.%s] section "
                  "and lists no [build] compilers, so compiler '%s' uses [parallel] "
                  "as it is (compilers it knows: %s)", m->name, m->compiler,
                  m->compiler, known) < 0)
        return -1;
    return set_text (&m->compiler_why, err, "%s%s: not known to the machine, "
                     "[parallel] as it is", how, origin);
}
