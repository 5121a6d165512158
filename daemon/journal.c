/* SPDX-License-Identifier: MIT */
/* The journal: every grant and
 * release as one JSON line in the state directory (journal.jsonl), written
 * before the client hears of it. The file format, reading and the atomic
 * rewrite are journal_file.c's; this file is the journal object
 * (journal.h) that keeps them in step with the ledger and the lease book.
 *
 * After a crash (SIGKILL included) berthd puts back every lease the journal
 * holds, on the very cores, GPUs and memory it was granted, under its id;
 * later grants get higher ids, so nothing held is handed out twice and no
 * id means two leases. The first line records the ledger's nodes as they
 * were built, so a restart rebuilds the same ledger even where the credited
 * memory has moved since. A journal with no live lease is set aside at
 * start; while running, the journal is compacted (rewritten as the start
 * record and the live grants) once it holds --journal-records records and
 * JOURNAL_COMPACT_FACTOR times as many as there are live leases and
 * waiting requests, so it stays bounded however many grants a job makes.
 *
 * A grant that cannot be recorded (after one try at compacting, which can
 * make room under a per-file limit) is not handed out: nothing is handed
 * out unrecorded. Where the disk is full the request keeps its place (the
 * queue holds grants until there is room); otherwise it is refused. A
 * reserve file beside the journal keeps room for one compaction, so that a
 * full disk never stops the rewrite that a lost release needs. A failed
 * append is cut back off, so the journal keeps whole lines. A release that cannot be recorded still ends the lease (the
 * client is done with it); the journal is then rewritten from the live
 * leases before the next grant, so the missing record cannot resurrect a
 * lease over cores granted since. Neither appends nor rewrites are
 * fsync'd: a crash of berthd keeps what the kernel has; a crash of the node
 * ends the job, and its journal with it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <limits.h>

#include "clock.h"
#include "codec.h"
#include "hostlist.h"
#include "idmap.h"
#include "idset.h"
#include "journal.h"
#include "journal_file.h"
#include "journal_mark.h"
#include "journal_record.h"
#include "journal_reserve.h"
#include "log.h"
#include "pidstart.h"
#include "timeval.h"

#define JOURNAL_COMPACT_FACTOR 4

struct journal {
    struct journal_config cfg;    /* cfg.state_dir: not kept (path is) */
    struct event_base *base;
    lease_ended_fn *ended;        /* a restored lease over already */
    void *arg;
    struct ledger *ledger;        /* built here, the caller's */
    struct lease_book *book;      /* from the restore on, the caller's */
    struct lease_watch *watch;
    int fd;                       /* -1: not open */
    char path[PATH_MAX + 32];
    char reserve[PATH_MAX + 32];  /* the compaction's room (journal_reserve.h) */
    bool reserve_short;           /* it could not be kept (logged once) */
    off_t size;                   /* bytes of whole records */
    int records;                  /* records in the file */
    int retry;                    /* no compaction before this many records
                                     (after one failed) */
    bool dirty;                   /* a record could not be written: rewrite
                                     the journal before the next grant */
    unsigned long compactions;
    json_t *start;                /* its first record, for rewrites */
    json_t *live;                 /* grant records to restore at start */
    json_t *wait_recs;            /* and wait records, as places */
    int *lines;                   /* the grants' line numbers */
    double opened;                /* monotonic, for the restore time */
    struct place *places;         /* restored, for the queue to take */
    size_t nplaces;
    /* The requests that wait now under a wait record (wait id -> struct
     * place with their process's identity), for compaction to write again:
     * recorded, taken back from a place, until granted or unwaited. */
    struct idmap *waiting;
    uint64_t next_wait;           /* the next wait record's id */
    struct event *compact_ev;
    char boot_id[40];             /* this boot's ("": unknown) */
    struct journal_mark *mark;    /* how long berthd left it (journal_mark.h) */
    uint64_t ino;                 /* the journal file's inode */
};

/* ---- the object ---- */

struct journal *journal_create (struct event_base *base,
                                const struct journal_config *cfg,
                                lease_ended_fn *ended, void *arg)
{
    struct journal *j = calloc (1, sizeof (*j));
    if (!j || !(j->waiting = idmap_create ())) {
        free (j);
        return NULL;
    }
    j->cfg = *cfg;
    j->cfg.state_dir = NULL;
    snprintf (j->path, sizeof (j->path), "%s/journal.jsonl", cfg->state_dir);
    snprintf (j->reserve, sizeof (j->reserve), "%s/journal.reserve",
              cfg->state_dir);
    j->base = base;
    j->ended = ended;
    j->arg = arg;
    j->fd = -1;
    j->next_wait = 1;
    boot_id_read (j->boot_id, sizeof (j->boot_id));
    return j;
}

void journal_destroy (struct journal *j)
{
    if (!j)
        return;
    journal_forget_restored (j);
    json_decref (j->wait_recs);
    if (j->fd >= 0)
        close (j->fd);
    if (j->compact_ev)
        event_free (j->compact_ev);
    json_decref (j->live);
    free (j->lines);
    json_decref (j->start);
    size_t pos = 0;
    for (struct place *w; (w = idmap_next (j->waiting, &pos));) {
        free (w->request);
        free (w);
    }
    idmap_destroy (j->waiting);
    journal_mark_close (j->mark);
    free (j);
}

void journal_stats (const struct journal *j, struct journal_stats *out)
{
    *out = (struct journal_stats) { j->path, j->size, j->records,
                                    j->compactions, j->dirty };
}

/* ---- records ---- */

static void maybe_compact (struct journal *j)
{
    /* before the restore there is nothing to compact from */
    if (!j->book)
        return;
    /* A compaction rewrites the waiting requests too: counted as live, so
     * that a long queue does not compact at every record. */
    size_t live = lease_book_count (j->book) + idmap_count (j->waiting);
    if (j->compact_ev && j->records >= j->retry
        && j->records > j->cfg.max_records
        && (size_t) j->records > JOURNAL_COMPACT_FACTOR * (live + 1))
        event_active (j->compact_ev, 0, 0);
}

/* The journal's length and the next lease id, as the mark says them. */
static void set_mark (struct journal *j)
{
    struct journal_mark_facts f = { j->ino, (int64_t) j->size,
                                    ledger_next_id (j->ledger) };
    journal_mark_set (j->mark, &f);
}

