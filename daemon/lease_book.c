/* SPDX-License-Identifier: MIT */
/* The lease book (lease_book.h): the records by id in an idmap, and the
 * holder binding. Each record sits in an entry of the book's own, so that
 * the record carries no trace of who holds it; a holder's entries form a
 * list (newest bound first) hanging off a holding, found by the holder's
 * address in a second idmap. A holding exists while it holds something. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "lease_book.h"

struct holding;

struct entry {
    struct lease *ls;
    struct holding *h;            /* NULL: unbound */
    struct entry *hprev, *hnext;  /* in h's list */
    struct entry *older, *newer;  /* in the book's order of adding */
};

struct holding {
    const void *key;
    struct entry *first;
    size_t n;
};

struct lease_book {
    struct idmap *entries;        /* lease id -> struct entry */
    struct idmap *holdings;       /* holder address -> struct holding */
    struct entry *oldest, *newest;
};

/* ---- records ---- */

struct lease *lease_new (const struct ledger_lease *ll)
{
    struct lease *ls = calloc (1, sizeof (*ls));
    if (!ls)
        return NULL;
    ls->id = ll->id;
    ledger_lease_name (ll->id, ls->name, sizeof (ls->name));
    ls->shape = ll->shape;
    ls->layout = ll->layout;
    ls->local = ll->shape.local;
    ls->expires = -1;
    ls->expires_boot = -1;
    ls->reclaim_by = -1;
    return ls;
}

void lease_free (struct lease *ls)
{
    if (!ls)
        return;
    json_decref (ls->request);
    placement_free (&ls->placement);
    launch_free (&ls->launch);
    env_set_free (ls->env, ls->nenv);
    free (ls->label);
    free (ls);
}

void lease_to_proto (const struct lease *ls, bool with_env,
                     struct proto_lease *out)
{
    proto_lease_init (out);
    out->id = (char *) ls->name;
    out->label = ls->label;
    out->placement = ls->placement;
    out->memory_cap = ls->shape.memory;
    out->budget_mb = ls->shape.budget;
    out->launch = ls->launch;
    if (with_env) {
        out->env = ls->env;
        out->nenv = ls->nenv;
    }
    out->owner_pid = ls->owner_pid > 0 ? ls->owner_pid : ls->peer_pid;
    out->granted = ls->granted;
}

/* ---- the book ---- */

static uint64_t holder_key (const void *holder)
{
    /* an address is never 0, which idmap reserves */
    return (uint64_t) (uintptr_t) holder;
}

struct lease_book *lease_book_create (void)
{
    struct lease_book *b = calloc (1, sizeof (*b));
    if (!b)
        return NULL;
    if (!(b->entries = idmap_create ()) || !(b->holdings = idmap_create ())) {
        lease_book_destroy (b);
        return NULL;
    }
    return b;
}

void lease_book_destroy (struct lease_book *b)
{
    if (!b)
        return;
    size_t pos = 0;
    struct entry *e;
    while (b->entries && (e = idmap_next (b->entries, &pos))) {
        lease_free (e->ls);
        free (e);
    }
    struct holding *h;
    pos = 0;
    while (b->holdings && (h = idmap_next (b->holdings, &pos)))
        free (h);
    idmap_destroy (b->entries);
    idmap_destroy (b->holdings);
    free (b);
}

int lease_book_add (struct lease_book *b, struct lease *ls,
                    berth_error_t *err)
{
    if (ls->id == 0 || idmap_get (b->entries, ls->id))
        return errprintf (err, "%s is in the book already (or has no id)",
                          ls->name);
    struct entry *e = calloc (1, sizeof (*e));
    if (!e || idmap_put (b->entries, ls->id, e) < 0) {
        free (e);
        return errprintf (err, "out of memory recording %s", ls->name);
    }
    e->ls = ls;
    e->older = b->newest;
    if (b->newest)
        b->newest->newer = e;
    else
        b->oldest = e;
    b->newest = e;
    return 0;
}

