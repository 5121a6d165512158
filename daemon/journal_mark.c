/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "journal_mark.h"

#define MARK_SIZE 4096
/* Fixed widths: a mark rewritten in place is never shorter than the last,
 * and a store cut off by a kill leaves a line that does not parse. */
#define MARK_FORMAT "berth journal mark 1 ino %020" PRIu64 " size %020" \
                    PRId64 " next_id %020" PRIu64 " sum %020" PRIu64 "\n"

/* Digits of a store cut off mixed with the last mark's do not add up. */
static uint64_t checksum (uint64_t ino, int64_t size, uint64_t next)
{
    uint64_t h = UINT64_C (1469598103934665603);
    uint64_t v[] = { ino, (uint64_t) size, next };
    for (int i = 0; i < 3; i++)
        h = (h ^ v[i]) * UINT64_C (1099511628211);
    return h;
}

struct journal_mark {
    char *map;
};

int journal_mark_parse (const char *text, size_t len,
                        struct journal_mark_facts *f)
{
    char buf[160];
    if (len >= sizeof (buf))
        len = sizeof (buf) - 1;
    memcpy (buf, text, len);
    buf[len] = '\0';
    uint64_t ino, next, sum;
    int64_t size;
    int end = 0;
    if (sscanf (buf, "berth journal mark 1 ino %20" SCNu64 " size %20" SCNd64
                " next_id %20" SCNu64 " sum %20" SCNu64 "\n%n", &ino, &size,
                &next, &sum, &end) != 4 || end == 0 || buf[end - 1] != '\n'
        || size < 0 || next < 1 || sum != checksum (ino, size, next))
        return -1;
    *f = (struct journal_mark_facts) { ino, size, next };
    return 0;
}

size_t journal_mark_format (const struct journal_mark_facts *f, char *buf,
                            size_t size)
{
    int n = snprintf (buf, size, MARK_FORMAT, f->ino, f->size, f->next_id,
                      checksum (f->ino, f->size, f->next_id));
    return n < 0 ? 0 : (size_t) n < size ? (size_t) n : size - 1;
}

struct journal_mark *journal_mark_open (const char *path,
                                        struct journal_mark_facts *was,
                                        int *found, berth_error_t *err)
{
    *found = 0;
    int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return errprintf (err, "cannot open the journal's mark %s: %s", path,
                          strerror (errno)), NULL;
    struct journal_mark *m = calloc (1, sizeof (*m));
    if (!m || ftruncate (fd, MARK_SIZE) < 0) {
        errprintf (err, "cannot make the journal's mark %s: %s", path,
                   m ? strerror (errno) : "out of memory");
        close (fd);
        free (m);
        return NULL;
    }
    m->map = mmap (NULL, MARK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close (fd);
    if (m->map == MAP_FAILED) {
        errprintf (err, "cannot map the journal's mark %s: %s", path,
                   strerror (errno));
        free (m);
        return NULL;
    }
    *found = journal_mark_parse (m->map, MARK_SIZE, was) == 0;
    return m;
}

void journal_mark_set (struct journal_mark *m,
                       const struct journal_mark_facts *f)
{
    if (m)
        journal_mark_format (f, m->map, MARK_SIZE);
}

void journal_mark_close (struct journal_mark *m)
{
    if (!m)
        return;
    munmap (m->map, MARK_SIZE);
    free (m);
}