static void append_done (struct journal *j)
{
    j->records++;
    set_mark (j);
    maybe_compact (j);
}

/* A ttl granted in this boot counts on CLOCK_BOOTTIME, which nobody moves:
 * its wall-clock instant is derived again from it, so that a wall clock set
 * forward (or back) while berthd was down neither ends the lease early nor
 * keeps it late. From another boot only the wall clock is left. */
static int restore_boot_expiry (struct journal *j, json_t *rec,
                                struct lease *ls, berth_error_t *err)
{
    json_t *eb = json_object_get (rec, "expires_boot");
    json_t *bid = json_object_get (rec, "boot_id");
    if ((eb && !json_is_number (eb)) || (bid && !json_is_string (bid))
        || (!eb != !bid))
        return errprintf (err, "the grant record of L%llu has expires_boot and "
                          "boot_id that are not a number and a string, given "
                          "together", (unsigned long long) ls->id);
    if (!eb || !*j->boot_id || strcmp (json_string_value (bid), j->boot_id))
        return 0;
    double left = json_number_value (eb) - now_boot ();
    double expires = now_wall () + left;
    double moved = expires - ls->expires;
    if (moved > 1 || moved < -1)
        log_msg (LOG_NOTICE, "%s: the wall clock moved %+.0f s since its ttl "
                 "was granted; it counts on the boot clock and ends in %.0f s",
                 ls->name, moved, left > 0 ? left : 0);
    ls->expires = expires > 0 ? expires : 0;
    ls->expires_boot = json_number_value (eb);
    return 0;
}

static char *grant_line (struct journal *j, const struct lease *ls,
                         const struct lease_text *lt, uint64_t wait,
                         const char *request, size_t *len)
{
    const struct ledger_lease *ll = ledger_lease_find (j->ledger, ls->id);
    if (!ll)
        return NULL;
    char *own = NULL;
    if (!request && ls->request)
        request = own = json_dumps (ls->request, JSON_COMPACT | JSON_ENCODE_ANY);
    struct grant_record_facts g = {
        .id = ls->id, .shape = &ls->shape,
        .layout = journal_layout_name (ls->layout),
        .detached = ls->detached, .expires = ls->expires,
        .expires_boot = ls->expires_boot, .boot_id = j->boot_id,
        .owner = (int) ls->owner_pid, .peer_pid = (int) ls->peer_pid,
        .peer_start = ls->peer_start, .owner_start = ls->owner_start,
        .uid = (int) ls->uid, .wait = wait,
        .request = request, .held = ll,
        .placed = ls->placed ? &ls->placement : NULL,
    };
    char *line = grant_record_line (lt, &g, len);
    free (own);
    return line;
}

static char *wait_line (const struct place *w, size_t *len)
{
    return wait_record_line (w->wait_id, w->since, (int) w->pid, w->start,
                             (int) w->uid, w->request, len);
}

static int put_wait (FILE *f, const struct place *w)
{
    size_t len = 0;
    char *line = wait_line (w, &len);
    int rc = line && fwrite (line, 1, len, f) == len ? 0 : -1;
    free (line);
    return rc;
}

static int by_id (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

/* The wait ids of the requests waiting now, ascending. NULL when out of
 * memory. */
static uint64_t *wait_ids (const struct journal *j, size_t *n)
{
    size_t pos = 0, k = 0;
    uint64_t *v = malloc ((idmap_count (j->waiting) + 1) * sizeof (*v));
    *n = 0;
    if (!v)
        return NULL;
    for (struct place *w; (w = idmap_next (j->waiting, &pos));)
        v[k++] = w->wait_id;
    qsort (v, k, sizeof (*v), by_id);
    *n = k;
    return v;
}

/* Room for a compaction of the journal as it is, twice over (it grows
 * until the next one); the journal is rewritten when a record could not be
 * written, and a full disk must not stop that. */
void journal_keep_reserve (struct journal *j)
{
    if (j->fd < 0)
        return;
    off_t want = 2 * j->size;
    berth_error_t err;
    if (journal_reserve_keep (j->reserve, want > JOURNAL_RESERVE_MIN ? want
                              : JOURNAL_RESERVE_MIN, &err) == 0) {
        if (j->reserve_short)
            log_msg (LOG_INFO, "the journal's reserve is kept again");
        j->reserve_short = false;
    }
    else if (!j->reserve_short) {
        j->reserve_short = true;
        log_msg (LOG_WARNING, "%s; should the disk fill, the journal may not "
                 "be rewritten until there is room", err.text);
    }
}

/* Rewrite the journal as the start record and the live grants (without
 * skip, a lease being granted that is not to be recorded yet), then the
 * requests that wait (and places not yet taken back). The grants
 * are written as text, as the request path writes them: with jansson a
 * compaction of a few hundred leases held every request up for
 * milliseconds. */
static int compact (struct journal *j, const struct lease *skip,
                    berth_error_t *err)
{
    size_t n = 0, k = 0, len = 0, nw = 0;
    uint64_t *ids = lease_book_ids (j->book, &n);
    uint64_t *waits = wait_ids (j, &nw);
    json_t *start = json_copy (j->start);
    char *text = NULL, *line = NULL;
    FILE *f = open_memstream (&text, &len);
    int rc = -1;
    if (!ids || !waits || !start || !f
        || json_object_set_new (start, "next_id", json_integer (
                                (json_int_t) ledger_next_id (j->ledger))) < 0
        || json_object_set_new (start, "compacted", json_real (now_wall ())) < 0
        || !(line = proto_line (start)) || fputs (line, f) < 0) {
        errprintf (err, "out of memory");
        goto done;
    }
    k++;
    for (size_t i = 0; i < n; i++) {
        const struct lease *ls = lease_book_find (j->book, ids[i]);
        if (!ls || ls == skip)
            continue;
        struct proto_lease pl;
        struct lease_text lt;
        struct placement granted = { 0 };
        size_t glen = 0;
        char *g = NULL;
        lease_to_proto (ls, false, &pl);
        /* the grant's ids are the ledger's; those a step reported go in
         * the record apart (grant_line) */
        const struct ledger_lease *ll = ls->placed
                                        ? ledger_lease_find (j->ledger, ls->id)
                                        : NULL;
        berth_error_t why;
        if (ll && ledger_lease_placement (j->ledger, ll, &granted, &why) == 0)
            pl.placement = granted;
        if ((!ls->placed || granted.nodes)
            && lease_text_build (&pl, &lt) == 0) {
            g = grant_line (j, ls, &lt, 0, NULL, &glen);
            lease_text_free (&lt);
        }
        placement_free (&granted);
        bool written = g && fwrite (g, 1, glen, f) == glen;
        free (g);
        if (!written) {
            errprintf (err, "out of memory recording %s", ls->name);
            goto done;
        }
        k++;
    }
    /* the requests still waiting (restored ones included) */
    for (size_t i = 0; i < nw; i++) {
        if (put_wait (f, idmap_get (j->waiting, waits[i])) < 0) {
            errprintf (err, "out of memory recording a waiting request");
            goto done;
        }
        k++;
    }
    if (fclose (f) != 0) {
        f = NULL;
        errprintf (err, "out of memory");
        goto done;
    }
    f = NULL;
    int fd;
    off_t size;
    int wrote = journal_rewrite_text (j->path, text, len, &fd, &size, err);
    if (wrote < 0 && !strcmp (err->code, JOURNAL_ERR_NO_SPACE)) {
        /* the disk is full: the reserve is what it was kept for */
        journal_reserve_drop (j->reserve);
        wrote = journal_rewrite_text (j->path, text, len, &fd, &size, err);
    }
    if (wrote < 0) {
        journal_keep_reserve (j);
        goto done;
    }
    close (j->fd);
    j->fd = fd;
    j->size = size;
    struct stat st;
    j->ino = fstat (fd, &st) == 0 ? (uint64_t) st.st_ino : 0;
    set_mark (j);
    j->records = (int) k;
    j->retry = 0;
    j->dirty = false;
    j->compactions++;
    journal_keep_reserve (j);
    rc = 0;
done:
    if (f)
        fclose (f);
    free (text);
    free (line);
    json_decref (start);
    free (ids);
    free (waits);
    return rc;
}

static void compact_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    struct journal *j = arg;
    berth_error_t err;
    if (compact (j, NULL, &err) < 0) {
        if (j->dirty)
            log_msg (LOG_WARNING, "rewriting the journal %s: %s; it lacks a "
                     "release, so it is rewritten before the next grant",
                     j->path, err.text);
        else
            log_msg (LOG_WARNING, "compacting the journal %s: %s; it keeps "
                     "growing, and is tried again after %d more records",
                     j->path, err.text, j->cfg.max_records);
        j->retry = j->records + j->cfg.max_records;
    }
}