static void unbind (struct lease_book *b, struct entry *e)
{
    struct holding *h = e->h;
    if (!h)
        return;
    if (e->hprev)
        e->hprev->hnext = e->hnext;
    else
        h->first = e->hnext;
    if (e->hnext)
        e->hnext->hprev = e->hprev;
    e->h = NULL;
    e->hprev = e->hnext = NULL;
    if (--h->n == 0) {
        idmap_remove (b->holdings, holder_key (h->key));
        free (h);
    }
}

struct lease *lease_book_remove (struct lease_book *b, uint64_t id)
{
    struct entry *e = idmap_remove (b->entries, id);
    if (!e)
        return NULL;
    unbind (b, e);
    if (e->older)
        e->older->newer = e->newer;
    else
        b->oldest = e->newer;
    if (e->newer)
        e->newer->older = e->older;
    else
        b->newest = e->older;
    struct lease *ls = e->ls;
    free (e);
    return ls;
}

struct lease *lease_book_find (const struct lease_book *b, uint64_t id)
{
    struct entry *e = idmap_get (b->entries, id);
    return e ? e->ls : NULL;
}

struct lease *lease_book_lookup (const struct lease_book *b, const char *name)
{
    const char *s = name[0] == 'L' ? name + 1 : name;
    char *end;
    errno = 0;
    unsigned long long id = strtoull (s, &end, 10);
    /* strtoull takes a sign and wraps "-1" round: a lease name has none */
    if (!*s || *end || errno || s[0] == '-' || s[0] == '+')
        return NULL;
    return lease_book_find (b, (uint64_t) id);
}

size_t lease_book_count (const struct lease_book *b)
{
    return idmap_count (b->entries);
}

size_t lease_book_oldest (const struct lease_book *b, const struct lease **v,
                          size_t k)
{
    size_t n = 0;
    for (const struct entry *e = b->oldest; e && n < k; e = e->newer)
        v[n++] = e->ls;
    return n;
}

struct lease *lease_book_next (const struct lease_book *b, size_t *pos)
{
    struct entry *e = idmap_next (b->entries, pos);
    return e ? e->ls : NULL;
}

static int by_id (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

uint64_t *lease_book_ids (const struct lease_book *b, size_t *n)
{
    size_t count = idmap_count (b->entries), pos = 0, k = 0;
    uint64_t *ids = malloc ((count + 1) * sizeof (*ids));
    *n = 0;
    if (!ids)
        return NULL;
    for (struct entry *e; k < count && (e = idmap_next (b->entries, &pos));)
        ids[k++] = e->ls->id;
    qsort (ids, k, sizeof (*ids), by_id);
    *n = k;
    return ids;
}

int lease_book_bind (struct lease_book *b, uint64_t id, void *holder,
                     berth_error_t *err)
{
    struct entry *e = idmap_get (b->entries, id);
    if (!e)
        return errprintf (err, "L%llu is not in the book",
                          (unsigned long long) id);
    if (e->h && e->h->key == holder)
        return 0;
    if (!holder) {
        unbind (b, e);
        return 0;
    }
    struct holding *h = idmap_get (b->holdings, holder_key (holder));
    if (!h) {
        /* made before anything is unbound, so that failing changes nothing */
        if (!(h = calloc (1, sizeof (*h)))
            || idmap_put (b->holdings, holder_key (holder), h) < 0) {
            free (h);
            return errprintf (err, "out of memory binding %s",
                              e->ls->name);
        }
        h->key = holder;
    }
    unbind (b, e);
    e->h = h;
    e->hnext = h->first;
    if (h->first)
        h->first->hprev = e;
    h->first = e;
    h->n++;
    return 0;
}

void *lease_book_holder (const struct lease_book *b, uint64_t id)
{
    struct entry *e = idmap_get (b->entries, id);
    return e && e->h ? (void *) e->h->key : NULL;
}

size_t lease_book_held (const struct lease_book *b, const void *holder)
{
    struct holding *h = holder ? idmap_get (b->holdings, holder_key (holder))
                               : NULL;
    return h ? h->n : 0;
}

struct lease *lease_book_take (struct lease_book *b, const void *holder)
{
    struct holding *h = holder ? idmap_get (b->holdings, holder_key (holder))
                               : NULL;
    if (!h)
        return NULL;
    struct entry *e = h->first;
    unbind (b, e);
    return e->ls;
}
