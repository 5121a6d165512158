/* A map from 64-bit ids (lease ids) to pointers: open addressing with linear
 * probing, so lookups stay O(1) however many leases a long job hands out. */
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

/* Visit every value (any order). The callback must not change the map. */
void idmap_each (const struct idmap *m, void (*fn) (void *value, void *arg),
                 void *arg);

#endif