/* A request that waits from now on under wait record id, for compaction
 * to write again: w->request is taken (freed here on failure); -1 when out
 * of memory. */
static int add_waiting (struct journal *j, const struct place *w)
{
    struct place *copy = malloc (sizeof (*copy));
    if (!copy || idmap_put (j->waiting, w->wait_id, copy) < 0) {
        free (copy);
        free (w->request);
        return -1;
    }
    *copy = *w;
    return 0;
}

static void drop_waiting (struct journal *j, uint64_t id)
{
    struct place *w = idmap_remove (j->waiting, id);
    if (w)
        free (w->request);
    free (w);
}

/* What becomes of a grant that cannot be recorded: berthd hands out
 * nothing unrecorded. */
static const char *unrecorded (const berth_error_t *why)
{
    return !strcmp (why->code, JOURNAL_ERR_NO_SPACE)
           ? "; the request keeps its place until there is room (free space "
             "where the state directory is)"
           : "; the grant is refused, as berthd hands out nothing unrecorded";
}

/* The grant record as a line, written from the lease's text (grant_line,
 * as compact writes it too), without building it as JSON values (that and
 * dumping it were most of what a grant cost). */
int journal_grant (struct journal *j, const struct lease *ls,
                   const struct lease_text *lt, uint64_t wait,
                   const char *request, berth_error_t *err)
{
    berth_error_t why;
    if (j->dirty && compact (j, ls, &why) < 0)
        return errprintf_code (err, why.code, "cannot record the grant of %s: "
                               "the journal %s lacks a release that could "
                               "not be written, and rewriting it failed (%s)%s",
                               ls->name, j->path, why.text, unrecorded (&why));
    size_t len = 0;
    char *line = grant_line (j, ls, lt, wait, request, &len);
    if (!line)
        return errprintf (err, "out of memory journaling %s", ls->name);
    bool torn = false;
    int rc = journal_append_line (j->fd, j->path,
                                  &j->size, line, len, &torn, &why);
    /* Out of room: the journal without its released grants may be much
     * smaller (a per-file limit, a quota); rewrite it and try once more. */
    berth_error_t again;
    if (rc < 0 && !torn && compact (j, ls, &again) == 0)
        rc = journal_append_line (j->fd, j->path,
                                  &j->size, line, len, &torn, &why);
    free (line);
    if (rc < 0) {
        if (torn)
            j->dirty = true;
        return errprintf_code (err, why.code, "cannot record the grant of "
                               "%s: %s%s", ls->name, why.text,
                               unrecorded (&why));
    }
    if (wait)
        drop_waiting (j, wait);       /* ended by the grant record */
    append_done (j);
    return 0;
}

int journal_release (struct journal *j, uint64_t id, const char *time,
                     const char *reason, berth_error_t *err)
{
    if (j->fd < 0)
        return 0;
    bool torn = false;
    size_t len = 0;
    char *line = release_record_line (id, time, reason, &len);
    int rc = line ? journal_append_line (j->fd, j->path,
                                         &j->size, line, len, &torn,
                                         err)
                  : errprintf (err, "out of memory writing to the journal %s",
                               j->path);
    free (line);
    if (rc < 0) {
        /* The lease ends anyway; the journal is rewritten from the live
         * leases soon (if there is room by then) and at the latest before
         * anything else is granted. */
        j->dirty = true;
        if (j->compact_ev)
            event_active (j->compact_ev, 0, 0);
        return errprefix (err, "L%llu ends unrecorded: ",
                          (unsigned long long) id);
    }
    append_done (j);
    return 0;
}

/* Append line (taken; NULL: out of memory), a record that amends a live
 * grant; one that cannot be written leaves the journal to be rewritten (a
 * compaction writes the grant as amended). */
