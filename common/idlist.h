/* Ordered lists of ids as people write them ("4-7,0-3"): the order is kept
 * and repeats are kept, so that validation can name them. */
#ifndef BERTH_IDLIST_H
#define BERTH_IDLIST_H

#include "error.h"

#define IDLIST_MAX_ID (1 << 20)

/* Parse items separated by commas, each N or A-B (A <= B), into a new array
 * in the order written. Empty text gives an empty list. Errors name the item. */
int idlist_parse (const char *text, int **ids, int *count, berth_error_t *err);

#endif
