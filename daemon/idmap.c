/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "idmap.h"

struct slot {
    uint64_t id;                  /* 0: empty */
    void *value;
};

struct idmap {
    struct slot *s;
    size_t n, cap;                /* cap: a power of two */
};

/* Fibonacci hashing: one multiply spreads sequential ids over the table
 * (the ledger's acquire + release pair is timed in bench_ledger). */
static size_t hash (uint64_t id, size_t cap)
{
    return (size_t) ((id * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
}

struct idmap *idmap_create (void)
{
    struct idmap *m = calloc (1, sizeof (*m));
    if (m && !(m->s = calloc (m->cap = 64, sizeof (*m->s)))) {
        free (m);
        return NULL;
    }
    return m;
}

void idmap_destroy (struct idmap *m)
{
    if (m) {
        free (m->s);
        free (m);
    }
}

static size_t find (const struct idmap *m, uint64_t id)
{
    for (size_t i = hash (id, m->cap);; i = (i + 1) & (m->cap - 1))
        if (m->s[i].id == id || m->s[i].id == 0)
            return i;
}

static int grow (struct idmap *m)
{
    struct slot *old = m->s;
    size_t oldcap = m->cap;
    if (!(m->s = calloc (oldcap * 2, sizeof (*m->s)))) {
        m->s = old;
        return -1;
    }
    m->cap = oldcap * 2;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].id)
            m->s[find (m, old[i].id)] = old[i];
    free (old);
    return 0;
}

int idmap_put (struct idmap *m, uint64_t id, void *value)
{
    if (id == 0)
        return -1;
    if ((m->n + 1) * 2 > m->cap && grow (m) < 0)
        return -1;
    size_t i = find (m, id);
    if (!m->s[i].id)
        m->n++;
    m->s[i] = (struct slot) { id, value };
    return 0;
}

void *idmap_get (const struct idmap *m, uint64_t id)
{
    if (id == 0)
        return NULL;
    size_t i = find (m, id);
    return m->s[i].id ? m->s[i].value : NULL;
}

void *idmap_remove (struct idmap *m, uint64_t id)
{
    if (id == 0)
        return NULL;
    size_t i = find (m, id);
    if (!m->s[i].id)
        return NULL;
    void *v = m->s[i].value;
    size_t mask = m->cap - 1, hole = i;
    m->s[hole].id = 0;
    m->n--;
    /* Shift later members of the probe run back into the hole when their
     * home is not between the hole and them, so lookups still find them. */
    for (size_t j = (hole + 1) & mask; m->s[j].id; j = (j + 1) & mask) {
        size_t home = hash (m->s[j].id, m->cap);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->s[hole] = m->s[j];
            m->s[j].id = 0;
            hole = j;
        }
    }
    return v;
}

size_t idmap_count (const struct idmap *m)
{
    return m->n;
}

void *idmap_next (const struct idmap *m, size_t *pos)
{
    for (size_t i = *pos; i < m->cap; i++)
        if (m->s[i].id) {
            *pos = i + 1;
            return m->s[i].value;
        }
    *pos = m->cap;
    return NULL;
}

void idmap_each (const struct idmap *m, void (*fn) (void *value, void *arg),
                 void *arg)
{
    size_t pos = 0;
    for (void *v; (v = idmap_next (m, &pos));)
        fn (v, arg);
}