static int append_amendment (struct journal *j, char *line, size_t len,
                             berth_error_t *err)
{
    bool torn = false;
    int rc = line ? journal_append_line (j->fd, j->path, &j->size, line, len,
                                         &torn, err)
                  : errprintf (err, "out of memory");
    free (line);
    if (rc < 0) {
        j->dirty = torn || j->dirty;
        return -1;
    }
    append_done (j);
    return 0;
}

int journal_reclaim (struct journal *j, const struct lease *ls,
                     berth_error_t *err)
{
    if (j->fd < 0)
        return 0;
    json_t *rec = json_pack ("{s:s s:I s:f s:i s:I}", "op", "reclaim", "id",
                             (json_int_t) ls->id, "time", now_wall (),
                             "peer_pid", (int) ls->peer_pid, "peer_start",
                             (json_int_t) ls->peer_start);
    char *line = rec ? proto_line (rec) : NULL;
    json_decref (rec);
    /* on failure the next compaction writes the grant with its new holder */
    if (append_amendment (j, line, line ? strlen (line) : 0, err) < 0)
        return errprefix (err, "the reclaim of %s is unrecorded (a restart "
                          "before the next compaction watches its old "
                          "holder): ", ls->name);
    return 0;
}

int journal_placed (struct journal *j, const struct lease *ls,
                    const struct placement *p, berth_error_t *err)
{
    if (j->fd < 0)
        return 0;
    char time[40];
    size_t len = 0;
    json_real_text (now_wall (), time, sizeof (time));
    char *line = placed_record_line (ls->id, time, p, &len);
    /* on failure the next compaction writes them with the grant */
    if (append_amendment (j, line, len, err) < 0)
        return errprefix (err, "the cores %s reported are unrecorded (after "
                          "a restart before the next compaction it shows "
                          "the grant's): ", ls->name);
    return 0;
}

/* Append a record that only orders the queue (line stolen): one that
 * cannot be written costs a request its place in a restart, nothing held. */
static int append_quiet (struct journal *j, char *line, size_t len,
                         const char *what)
{
    berth_error_t err;
    bool torn = false;
    if (!line) {
        log_msg (LOG_WARNING, "out of memory journaling %s", what);
        return -1;
    }
    int rc = journal_append_line (j->fd, j->path, &j->size, line, len, &torn,
                                  &err);
    free (line);
    if (rc < 0) {
        if (torn)
            j->dirty = true;
        log_msg (LOG_WARNING, "%s is unrecorded: %s", what, err.text);
        return -1;
    }
    append_done (j);
    return 0;
}

uint64_t journal_wait (struct journal *j, double since, pid_t pid,
                       uint64_t start, uid_t uid, const char *request,
                       size_t request_len)
{
    if (j->fd < 0)
        return 0;
    char *text = request ? strndup (request, request_len) : NULL;
    struct place w = { j->next_wait, since, pid, start, uid, text };
    /* kept before it is written, so that a failure leaves nothing behind */
    if ((request && !text) || add_waiting (j, &w) < 0) {
        log_msg (LOG_WARNING, "out of memory journaling a waiting request");
        return 0;
    }
    j->next_wait++;
    size_t len = 0;
    char *line = wait_line (&w, &len);
    if (append_quiet (j, line, len, "a waiting request") < 0) {
        drop_waiting (j, w.wait_id);
        return 0;
    }
    return w.wait_id;
}

static void unwait_id (struct journal *j, uint64_t id)
{
    if (j->fd < 0)
        return;
    json_t *rec = json_pack ("{s:s s:I s:f}", "op", "unwait", "id",
                             (json_int_t) id, "time", now_wall ());
    char *line = rec ? proto_line (rec) : NULL;
    json_decref (rec);
    append_quiet (j, line, line ? strlen (line) : 0, "the end of a wait");
}

void journal_unwait (struct journal *j, uint64_t wait_id)
{
    if (!wait_id)
        return;
    drop_waiting (j, wait_id);
    unwait_id (j, wait_id);
}

/* The journal's waiting requests, for the queue to put back in their
 * places: those whose process is gone, or that were journaled without
 * their request (by an older berthd), end now. Each one kept waits again
 * under its wait id from now on. */
static int restore_places (struct journal *j, berth_error_t *err)
{
    size_t i, n = j->wait_recs ? json_array_size (j->wait_recs) : 0, bare = 0;
    json_t *rec;
    if (n == 0)
        return 0;
    if (!(j->places = calloc (n, sizeof (*j->places))))
        return errprintf (err, "out of memory");
    json_array_foreach (j->wait_recs, i, rec) {
        json_int_t id, pid, start, uid;
        double since;
        json_t *req = NULL;
        json_unpack (rec, "{s:I s:f s:I s:I s:I s?o}", "id", &id, "time",
                     &since, "peer_pid", &pid, "peer_start", &start, "uid",
                     &uid, "request", &req);
        uint64_t now_start;
        bool gone = pid <= 0 || (kill ((pid_t) pid, 0) < 0 && errno == ESRCH)
                    || (start && pidstart_read ((pid_t) pid, &now_start) == 0
                        && now_start != (uint64_t) start);
        if (gone || !req) {
            bare += !gone;
            unwait_id (j, (uint64_t) id);
            continue;
        }
        struct place pl = { (uint64_t) id, since, (pid_t) pid,
                            (uint64_t) start, (uid_t) uid,
                            json_dumps (req, JSON_COMPACT) };
        char *kept = pl.request ? strdup (pl.request) : NULL;
        struct place waiting = pl;
        waiting.request = kept;
        if (!kept || add_waiting (j, &waiting) < 0) {
            free (pl.request);
            return errprintf (err, "out of memory");
        }
        j->places[j->nplaces++] = pl;
    }
    if (bare)
        log_msg (LOG_WARNING, "%zu requests waited when berthd went away, "
                 "journaled without their requests (by an older berthd): "
                 "they lose their places, and wait again from when their "
                 "processes send them again", bare);
    return 0;
}

const struct place *journal_restored_places (const struct journal *j,
                                             size_t *n)
{
    *n = j->nplaces;
    return j->places;
}

void journal_forget_restored (struct journal *j)
{
    for (size_t i = 0; i < j->nplaces; i++)
        free (j->places[i].request);
    free (j->places);
    j->places = NULL;
    j->nplaces = 0;
}

/* ---- the ledger's nodes ---- */

