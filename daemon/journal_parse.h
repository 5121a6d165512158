/* The pure half of reading berthd's journal (journal.c does the files):
 * one line to its record, a grant record to its step shape, and a grant
 * replayed onto a ledger under its own id. No I/O, so that the fuzzer and
 * the unit tests can feed it any bytes. */
#ifndef BERTHD_JOURNAL_PARSE_H
#define BERTHD_JOURNAL_PARSE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ledger.h"

/* Ids a replay may skip over for one grant: grants placed but refused
 * before they were journaled used them up. */
#define JOURNAL_MAX_ID_GAP 100000000ULL

/* One line of the journal (len bytes, its newline included) as a record: a
 * JSON object. NULL when the line is not one: cut short by a crash (no
 * newline) or not a JSON object. */
json_t *journal_parse_line (const char *line, size_t len);

/* The "shape" member of a grant record. -1 when it is unreadable. */
int journal_parse_shape (json_t *o, struct step_shape *s);

/* Grant again on l what the grant record rec granted, under its id: the
 * ledger is deterministic, so the same shape on the same state lands on the
 * same cores; ids of grants never journaled (at most max_gap) are skipped by
 * acquiring and releasing. On error the ledger is as it was. */
int journal_replay_grant (struct ledger *l, json_t *rec, uint64_t max_gap,
                          berth_error_t *err);

#endif
