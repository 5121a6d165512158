/* SPDX-License-Identifier: MIT */
/* A map from 64-bit ids (lease ids: the daemon's and the ledger's) to
 * pointers: open addressing with linear probing, so lookups stay O(1) however
 * many leases a long job hands out. */
#ifndef BERTHD_IDMAP_H
#define BERTHD_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap;

struct idmap *idmap_create (void);
void idmap_destroy (struct idmap *m);          /* the values are the caller's */

/* 0 on success, -1 when out of memory (nothing changed). id 0 is reserved. */
int idmap_put (struct idmap *m, uint64_t id, void *value);
void *idmap_get (const struct idmap *m, uint64_t id);
void *idmap_remove (struct idmap *m, uint64_t id);  /* the value, or NULL */
size_t idmap_count (const struct idmap *m);

/* Walk the values (any order): start *pos at 0; each call returns the next
 * value and moves *pos past it, NULL at the end. The map must not change
 * during the walk. */
void *idmap_next (const struct idmap *m, size_t *pos);

/* Visit every value (any order). The callback must not change the map. */
void idmap_each (const struct idmap *m, void (*fn) (void *value, void *arg),
                 void *arg);

#endif