struct specs {
    struct ledger_node_spec *v;
    int n, local;
    int **cores;          /* core id arrays owned here (one per group) */
    int ncores_arrays;
};

static void specs_free (struct specs *s)
{
    for (int i = 0; s->cores && i < s->ncores_arrays; i++)
        free (s->cores[i]);
    free (s->cores);
    free (s->v);
    memset (s, 0, sizeof (*s));
}

static int specs_from_alloc (const struct allocation *a, struct specs *s,
                             berth_error_t *err)
{
    s->n = a->nnodes;
    s->local = a->local_node;
    s->v = calloc ((size_t) a->nnodes, sizeof (*s->v));
    if (!s->v)
        return errprintf (err, "out of memory");
    for (int i = 0; i < a->nnodes; i++) {
        const struct allocation_node *an = &a->nodes[i];
        s->v[i] = (struct ledger_node_spec) {
            an->name, an->core_ids, an->ncores, an->gpus,
            an->memory_credited_mb };
        /* Alike nodes share one core list: the ledger then compares
         * pointers, not 10,000 lists, twice. */
        if (i > 0 && s->v[i - 1].ncores == an->ncores
            && !memcmp (s->v[i - 1].cores, an->core_ids,
                        an->ncores * sizeof (int)))
            s->v[i].cores = s->v[i - 1].cores;
    }
    return 0;
}

/* The start record keeps the ledger's nodes as groups: a run of nodes in
 * ledger order with the same cores, GPUs and memory whose names count up
 * one by one (hostlist_name_follows; written as "nid[00001-09999]"), so that
 * 10,000 alike nodes cost one short line, not 10,000 objects, at every
 * start and compaction. */
static bool same_shape (const struct ledger_node_spec *a,
                        const struct ledger_node_spec *b)
{
    return a->ncores == b->ncores && a->gpus == b->gpus
           && a->memory == b->memory
           && (a->cores == b->cores
               || !memcmp (a->cores, b->cores, a->ncores * sizeof (int)));
}

static json_t *node_group (const struct specs *s, int first, int count)
{
    const struct ledger_node_spec *v = &s->v[first];
    size_t cap = (size_t) v->ncores * 9 + 1;
    char *ids = malloc (cap);
    const char *last = s->v[first + count - 1].name;
    char *names = count == 1 ? strdup (v->name) : hostlist_range (v->name, last);
    json_t *g = NULL;
    if (ids && names && idset_format (v->cores, v->ncores, ids, cap) >= 0)
        g = json_pack ("{s:s s:i s:s s:i s:I}", "names", names, "count",
                       count, "cores", ids, "gpus", v->gpus, "memory",
                       (json_int_t) v->memory);
    free (ids);
    free (names);
    return g;
}

static json_t *node_groups (const struct specs *s)
{
    json_t *groups = json_array ();
    for (int i = 0; groups && i < s->n;) {
        int k = 1;
        while (i + k < s->n && same_shape (&s->v[i], &s->v[i + k])
               && hostlist_name_follows (s->v[i + k - 1].name,
                                         s->v[i + k].name))
            k++;
        if (json_array_append_new (groups, node_group (s, i, k)) < 0) {
            json_decref (groups);
            return NULL;
        }
        i += k;
    }
    return groups;
}

/* One group of the start record (or, from a format 2 journal, one node)
 * onto the allocation's nodes from *at on. */
static int take_group (json_t *g, const struct allocation *a, struct specs *s,
                       int *at, berth_error_t *err)
{
    const char *names, *cores;
    int gpus, count = 1, ncores;
    json_int_t mem;
    berth_error_t e;
    if (json_unpack (g, "{s:s s?i s:s s:i s:I}", "names", &names, "count",
                     &count, "cores", &cores, "gpus", &gpus, "memory",
                     &mem) < 0
        && json_unpack (g, "{s:s s:s s:i s:I}", "name", &names, "cores",
                        &cores, "gpus", &gpus, "memory", &mem) < 0)
        return errprintf (err, "its node group %d is unreadable", *at);
    if (count < 1 || count > a->nnodes - *at)
        return errprintf (err, "it records more nodes than the allocation's "
                          "%d", a->nnodes);
    char **list = NULL;
    int nlist = 0;
    if (count > 1) {
        if (hostlist_expand (names, &list, &nlist, &e) < 0)
            return errprintf (err, "its node group %s: %s", names, e.text);
    }
    int rc = -1;
    if (count > 1 && nlist != count)
        errprintf (err, "its node group %s names %d nodes, not %d", names,
                   nlist, count);
    else if (idset_parse (cores, &s->cores[s->ncores_arrays], &ncores, &e) < 0)
        errprintf (err, "node group %s: %s", names, e.text);
    else {
        int *ids = s->cores[s->ncores_arrays++];
        rc = 0;
        for (int i = 0; i < count; i++) {
            const char *name = count > 1 ? list[i] : names;
            if (strcmp (name, a->nodes[*at].name) != 0) {
                rc = errprintf (err, "its node %d is %s; the allocation's is "
                                "%s", *at, name, a->nodes[*at].name);
                break;
            }
            s->v[*at] = (struct ledger_node_spec) {
                a->nodes[*at].name, ids, ncores, gpus, mem };
            (*at)++;
        }
    }
    hostlist_free (list, nlist);
    return rc;
}

/* The nodes recorded by a journal, when they are the allocation's. */
static int specs_from_start (json_t *start, const struct allocation *a,
                             struct specs *s, berth_error_t *err)
{
    json_t *nodes, *jobj;
    if (json_unpack (start, "{s:o s:i s:o}", "job", &jobj, "local_node",
                     &s->local, "nodes", &nodes) < 0 || !json_is_array (nodes))
        return errprintf (err, "its first line does not describe the ledger");
    const char *job = json_string_value (jobj);
    if ((job == NULL) != (a->job_id == NULL)
        || (job && strcmp (job, a->job_id) != 0))
        return errprintf (err, "it belongs to job %s, not to %s",
                          job ? job : "(none)", a->job_id ? a->job_id : "(none)");
    size_t ngroups = json_array_size (nodes);
    s->n = a->nnodes;
    s->v = calloc ((size_t) s->n, sizeof (*s->v));
    s->cores = calloc (ngroups ? ngroups : 1, sizeof (*s->cores));
    if (!s->v || !s->cores)
        return errprintf (err, "out of memory");
    int at = 0;
    for (size_t i = 0; i < ngroups; i++)
        if (at >= a->nnodes
            || take_group (json_array_get (nodes, i), a, s, &at, err) < 0) {
            if (at >= a->nnodes)
                errprintf (err, "it records more nodes than the "
                           "allocation's %d", a->nnodes);
            return -1;
        }
    if (at != a->nnodes)
        return errprintf (err, "it records %d nodes; the allocation has %d",
                          at, a->nnodes);
    return 0;
}

