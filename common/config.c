/* SPDX-License-Identifier: MIT */
/* INI reader in the dialect of Python's configparser with
 * ExtendedInterpolation (strict mode), as E3SM machine files are written. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"

#define MAX_DEPTH 32   /* interpolation nesting; deeper is a loop or abuse */

struct entry {
    char *key;      /* lower case */
    char *raw;
    char *origin;   /* file name */
    int line;
    char *value;    /* interpolated, cached; NULL until asked */
};

struct cached {
    const char *key;   /* borrowed from the [DEFAULT] entry */
    char *value;
};

struct section {
    char *name;
    struct entry *entries;
    size_t count, cap;
    struct cached *defaults;   /* [DEFAULT] values interpolated here */
    size_t ndefaults;
};

struct config {
    struct section default_section;
    struct section *sections;
    size_t count, cap;
};

static void section_clear (struct section *s)
{
    for (size_t i = 0; i < s->count; i++) {
        free (s->entries[i].key);
        free (s->entries[i].raw);
        free (s->entries[i].origin);
        free (s->entries[i].value);
    }
    free (s->entries);
    for (size_t i = 0; i < s->ndefaults; i++)
        free (s->defaults[i].value);
    free (s->defaults);
    free (s->name);
    memset (s, 0, sizeof (*s));
}

struct config *config_create (void)
{
    struct config *cfg = calloc (1, sizeof (*cfg));
    if (cfg && !(cfg->default_section.name = strdup ("DEFAULT"))) {
        free (cfg);
        return NULL;
    }
    return cfg;
}

void config_destroy (struct config *cfg)
{
    if (!cfg)
        return;
    int saved = errno;
    section_clear (&cfg->default_section);
    for (size_t i = 0; i < cfg->count; i++)
        section_clear (&cfg->sections[i]);
    free (cfg->sections);
    free (cfg);
    errno = saved;
}

static struct section *find_section (const struct config *cfg, const char *name)
{
    if (!strcmp (name, "DEFAULT"))
        return (struct section *) &cfg->default_section;
    for (size_t i = 0; i < cfg->count; i++)
        if (!strcmp (cfg->sections[i].name, name))
            return &cfg->sections[i];
    return NULL;
}

static struct entry *find_entry (const struct section *s, const char *key)
{
    for (size_t i = 0; s && i < s->count; i++)
        if (!strcasecmp (s->entries[i].key, key))
            return &s->entries[i];
    return NULL;
}

static void drop_cached_values (struct config *cfg)
{
    for (size_t i = 0; i <= cfg->count; i++) {
        struct section *s = i < cfg->count ? &cfg->sections[i] : &cfg->default_section;
        for (size_t j = 0; j < s->count; j++) {
            free (s->entries[j].value);
            s->entries[j].value = NULL;
        }
        for (size_t j = 0; j < s->ndefaults; j++)
            free (s->defaults[j].value);
        free (s->defaults);
        s->defaults = NULL;
        s->ndefaults = 0;
    }
}

static struct section *add_section (struct config *cfg, const char *name)
{
    struct section *s = find_section (cfg, name);
    if (s)
        return s;
    if (cfg->count == cfg->cap) {
        size_t cap = cfg->cap ? cfg->cap * 2 : 8;
        struct section *n = realloc (cfg->sections, cap * sizeof (*n));
        if (!n)
            return NULL;
        cfg->sections = n;
        cfg->cap = cap;
    }
    s = &cfg->sections[cfg->count];
    memset (s, 0, sizeof (*s));
    if (!(s->name = strdup (name)))
        return NULL;
    cfg->count++;
    return s;
}

/* Set key in s, replacing an earlier value (later files win key by key). */
static int put_entry (struct section *s, const char *key, const char *raw,
                      const char *origin, int line)
{
    struct entry *e = find_entry (s, key);
    char *nraw = strdup (raw);
    char *norigin = strdup (origin);
    if (!nraw || !norigin) {
        free (nraw);
        free (norigin);
        return -1;
    }
    if (!e) {
        char *nkey = strdup (key);
        if (!nkey || (s->count == s->cap
                      && !(s->entries = realloc (s->entries,
                                                 (s->cap = s->cap ? s->cap * 2 : 8)
                                                     * sizeof (*e))))) {
            free (nkey);
            free (nraw);
            free (norigin);
            return -1;
        }
        e = &s->entries[s->count++];
        memset (e, 0, sizeof (*e));
        e->key = nkey;
        for (char *p = e->key; *p; p++)
            *p = (char) tolower ((unsigned char) *p);
    }
    free (e->raw);
    free (e->origin);
    free (e->value);
    e->raw = nraw;
    e->origin = norigin;
    e->line = line;
    e->value = NULL;
    return 0;
}

