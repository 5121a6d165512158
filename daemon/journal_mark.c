/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "journal_mark.h"

#define MARK_SIZE 4096
#define MARK_MAGIC "berthjm1"

/* As it lies in the page: set by a store of 40 bytes, no formatting (the
 * mark is set after every append, on the request path). */
struct mark_record {
    char magic[8];
    uint64_t ino;
    int64_t size;
    uint64_t next_id;
    uint64_t sum;
};

/* A store cut off by a kill leaves fields that do not add up. */
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
    struct mark_record r;
    if (len < sizeof (r))
        return -1;
    memcpy (&r, text, sizeof (r));
    if (memcmp (r.magic, MARK_MAGIC, sizeof (r.magic)) != 0 || r.size < 0
        || r.next_id < 1 || r.sum != checksum (r.ino, r.size, r.next_id))
        return -1;
    *f = (struct journal_mark_facts) { r.ino, r.size, r.next_id };
    return 0;
}

size_t journal_mark_format (const struct journal_mark_facts *f, char *buf,
                            size_t size)
{
    struct mark_record r = { .ino = f->ino, .size = f->size,
                             .next_id = f->next_id,
                             .sum = checksum (f->ino, f->size, f->next_id) };
    memcpy (r.magic, MARK_MAGIC, sizeof (r.magic));
    if (size < sizeof (r))
        return 0;
    memcpy (buf, &r, sizeof (r));
    return sizeof (r);
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