static json_t *start_record (const struct specs *s, const char *job,
                             uint64_t next_id)
{
    json_t *nodes = node_groups (s);
    return nodes ? json_pack ("{s:s s:i s:f s:i s:s? s:i s:I s:o}", "op",
                              "start", "format", JOURNAL_FORMAT,
                              "time", now_wall (), "pid", (int) getpid (),
                              "job", job, "local_node", s->local,
                              "next_id", (json_int_t) next_id, "nodes", nodes)
                 : NULL;
}

/* ---- start-up ---- */

static bool same_placement (const struct placement *a,
                            const struct placement *b)
{
    if (a->nnodes != b->nnodes || a->gpus != b->gpus
        || a->ngpu_ids != b->ngpu_ids
        || (a->ngpu_ids && memcmp (a->gpu_ids, b->gpu_ids,
                                   a->ngpu_ids * sizeof (int))))
        return false;
    for (int i = 0; i < a->nnodes; i++)
        if (strcmp (a->nodes[i].name, b->nodes[i].name) != 0
            || a->nodes[i].ncores != b->nodes[i].ncores
            || memcmp (a->nodes[i].cores, b->nodes[i].cores,
                       a->nodes[i].ncores * sizeof (int)))
            return false;
    return true;
}

/* Put the journal's live leases back into the ledger, as they were held. */
static int restore_ledger (struct journal *j, const struct journal_contents *jc,
                           berth_error_t *err)
{
    size_t i;
    json_t *rec;
    json_array_foreach (jc->live, i, rec) {
        berth_error_t why;
        struct ledger_lease *ll = journal_grant_lease (rec, &why);
        int rc = ll ? ledger_restore (j->ledger, ll, &why) : -1;
        free (ll);
        if (rc < 0)
            return errprintf (err, "journal %s: line %d: the lease cannot be "
                              "restored: %s; move the state directory aside "
                              "to start with nothing held", j->path,
                              jc->live_lines[i], why.text);
    }
    ledger_raise_next_id (j->ledger, jc->next_id);
    return 0;
}

/* Whether the process pid, started at start (0: unknown), still runs. */
static bool holder_runs (pid_t pid, uint64_t start)
{
    uint64_t now = 0;
    if (pid <= 0)
        return false;
    if (pidstart_read (pid, &now) < 0)
        return errno != ENOENT;     /* there, but unreadable: assume it runs */
    return start == 0 || now == start;
}

/* Another allocation's journal with live leases: the holders of them that
 * still run (the connection's process, or a detached lease's owner), as
 * "L1 (pid 123), ..." into buf; their number. */
static int running_holders (const struct journal_contents *jc, char *buf,
                            size_t size)
{
    size_t i, used = 0;
    json_t *rec;
    int n = 0;
    buf[0] = '\0';
    json_array_foreach (jc->live, i, rec) {
        json_int_t id = json_integer_value (json_object_get (rec, "id"));
        json_int_t peer = json_integer_value (json_object_get (rec, "peer_pid"));
        json_int_t start = json_integer_value (json_object_get (rec,
                                                                "peer_start"));
        json_int_t owner = json_integer_value (json_object_get (rec, "owner"));
        json_int_t ostart = json_integer_value (json_object_get (rec,
                                                                 "owner_start"));
        /* a detached lease is held by its owner, if it names one; the
         * process that asked for it may have gone long since */
        bool detached = json_is_true (json_object_get (rec, "detached"));
        pid_t pid = 0;
        if (owner > 0 && owner <= INT_MAX && ostart >= 0
            && holder_runs ((pid_t) owner, (uint64_t) ostart))
            pid = (pid_t) owner;
        else if (!detached && peer > 0 && peer <= INT_MAX && start >= 0
                 && holder_runs ((pid_t) peer, (uint64_t) start))
            pid = (pid_t) peer;
        if (!pid)
            continue;
        if (n++ < 8 && used < size) {
            int w = snprintf (buf + used, size - used, "%sL%lld (pid %d)",
                              used ? ", " : "", (long long) id, (int) pid);
            used += w > 0 ? (size_t) w : 0;
        }
    }
    if (n > 8 && used < size)
        snprintf (buf + used, size - used, " and %d more", n - 8);
    return n;
}

