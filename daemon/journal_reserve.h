/* SPDX-License-Identifier: MIT */
/* The room a compaction needs, kept as a file (journal.reserve) beside the
 * journal: a journal that filled its disk could not be rewritten (there is
 * no room for journal.jsonl.tmp), so the blocks are held ahead, given up
 * just before such a rewrite and taken again after it. No daemon state:
 * a path and sizes in, errors out. */
#ifndef BERTHD_JOURNAL_RESERVE_H
#define BERTHD_JOURNAL_RESERVE_H

#include <sys/types.h>

#include "error.h"

/* The least a reserve holds: a compacted journal of a few hundred leases. */
#define JOURNAL_RESERVE_MIN (16 * 1024)

/* The error code of a write that failed for want of space (ENOSPC, EDQUOT):
 * room may come back, unlike for other failures. */
#define JOURNAL_ERR_NO_SPACE "no_space"

/* The error code of a failure with errno e: JOURNAL_ERR_NO_SPACE when the
 * file system (or a quota) is full, else "error". */
const char *journal_errno_code (int e);

/* Hold at least size bytes of disk in path (created, or grown; never
 * shrunk). A failure leaves it as it was and names path and the reason
 * (code JOURNAL_ERR_NO_SPACE when the disk is full). */
int journal_reserve_keep (const char *path, off_t size, berth_error_t *err);
/* Give its blocks back (the file goes). */
void journal_reserve_drop (const char *path);

#endif
