/* SPDX-License-Identifier: MIT */
/* Sets of small non-negative integer ids (core ids, GPU indices) written as
 * ranges: "0-3,8,10-11". */
#ifndef BERTH_IDSET_H
#define BERTH_IDSET_H

#include <stddef.h>

#include "error.h"

/* Parse "0-3,8,10-11" (spaces around items allowed, empty string = empty set)
 * into a newly allocated array sorted ascending without repeats. Rejects
 * negative numbers, reversed ranges, garbage, and ids above 1<<20, naming the
 * offending item. */
int idset_parse (const char *text, int **ids, int *count, berth_error_t *err);

/* The same grammar, but the ids stay in the order written and repeats are
 * kept ("4-7,0-3"), so that a placement's core order is honoured and its
 * repeats can be named by validation. */
int idlist_parse (const char *text, int **ids, int *count, berth_error_t *err);

/* Format ids (any order, repeats ignored) sorted with runs collapsed:
 * {6,2,3,4} -> "2-4,6". Returns the length that the full text needs (like
 * snprintf); the output is truncated to fit buf. */
int idset_format (const int *ids, int count, char *buf, size_t size);

/* Lower-case hex mask of ids, "0x3" for {0,1}; "0x0" for none. Same return
 * convention as idset_format. */
int idset_hexmask (const int *ids, int count, char *buf, size_t size);

#endif