int journal_open_ledger (struct journal *j, const struct allocation *a,
                         struct ledger **ledger, struct ledger **empty,
                         berth_error_t *err)
{
    char aside[PATH_MAX + 40];
    *ledger = *empty = NULL;
    snprintf (aside, sizeof (aside), "%s.prev", j->path);
    struct journal_contents jc;
    struct specs s = { 0 };
    int rc = -1;
    j->opened = now_mono ();
    char markpath[PATH_MAX + 40];
    struct journal_mark_facts was;
    int marked;
    struct stat jst;
    snprintf (markpath, sizeof (markpath), "%s.mark", j->path);
    /* the journal as it lies, before the read cuts a torn line off */
    bool there = stat (j->path, &jst) == 0 && S_ISREG (jst.st_mode);
    if (journal_read (j->path, &jc, err) < 0)
        return -1;
    if (!(j->mark = journal_mark_open (markpath, &was, &marked, err))) {
        journal_contents_free (&jc);
        return -1;
    }
    /* berthd left this very file longer than it is: something cut it (a
     * crash tears at most the end of what berthd wrote, past the mark) */
    bool cut = marked && there && (uint64_t) jst.st_ino == was.ino
               && (int64_t) jst.st_size < was.size;
    if (cut) {
        /* the grants the mark knows of and the journal does not */
        char lost[96] = "";
        if (was.next_id - 1 > jc.next_id)
            snprintf (lost, sizeof (lost), ", among them the grants of L%llu "
                      "to L%llu", (unsigned long long) jc.next_id,
                      (unsigned long long) was.next_id - 1);
        else if (was.next_id > jc.next_id)
            snprintf (lost, sizeof (lost), ", among them the grant of L%llu",
                      (unsigned long long) jc.next_id);
        log_msg (LOG_WARNING, "the journal %s was cut short: it has %lld of "
                 "the %lld bytes berthd left in it (%d whole records read); "
                 "the records after them are lost%s; lease ids go on from "
                 "L%llu", j->path, (long long) jst.st_size,
                 (long long) was.size, jc.records, lost,
                 (unsigned long long) (was.next_id > jc.next_id ? was.next_id
                                       : jc.next_id));
    }
    else if (jc.warning[0])
        log_msg (LOG_WARNING, "%s", jc.warning);
    /* ids never go back, whatever the journal lost */
    if (marked && was.next_id > jc.next_id)
        jc.next_id = was.next_id;
    size_t live = jc.live ? json_array_size (jc.live) : 0;
    size_t waits = jc.waits ? json_array_size (jc.waits) : 0;
    berth_error_t why;
    bool ours = jc.start && specs_from_start (jc.start, a, &s,
                                              &why) == 0;
    char holders[512];
    int running = jc.start && !ours && live
                  ? running_holders (&jc, holders, sizeof (holders)) : 0;
    if (running && !j->cfg.discard) {
        /* its steps still run on cores this berthd would hand out again */
        errprintf (err, "the journal %s is not this allocation's (%s), and "
                   "%d holder%s of its leases still run%s: %s; berthd does not "
                   "start over them: end them (or start berthd as the "
                   "allocation they belong to), or give --discard-journal to "
                   "set the journal aside anyway", j->path, why.text, running,
                   running == 1 ? "" : "s", running == 1 ? "s" : "", holders);
        specs_free (&s);
        journal_contents_free (&jc);
        return -1;
    }
    if (jc.start && !ours && live + waits > 0)
        log_msg (LOG_WARNING, "the journal %s is not this allocation's (%s): "
                 "setting it aside as %s%s%s", j->path, why.text, aside,
                 running ? " (--discard-journal), though these still run: "
                 : "", running ? holders : "");
    /* Lease ids go on from where the journal left them, set aside or not:
     * a holder of the old journal's that comes back and releases "L1" must
     * not end another step's lease. */
    uint64_t next_id = jc.start || marked ? jc.next_id : 1;
    bool fresh = !jc.start || !ours || live + waits == 0;
    j->next_wait = ours ? jc.next_wait : 1;
    if (fresh) {
        /* Nothing held: a fresh journal with today's figures. */
        specs_free (&s);
        if (rename (j->path, aside) < 0 && errno != ENOENT) {
            errprintf (err, "cannot set the journal %s aside: %s",
                       j->path, strerror (errno));
            goto done;
        }
        if (specs_from_alloc (a, &s, err) < 0)
            goto done;
    }
    if (!(j->ledger = ledger_create (s.v, s.n, s.local, err))
        || !(*empty = ledger_create (s.v, s.n, s.local, err)))
        goto done;
    if (!fresh && restore_ledger (j, &jc, err) < 0)
        goto done;
    ledger_raise_next_id (j->ledger, next_id);
    j->fd = open (j->path, O_RDWR | O_APPEND | O_CREAT
                          | O_CLOEXEC, 0600);
    if (j->fd < 0) {
        errprintf (err, "cannot open the journal %s: %s", j->path,
                   strerror (errno));
        goto done;
    }
    if (!(j->compact_ev = event_new (j->base, -1, 0, compact_cb, j))) {
        errprintf (err, "out of memory");
        goto done;
    }
    if (fresh) {
        bool torn = false;
        j->size = 0;
        j->start = start_record (&s, a->job_id, next_id);
        if (!j->start) {
            errprintf (err, "out of memory");
            goto done;
        }
        if (journal_append (j->fd, j->path, &j->size,
                            json_incref (j->start), &torn, err) < 0)
            goto done;
        j->records = 1;
    }
    else {
        /* A torn last line is cut off, so that records go on after whole
         * lines. */
        if (ftruncate (j->fd, jc.good) < 0) {
            errprintf (err, "cannot cut the incomplete last line off the "
                       "journal %s: %s", j->path, strerror (errno));
            goto done;
        }
        j->size = jc.good;
        j->records = jc.records;
        j->start = json_incref (jc.start);
        j->live = json_incref (jc.live);
        j->wait_recs = json_incref (jc.waits);
        j->lines = jc.live_lines;
        jc.live_lines = NULL;
    }
    struct stat st;
    j->ino = fstat (j->fd, &st) == 0 ? (uint64_t) st.st_ino : 0;
    set_mark (j);
    journal_keep_reserve (j);
    *ledger = j->ledger;
    rc = 0;
done:
    if (rc < 0) {
        /* as it was before: nothing open, nothing built */
        ledger_destroy (j->ledger);
        ledger_destroy (*empty);
        j->ledger = *empty = NULL;
        if (j->fd >= 0)
            close (j->fd);
        j->fd = -1;
        if (j->compact_ev)
            event_free (j->compact_ev);
        j->compact_ev = NULL;
        json_decref (j->start);
        j->start = NULL;
        journal_mark_close (j->mark);
        j->mark = NULL;
    }
    journal_contents_free (&jc);
    specs_free (&s);
    return rc;
}

/* One grant record back into the book, watched; *endnow: its id when it is
 * over already (*reason says why), else 0. */
