/* Slurm host lists: "nid[001-003,010],login[1-2]" <-> names, in-process (no
 * scontrol). Zero padding is kept; a name may hold several brackets
 * ("r[1-2]n[01-02]" is the product, left bracket varying slowest). */
#ifndef BERTH_HOSTLIST_H
#define BERTH_HOSTLIST_H

#include "error.h"

/* Expand text into *count names in order (repeats kept). Malformed text
 * (unbalanced or nested brackets, empty items, reversed ranges, non-digits in
 * a range, more than HOSTLIST_MAX names) is an error naming the problem.
 * Caller frees with hostlist_free. */
#define HOSTLIST_MAX 1000000
int hostlist_expand (const char *text, char ***names, int *count,
                     berth_error_t *err);
void hostlist_free (char **names, int count);

/* The reverse: names grouped by the text around their last digit run (and its
 * padding), groups in order of first appearance, numbers sorted with repeats
 * dropped and runs collapsed: {nid002,nid001,nid003,login1} ->
 * "nid[001-003],login1". Caller frees *text. */
int hostlist_compress (const char *const *names, int count, char **text,
                       berth_error_t *err);

#endif
