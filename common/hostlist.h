/* SPDX-License-Identifier: MIT */
/* Slurm host lists: "nid[001-003,010],login[1-2]" <-> names, in-process (no
 * scontrol). Zero padding is kept; a name may hold several brackets
 * ("r[1-2]n[01-02]" is the product, left bracket varying slowest). */
#ifndef BERTH_HOSTLIST_H
#define BERTH_HOSTLIST_H

#include <stdbool.h>

#include "error.h"

/* Expand text into *count names in order (repeats kept). Malformed text
 * (unbalanced or nested brackets, empty items, reversed ranges, non-digits in
 * a range, more than HOSTLIST_MAX names or HOSTLIST_MAX_BYTES of name text)
 * is an error naming the problem.
 * Caller frees with hostlist_free. */
#define HOSTLIST_MAX 1000000
#define HOSTLIST_MAX_BYTES (16 << 20) /* a million 15-character names */
int hostlist_expand (const char *text, char ***names, int *count,
                     berth_error_t *err);
void hostlist_free (char **names, int count);

/* The reverse: names grouped by the text around their last digit run (and its
 * padding), groups in order of first appearance, numbers sorted with repeats
 * dropped and runs collapsed: {nid002,nid001,nid003,login1} ->
 * "nid[001-003],login1". Caller frees *text. */
int hostlist_compress (const char *const *names, int count, char **text,
                       berth_error_t *err);

/* True when b is the name after a in a host list range: the same text
 * around the last digit run, as many digits, the number one higher
 * ("nid0009" -> "nid0010"; not "n9" -> "n10", nor numbers too long for a
 * range). A run of such names is the range hostlist_range writes. */
bool hostlist_name_follows (const char *a, const char *b);

/* The range from first to last, names that hostlist_name_follows chained:
 * "nid[00001-09999]", which hostlist_expand reads back in order. NULL when
 * out of memory. */
char *hostlist_range (const char *first, const char *last);

#endif
