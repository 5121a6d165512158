/* SPDX-License-Identifier: MIT */
/* The journal as a file: one JSON
 * record per line. Line 1 ("start") describes the ledger's nodes and the next
 * lease id; then "grant" records (the lease, its shape and, per node, what
 * it holds) and "release" records; "reclaim" records (another process took
 * a lease back after a restart); "wait" records (a request that waits in
 * the queue: its arrival and its process) and "unwait" records (it left the
 * queue ungranted; a grant record with "wait" ends one too). A compacted
 * journal is the same format: a start record, the grants still held and
 * the requests still waiting.
 *
 * This file reads a journal back (strictly: a damaged line before the last
 * is refused with its line number and what was wrong, only a torn last line
 * is dropped with a warning), appends records so that the file always ends
 * with whole lines, and rewrites it atomically. No event loop, no daemon
 * state: paths, descriptors and records in; records and errors out. */
#ifndef BERTHD_JOURNAL_FILE_H
#define BERTHD_JOURNAL_FILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "ledger.h"

#define JOURNAL_FORMAT 3

struct journal_contents {
    json_t *start;        /* line 1; NULL when the file is missing or empty */
    json_t *live;         /* grant records never released, in id order */
    int *live_lines;      /* the line number of each */
    uint64_t next_id;     /* above every lease id the journal handed out */
    json_t *waits;        /* wait records still waiting, in id order */
    uint64_t next_wait;   /* above every wait id the journal holds */
    off_t good;           /* bytes of whole records (a torn line follows) */
    int records;          /* whole records read */
    char warning[600];    /* the torn last line that was dropped, or "" */
};

/* Read path. A missing file reads as empty. -1: unreadable, or damaged
 * before its last line; the message names the file, the line and what was
 * wrong. */
int journal_read (const char *path, struct journal_contents *jc,
                  berth_error_t *err);
void journal_contents_free (struct journal_contents *jc);

/* Append rec (stolen) as one line to fd (opened O_APPEND on path), whose
 * length is *size. A failed write is cut back off, so the file never keeps
 * half a record; *torn is set when even that failed. The message names path
 * and the system's reason. */
int journal_append (int fd, const char *path, off_t *size, json_t *rec,
                    bool *torn, berth_error_t *err);
/* The same for a record already written as one line (ending with its
 * newline; borrowed): the grant and release records of the request path,
 * which lease_text.h writes without building JSON values. */
int journal_append_line (int fd, const char *path, off_t *size,
                         const char *line, size_t len, bool *torn,
                         berth_error_t *err);

/* Replace path by len bytes of whole record lines (text; the start record
 * first): written to path.tmp and renamed over path (not flushed to disk:
 * see journal.c). *fd is then open for appending to the new file, *size its
 * length. On failure path is untouched and the temporary file removed. */
int journal_rewrite_text (const char *path, const char *text, size_t len,
                          int *fdp, off_t *sizep, berth_error_t *err);

/* Pieces of a grant record. */
int journal_shape_parse (json_t *o, struct step_shape *s);
const char *journal_layout_name (enum ledger_layout l);
/* The ledger lease a grant record describes, for ledger_restore (one
 * allocation; free it). Its core ids come from lease.placement.cores. */
struct ledger_lease *journal_grant_lease (json_t *rec, berth_error_t *err);
/* The ids a local step reported (a grant record's "placed", op placed) put
 * into p, its lease's placement: 1, or 0 when the record has none (p
 * unchanged), or -1 when they do not fit p (p unchanged). */
int journal_placed_ids (json_t *rec, struct placement *p, berth_error_t *err);

#endif
