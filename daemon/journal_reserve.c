/* SPDX-License-Identifier: MIT */
/* The compaction's reserve (journal_reserve.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal_reserve.h"

const char *journal_errno_code (int e)
{
    return e == ENOSPC || e == EDQUOT ? JOURNAL_ERR_NO_SPACE : "error";
}

/* Blocks allocated for real: a sparse file would hold nothing back. Where
 * the file system cannot allocate ahead, zeros are written. */
static int allocate (int fd, off_t from, off_t size)
{
    int rc = posix_fallocate (fd, from, size - from);
    if (rc != EOPNOTSUPP && rc != EINVAL)
        return rc;
    static const char zeros[4096];
    for (off_t at = from; at < size;) {
        size_t n = size - at < (off_t) sizeof (zeros)
                   ? (size_t) (size - at) : sizeof (zeros);
        ssize_t w = pwrite (fd, zeros, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        at += w;
    }
    return 0;
}

int journal_reserve_keep (const char *path, off_t size, berth_error_t *err)
{
    int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return errprintf_code (err, journal_errno_code (errno),
                               "cannot create %s: %s", path, strerror (errno));
    struct stat st;
    if (fstat (fd, &st) < 0) {
        int e = errno;
        close (fd);
        return errprintf (err, "cannot read %s: %s", path, strerror (e));
    }
    /* what the blocks hold, not the length, is what counts */
    off_t held = (off_t) st.st_blocks * 512;
    if (held >= size) {
        close (fd);
        return 0;
    }
    /* a part allocated before a failure stays: it is room too */
    int rc = allocate (fd, 0, size);
    close (fd);
    if (rc != 0)
        return errprintf_code (err, journal_errno_code (rc),
                               "cannot keep %lld bytes in %s for the "
                               "journal's compaction: %s", (long long) size,
                               path, strerror (rc));
    return 0;
}

void journal_reserve_drop (const char *path)
{
    unlink (path);
}