static int restore (struct journal *j, json_t *rec, uint64_t *endnow,
                    const char **reason, berth_error_t *err)
{
    json_int_t id = json_integer_value (json_object_get (rec, "id"));
    json_t *lj, *expires;
    int detached, owner, peer, uid;
    json_int_t peer_start = 0;      /* journals of berthd 0.1 have none */
    json_int_t owner_start = 0;     /* nor these, before 0.3 */
    double granted;
    struct proto_lease pl;
    *endnow = 0;
    if (json_unpack (rec, "{s:f s:b s:o s:i s?I s:i s?I s:i s:o}", "time",
                     &granted, "detached", &detached, "expires", &expires,
                     "owner", &owner, "owner_start", &owner_start, "peer_pid",
                     &peer, "peer_start", &peer_start, "uid", &uid, "lease",
                     &lj) < 0
        || peer_start < 0 || owner_start < 0)
        return errprintf (err, "the grant record of L%lld lacks time, "
                          "detached, expires, owner, peer_pid, uid or lease "
                          "(or has a negative peer_start or owner_start)",
                          (long long) id);
    if (proto_decode_lease (lj, &pl, err) < 0)
        return errprefix (err, "the lease of L%lld: ", (long long) id);
    const struct ledger_lease *ll = ledger_lease_find (j->ledger, (uint64_t) id);
    struct lease *ls = ll ? lease_new (ll) : NULL;
    if (!ls) {
        proto_lease_free (&pl);
        return errprintf (err, "L%lld is not in the restored ledger",
                          (long long) id);
    }
    ls->detached = detached;
    ls->owner_pid = owner;
    ls->owner_start = (uint64_t) owner_start;
    ls->peer_pid = peer;
    ls->peer_start = (uint64_t) peer_start;
    json_t *rq = json_object_get (rec, "request");
    if (rq && !json_is_integer (rq) && !json_is_string (rq)) {
        lease_free (ls);
        proto_lease_free (&pl);
        return errprintf (err, "the grant record of L%lld has a request id "
                          "that is neither an integer nor a string",
                          (long long) id);
    }
    ls->request = json_incref (rq);
    ls->uid = (uid_t) uid;
    ls->granted = granted;
    ls->expires = json_is_number (expires) ? json_number_value (expires) : -1;
    if (ls->expires >= 0 && restore_boot_expiry (j, rec, ls, err) < 0) {
        proto_lease_free (&pl);
        return -1;
    }
    ls->label = pl.label;
    ls->launch = pl.launch;
    ls->env = pl.env;
    ls->nenv = pl.nenv;
    pl.label = NULL;
    memset (&pl.launch, 0, sizeof (pl.launch));
    pl.env = NULL;
    pl.nenv = 0;
    int rc = ledger_lease_placement (j->ledger, ll, &ls->placement, err);
    if (rc == 0 && !same_placement (&ls->placement, &pl.placement))
        rc = errprintf (err, "L%lld holds other cores in the ledger than its "
                        "lease names", (long long) id);
    int placed = rc < 0 ? 0 : journal_placed_ids (rec, &ls->placement, err);
    if (placed < 0)
        rc = errprefix (err, "L%lld: ", (long long) id);
    ls->placed = placed == 1;
    proto_lease_free (&pl);
    if (rc < 0 || lease_book_add (j->book, ls, err) < 0) {
        lease_free (ls);
        return -1;
    }
    if (!ls->detached) {
        /* Its connection died with the old daemon, not its holder: the step
         * may still run on its cores. The lease is held for as long as the
         * holder process lives (it reclaims it by id when it reconnects),
         * and ends with it. Only a holder berthd cannot watch gets the
         * grace period to reclaim it in. */
        int w = lease_watch_holder (j->watch, ls->id, ls->peer_pid,
                                    ls->peer_start);
        if (w == 1) {
            *endnow = ls->id;
            *reason = "disconnected";
            return 0;
        }
        if (w < 0)
            return errprintf (err, "out of memory");
        if (w == 2) {
            ls->reclaim_by = now_wall () + j->cfg.reclaim_grace;
            if (lease_watch_grace (j->watch, ls->id, j->cfg.reclaim_grace) < 0)
                return errprintf (err, "out of memory");
            log_msg (LOG_WARNING, "%s: its holder (pid %d) cannot be watched "
                     "from here (another pid namespace, or neither pidfd nor "
                     "/proc): it is freed in %.0f s unless reclaimed",
                     ls->name, (int) ls->peer_pid, j->cfg.reclaim_grace);
        }
        return 0;
    }
    if (ls->expires >= 0 && ls->expires <= now_wall ()) {
        *endnow = ls->id;
        *reason = "expired";
        return 0;
    }
    int w = lease_watch_pid (j->watch, ls->id, ls->owner_pid,
                             ls->owner_start, true);
    if (w == 1) {
        *endnow = ls->id;
        *reason = "owner_exited";
        return 0;
    }
    if (w < 0 || lease_watch_ttl (j->watch, ls->id, ls->expires) < 0)
        return errprintf (err, "out of memory");
    return 0;
}

int journal_restore_leases (struct journal *j, struct lease_book *book,
                            struct lease_watch *watch, berth_error_t *err)
{
    size_t nlive = j->live ? json_array_size (j->live) : 0;
    j->book = book;
    j->watch = watch;
    uint64_t *endnow = calloc (nlive + 1, sizeof (*endnow));
    const char **reasons = calloc (nlive + 1, sizeof (*reasons));
    size_t i, n = 0, orphaned = 0, unwatched = 0;
    json_t *rec;
    int rc = -1;
    if (!endnow || !reasons) {
        errprintf (err, "out of memory");
        goto done;
    }
    json_array_foreach (j->live, i, rec) {
        if (restore (j, rec, &endnow[n], &reasons[n], err) < 0) {
            errprefix (err, "journal %s: line %d: ", j->path,
                       j->lines[i]);
            goto done;
        }
        if (endnow[n])
            n++;
    }
    size_t restored = lease_book_count (book);
    /* each is ended by the caller: released, journaled, told */
    for (i = 0; i < n; i++)
        j->ended (endnow[i], reasons[i], j->arg);
    if (restored) {
        size_t pos = 0;
        for (struct lease *ls; (ls = lease_book_next (book, &pos));) {
            orphaned += !ls->detached;
            unwatched += lease_watch_in_grace (watch, ls->id);
        }
        log_msg (LOG_NOTICE, "restored %zu leases from the journal in %.0f "
                 "ms: %zu ended since (ttl, owner or holder gone); %zu "
                 "connection-bound leases are held while their holders live, "
                 "%zu whose holders cannot be watched wait %.0f s for them "
                 "to reclaim them", restored,
                 (now_mono () - j->opened) * 1000, n,
                 orphaned - unwatched, unwatched, j->cfg.reclaim_grace);
    }
    if (restore_places (j, err) < 0)
        goto done;
    /* A journal read back may be long: compact it now if it is due. */
    maybe_compact (j);
    rc = 0;
done:
    free (endnow);
    free (reasons);
    json_decref (j->live);
    j->live = NULL;
    free (j->lines);
    j->lines = NULL;
    return rc;
}
