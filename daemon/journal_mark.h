/* SPDX-License-Identifier: MIT */
/* The journal's mark (journal.jsonl.mark beside it): how long berthd last left
 * the journal, which file that was (its inode) and the next lease id. It is
 * a shared mapping of one page, set after every append by a store to
 * memory (no system call), and survives berthd however it ends (the page is
 * the kernel's). At start it tells a journal cut short (the same file,
 * shorter than berthd left it: a truncation, a copy cut off) from one torn
 * by a crash mid-write (longer than the mark), and keeps lease ids growing
 * past grants whose records were lost. */
#ifndef BERTHD_JOURNAL_MARK_H
#define BERTHD_JOURNAL_MARK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct journal_mark_facts {
    uint64_t ino;                 /* the journal's inode */
    int64_t size;                 /* its length in bytes */
    uint64_t next_id;             /* the next lease id */
};

/* The facts in the bytes of a mark (len of them): 0, or -1 when they hold
 * none readable (empty, torn, another format). */
int journal_mark_parse (const char *text, size_t len,
                        struct journal_mark_facts *f);
/* The bytes of f into buf (size of them at least 40); their length, 0 when
 * buf is too small. */
size_t journal_mark_format (const struct journal_mark_facts *f, char *buf,
                            size_t size);

struct journal_mark;

/* Map the mark at path (made if missing); *was gets what it said, *found 1
 * when it said something readable (0: a new or unreadable mark). */
struct journal_mark *journal_mark_open (const char *path,
                                        struct journal_mark_facts *was,
                                        int *found, berth_error_t *err);
void journal_mark_set (struct journal_mark *m,
                       const struct journal_mark_facts *f);
void journal_mark_close (struct journal_mark *m);

#endif
