/* berth status for people: berthd's status reply (PROTOCOL.md "status") as
 * a header, a table of nodes with a bar each, the leases and the queue.
 * Pure: the status and the time come in, text goes out. */
#ifndef BERTH_STATUS_VIEW_H
#define BERTH_STATUS_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* now: Unix seconds (for ages); unicode: draw bars with block characters,
 * else with '#' and '.'. Members the status lacks are left out. */
void status_view_print (FILE *f, const json_t *status, double now, bool unicode);

#endif
