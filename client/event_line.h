/* SPDX-License-Identifier: MIT */
/* berth events for people: one of berthd's events (PROTOCOL.md "Events")
 * as one line of text. Pure: the event comes in, a line goes out. */
#ifndef BERTH_EVENT_LINE_H
#define BERTH_EVENT_LINE_H

#include <jansson.h>
#include <stdio.h>

/* "2026-12-01 21:05:03.250 granted  L17 ocean_qu240: 16 cores on nid001234"
 * and so on, local time, ending in a newline; kinds it does not know are
 * printed by name with their members' count. Labels and reasons are
 * berthd's (control characters cannot be in them: PROTOCOL.md). */
void event_line_print (FILE *f, const json_t *event);

#endif