/* One parsed key before it is layered in. */
struct pending {
    char *section;
    char *key;
    char *value;     /* grows with continuation lines */
    int line;
};

struct parse {
    struct pending *items;
    size_t count, cap;
    char **sections;   /* headers seen in this file, in order */
    size_t nsections, capsections;
};

static void parse_free (struct parse *p)
{
    for (size_t i = 0; i < p->count; i++) {
        free (p->items[i].section);
        free (p->items[i].key);
        free (p->items[i].value);
    }
    free (p->items);
    for (size_t i = 0; i < p->nsections; i++)
        free (p->sections[i]);
    free (p->sections);
}

static char *strip (char *s)
{
    while (isspace ((unsigned char) *s))
        s++;
    size_t n = strlen (s);
    while (n > 0 && isspace ((unsigned char) s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int append_text (char **dst, const char *sep, const char *add)
{
    size_t a = strlen (*dst), b = strlen (sep), c = strlen (add);
    char *n = realloc (*dst, a + b + c + 1);
    if (!n)
        return -1;
    memcpy (n + a, sep, b);
    memcpy (n + a + b, add, c + 1);
    *dst = n;
    return 0;
}

static int parse_text (const char *name, const char *text, struct parse *p,
                       berth_error_t *err)
{
    char *copy = strdup (text);
    if (!copy)
        return errprintf (err, "%s: out of memory", name);
    const char *current = NULL;
    struct pending *last = NULL;    /* the value a continuation line extends */
    int lineno = 0;
    int rc = -1;

    /* walk line by line by hand: strtok_r would skip empty lines */
    char *line = copy;
    while (line) {
        char *next = strchr (line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        size_t len = strlen (line);
        if (len > 0 && line[len - 1] == '\r')
            line[--len] = '\0';
        char *s = strip (line);
        if (*s == '\0') {
            last = NULL;      /* a blank line ends a value */
        }
        else if (*s == '#' || *s == ';') {
            /* full-line comment: does not end a multi-line value */
        }
        else if (isspace ((unsigned char) line[0]) && last) {
            if (append_text (&last->value, "\n", s) < 0) {
                errprintf (err, "%s:%d: out of memory", name, lineno);
                goto out;
            }
        }
        else if (*s == '[') {
            char *close = strrchr (s, ']');
            if (!close || close[1] != '\0') {
                errprintf (err, "%s:%d: malformed section header '%s' (want [name])",
                           name, lineno, s);
                goto out;
            }
            *close = '\0';
            char *sec = strip (s + 1);
            if (*sec == '\0') {
                errprintf (err, "%s:%d: empty section name", name, lineno);
                goto out;
            }
            for (size_t i = 0; i < p->nsections; i++) {
                if (!strcmp (p->sections[i], sec)) {
                    errprintf (err, "%s:%d: section [%s] appears twice in this file",
                               name, lineno, sec);
                    goto out;
                }
            }
            if (p->nsections == p->capsections) {
                size_t cap = p->capsections ? p->capsections * 2 : 8;
                char **n = realloc (p->sections, cap * sizeof (*n));
                if (!n) {
                    errprintf (err, "%s:%d: out of memory", name, lineno);
                    goto out;
                }
                p->sections = n;
                p->capsections = cap;
            }
            if (!(p->sections[p->nsections] = strdup (sec))) {
                errprintf (err, "%s:%d: out of memory", name, lineno);
                goto out;
            }
            current = p->sections[p->nsections++];
            last = NULL;
        }
        else {
            if (!current) {
                errprintf (err, "%s:%d: '%s' comes before any [section] header",
                           name, lineno, s);
                goto out;
            }
            size_t k = strcspn (s, "=:");
            if (s[k] == '\0') {
                errprintf (err, "%s:%d: [%s] '%s' has no value (want key = value)",
                           name, lineno, current, s);
                goto out;
            }
            s[k] = '\0';
            char *key = strip (s);
            char *value = strip (s + k + 1);
            if (*key == '\0') {
                errprintf (err, "%s:%d: [%s] a value with no key", name, lineno,
                           current);
                goto out;
            }
            for (size_t i = 0; i < p->count; i++) {
                if (!strcmp (p->items[i].section, current)
                    && !strcasecmp (p->items[i].key, key)) {
                    errprintf (err, "%s:%d: [%s] %s is set twice in this file "
                               "(first on line %d)", name, lineno, current, key,
                               p->items[i].line);
                    goto out;
                }
            }
            if (p->count == p->cap) {
                size_t cap = p->cap ? p->cap * 2 : 32;
                struct pending *n = realloc (p->items, cap * sizeof (*n));
                if (!n) {
                    errprintf (err, "%s:%d: out of memory", name, lineno);
                    goto out;
                }
                p->items = n;
                p->cap = cap;
            }
            last = &p->items[p->count];
            last->section = strdup (current);
            last->key = strdup (key);
            last->value = strdup (value);
            last->line = lineno;
            p->count++;
            if (!last->section || !last->key || !last->value) {
                errprintf (err, "%s:%d: out of memory", name, lineno);
                goto out;
            }
        }
        line = next;
    }
    rc = 0;
out:
    free (copy);
    return rc;
}

int config_load_string (struct config *cfg, const char *name, const char *text,
                        berth_error_t *err)
{
    struct parse p = { 0 };
    if (parse_text (name, text, &p, err) < 0) {
        parse_free (&p);
        return -1;
    }
    /* Only now touch cfg, so a bad file changes nothing. Allocation failures
     * past this point are reported but may leave part of the file applied. */
    int rc = 0;
    for (size_t i = 0; i < p.nsections && rc == 0; i++)
        if (!add_section (cfg, p.sections[i]))
            rc = errprintf (err, "%s: out of memory", name);
    for (size_t i = 0; i < p.count && rc == 0; i++) {
        struct section *s = find_section (cfg, p.items[i].section);
        if (put_entry (s, p.items[i].key, p.items[i].value, name, p.items[i].line) < 0)
            rc = errprintf (err, "%s: out of memory", name);
    }
    drop_cached_values (cfg);
    parse_free (&p);
    return rc;
}

int config_set (struct config *cfg, const char *section, const char *key,
                const char *value, const char *origin, berth_error_t *err)
{
    struct section *s = add_section (cfg, section);
    if (!s || put_entry (s, key, value, origin ? origin : "(set)", 0) < 0)
        return errprintf (err, "config: out of memory setting [%s] %s", section, key);
    drop_cached_values (cfg);
    return 0;
}

/* Entry for key as seen from section: the section's own, else [DEFAULT]'s. */
static struct entry *lookup (const struct config *cfg, const char *section,
                             const char *key)
{
    struct section *s = find_section (cfg, section);
    if (!s && strcmp (section, "DEFAULT") != 0)
        return NULL;   /* an absent section has no values, not even defaults */
    struct entry *e = find_entry (s, key);
    return e ? e : find_entry (&cfg->default_section, key);
}

struct chain {
    const char *section;
    const char *key;
    const struct chain *up;
};

static int where (berth_error_t *err, const struct entry *e, const char *section,
                  const char *fmt, const char *a, const char *b)
{
    char msg[512];
    snprintf (msg, sizeof (msg), fmt, a, b);
    if (e->line > 0)
        return errprintf (err, "%s:%d: [%s] %s: %s", e->origin, e->line, section,
                          e->key, msg);
    return errprintf (err, "%s: [%s] %s: %s", e->origin, section, e->key, msg);
}

/* Where the interpolated value of (section, key) is cached: the entry itself
 * when the section has its own, else the section's cache of [DEFAULT] values
 * (a default interpolates in the context of the section it is read from). */
static char **cache_slot (struct config *cfg, const char *section,
                          struct entry *e)
{
    struct section *s = find_section (cfg, section);
    if (find_entry (s, e->key) == e)
        return &e->value;
    for (size_t i = 0; i < s->ndefaults; i++)
        if (!strcmp (s->defaults[i].key, e->key))
            return &s->defaults[i].value;
    struct cached *n = realloc (s->defaults, (s->ndefaults + 1) * sizeof (*n));
    if (!n)
        return NULL;
    s->defaults = n;
    n[s->ndefaults].key = e->key;    /* borrowed from the DEFAULT entry */
    n[s->ndefaults].value = NULL;
    return &n[s->ndefaults++].value;
}

static int resolve (struct config *cfg, const char *section, const char *key,
                    const struct chain *up, int depth, const char **out,
                    berth_error_t *err);

/* Expand "${ref}" seen in entry e of section. */
static int expand_ref (struct config *cfg, const char *section, struct entry *e,
                       const char *ref, const struct chain *here, int depth,
                       const char **out, berth_error_t *err)
{
    char secbuf[256];
    const char *rsec = section, *rkey = ref;
    const char *colon = strchr (ref, ':');
    if (colon) {
        size_t n = (size_t) (colon - ref);
        if (n == 0 || n >= sizeof (secbuf) || strchr (colon + 1, ':'))
            return where (err, e, section, "malformed reference ${%s}%s", ref, "");
        memcpy (secbuf, ref, n);
        secbuf[n] = '\0';
        rsec = secbuf;
        rkey = colon + 1;
    }
    if (*rkey == '\0')
        return where (err, e, section, "malformed reference ${%s}%s", ref, "");
    for (const struct chain *c = here; c; c = c->up) {
        if (!strcmp (c->section, rsec) && !strcasecmp (c->key, rkey))
            return where (err, e, section,
                          "interpolation loop through ${%s}%s", ref, "");
    }
    if (!lookup (cfg, rsec, rkey)) {
        if (!colon)
            return where (err, e, section,
                          "undefined reference ${%s} (no such option in this "
                          "section or [DEFAULT])%s", ref, "");
        return where (err, e, section,
                      "undefined reference ${%s} (no option '%s' in that section)",
                      ref, rkey);
    }
    return resolve (cfg, rsec, rkey, here, depth + 1, out, err);
}

static int resolve (struct config *cfg, const char *section, const char *key,
                    const struct chain *up, int depth, const char **out,
                    berth_error_t *err)
{
    struct entry *e = lookup (cfg, section, key);
    char **slot = cache_slot (cfg, section, e);
    if (!slot)
        return errprintf (err, "config: out of memory");
    if (*slot) {
        *out = *slot;
        return 0;
    }
    if (depth > MAX_DEPTH)
        return where (err, e, section, "interpolation nested deeper than %s%s",
                      "32 levels", "");
    struct chain here = { section, e->key, up };
    char *buf = NULL;
    size_t size = 0;
    FILE *mem = open_memstream (&buf, &size);
    if (!mem)
        return errprintf (err, "config: out of memory");
    const char *p = e->raw;
    int rc = 0;
    while (*p && rc == 0) {
        if (*p != '$') {
            fputc (*p++, mem);
            continue;
        }
        if (p[1] == '$') {
            fputc ('$', mem);
            p += 2;
        }
        else if (p[1] == '{') {
            const char *close = strchr (p + 2, '}');
            char ref[256];
            size_t n = close ? (size_t) (close - (p + 2)) : 0;
            if (!close)
                rc = where (err, e, section, "unterminated reference '%s'%s", p, "");
            else if (n >= sizeof (ref))
                rc = where (err, e, section, "reference too long%s%s", "", "");
            else {
                const char *text;
                memcpy (ref, p + 2, n);
                ref[n] = '\0';
                rc = expand_ref (cfg, section, e, ref, &here, depth, &text, err);
                if (rc == 0)
                    fputs (text, mem);
                p = close + 1;
            }
        }
        else {
            rc = where (err, e, section,
                        "'$' must be followed by '$' or '{' (at '%.20s')%s", p, "");
        }
    }
    fclose (mem);
    if (rc < 0) {
        free (buf);
        return -1;
    }
    /* resolve() of references may have grown the defaults cache: look again */
    slot = cache_slot (cfg, section, e);
    if (!slot) {
        free (buf);
        return errprintf (err, "config: out of memory");
    }
    *slot = buf;
    *out = buf;
    return 0;
}

int config_get (struct config *cfg, const char *section, const char *key,
                const char **value, berth_error_t *err)
{
    *value = NULL;
    if (!lookup (cfg, section, key))
        return 0;
    return resolve (cfg, section, key, NULL, 0, value, err);
}

const char *config_get_raw (const struct config *cfg, const char *section,
                            const char *key)
{
    struct entry *e = lookup (cfg, section, key);
    return e ? e->raw : NULL;
}

bool config_has_section (const struct config *cfg, const char *section)
{
    return find_section (cfg, section) != NULL;
}

size_t config_section_count (const struct config *cfg)
{
    return cfg->count;
}

const char *config_section_name (const struct config *cfg, size_t i)
{
    return i < cfg->count ? cfg->sections[i].name : NULL;
}

size_t config_key_count (const struct config *cfg, const char *section)
{
    struct section *s = find_section (cfg, section);
    return s ? s->count : 0;
}

const char *config_key_name (const struct config *cfg, const char *section,
                             size_t i)
{
    struct section *s = find_section (cfg, section);
    return s && i < s->count ? s->entries[i].key : NULL;
}

int config_origin (const struct config *cfg, const char *section,
                   const char *key, const char **file, int *line)
{
    struct entry *e = lookup (cfg, section, key);
    if (!e)
        return -1;
    if (file)
        *file = e->origin;
    if (line)
        *line = e->line;
    return 0;
}
