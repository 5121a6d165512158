/* SPDX-License-Identifier: MIT */
/* Reading, appending to and rewriting the journal file (journal_file.h).
 * A crash can cut only the last line short (records are appended whole and
 * a failed append is cut back off), so a torn last line is dropped with a
 * warning; damage anywhere else is not a crash's doing, and guessing past it
 * could hand out a held core twice, so it is refused with the line number
 * and what was wrong. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "idmap.h"
#include "journal_file.h"
#include "journal_reserve.h"

#define DAMAGED "; the journal is damaged before its last line, so what is " \
    "held cannot be told: repair or delete that line, or move the state " \
    "directory aside to start with nothing held"

/* ---- pieces of records ---- */

const char *journal_layout_name (enum ledger_layout l)
{
    return l == LEDGER_SCHEDULER ? "scheduler" : "cpu_binding";
}

int journal_shape_parse (json_t *o, struct step_shape *s)
{
    int mpi, span, local;
    json_int_t mem, budget;
    memset (s, 0, sizeof (*s));
    if (json_unpack (o, "{s:b s:i s:i s:i s:i s:I s:I s:b s:b}", "mpi", &mpi,
                     "ntasks", &s->ntasks, "cpus_per_task", &s->cpus_per_task,
                     "cores", &s->cores, "gpus", &s->gpus, "memory", &mem,
                     "budget", &budget, "may_span", &span, "local",
                     &local) < 0)
        return -1;
    s->mpi = mpi;
    s->may_span = span;
    s->local = local;
    s->memory = mem;
    s->budget = budget;
    return 0;
}

/* Integers of a JSON array into ids (room for all of them); -1 when one is
 * not an integer in 0..INT_MAX. */
static int int_list (json_t *a, int *ids)
{
    size_t i;
    json_t *v;
    json_array_foreach (a, i, v) {
        if (!json_is_integer (v) || json_integer_value (v) < 0
            || json_integer_value (v) > INT_MAX)
            return -1;
        ids[i] = (int) json_integer_value (v);
    }
    return 0;
}

int journal_placed_ids (json_t *rec, struct placement *p, berth_error_t *err)
{
    json_t *placed = json_object_get (rec, "placed"), *cores, *gpus;
    if (!placed)
        return 0;
    if (json_unpack (placed, "{s:o s:o !}", "cores", &cores, "gpu_ids",
                     &gpus) < 0 || !json_is_array (cores)
        || !json_is_array (gpus))
        return errprintf (err, "its \"placed\" needs exactly the lists cores "
                          "and gpu_ids");
    size_t nc = json_array_size (cores), ng = json_array_size (gpus);
    if (p->nnodes != 1 || nc != (size_t) p->nodes[0].ncores
        || ng != (size_t) p->ngpu_ids)
        return errprintf (err, "its \"placed\" names %zu cores and %zu GPUs; "
                          "the lease holds %d and %d on %d node(s)", nc, ng,
                          p->nnodes ? p->nodes[0].ncores : 0, p->ngpu_ids,
                          p->nnodes);
    int c[nc + 1], g[ng + 1];
    if (int_list (cores, c) < 0 || int_list (gpus, g) < 0)
        return errprintf (err, "its \"placed\" has an id that is not an "
                          "integer in 0..%d", INT_MAX);
    memcpy (p->nodes[0].cores, c, nc * sizeof (*c));
    if (ng)
        memcpy (p->gpu_ids, g, ng * sizeof (*g));
    return 1;
}

struct ledger_lease *journal_grant_lease (json_t *rec, berth_error_t *err)
{
    json_int_t id;
    json_t *shape, *lease, *held, *cores;
    const char *layout;
    struct step_shape sh;
    if (json_unpack (rec, "{s:I s:o s:s s:o s:o}", "id", &id, "shape", &shape,
                     "layout", &layout, "lease", &lease, "held", &held) < 0) {
        errprintf (err, "a grant record needs an integer id, a shape, a "
                   "layout, the lease and what it holds (\"held\")");
        return NULL;
    }
    if (id < 1) {
        errprintf (err, "lease id %lld is not positive", (long long) id);
        return NULL;
    }
    if (journal_shape_parse (shape, &sh) < 0) {
        errprintf (err, "the shape of L%lld is unreadable", (long long) id);
        return NULL;
    }
    if (strcmp (layout, "scheduler") != 0 && strcmp (layout, "cpu_binding")) {
        errprintf (err, "L%lld has layout '%s', not scheduler or cpu_binding",
                   (long long) id, layout);
        return NULL;
    }
    if (json_unpack (lease, "{s:{s:o}}", "placement", "cores", &cores) < 0
        || !json_is_array (cores) || !json_is_array (held)
        || json_array_size (held) < 1
        || json_array_size (held) != json_array_size (cores)) {
        errprintf (err, "L%lld: its placement's core lists and its held "
                   "nodes do not match one to one", (long long) id);
        return NULL;
    }
    size_t n = json_array_size (held), ints = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *gpus = json_object_get (json_array_get (held, i), "gpus");
        json_t *c = json_array_get (cores, i);
        if (!json_is_array (gpus) || !json_is_array (c)
            || json_array_size (c) < 1) {
            errprintf (err, "L%lld: node %zu of the lease has no core list or "
                       "no GPU list", (long long) id, i);
            return NULL;
        }
        ints += json_array_size (gpus) + json_array_size (c);
    }
    struct ledger_lease *ls = calloc (1, sizeof (*ls) + n * sizeof (*ls->nodes)
                                         + ints * sizeof (int));
    if (!ls) {
        errprintf (err, "out of memory reading L%lld", (long long) id);
        return NULL;
    }
    ls->id = (uint64_t) id;
    ls->shape = sh;
    ls->layout = strcmp (layout, "scheduler") == 0 ? LEDGER_SCHEDULER
                                                   : LEDGER_CPU_BINDING;
    ls->nodes = (struct ledger_lease_node *) (ls + 1);
    ls->nnodes = (int) n;
    int *p = (int *) (ls->nodes + n);
    for (size_t i = 0; i < n; i++) {
        struct ledger_lease_node *ln = &ls->nodes[i];
        json_t *h = json_array_get (held, i), *gpus, *c = json_array_get (cores, i);
        json_int_t mem;
        if (json_unpack (h, "{s:i s:o s:I}", "node", &ln->node, "gpus", &gpus,
                         "memory", &mem) < 0 || mem < 0) {
            free (ls);
            errprintf (err, "L%lld: held node %zu needs a node index, GPUs "
                       "and MB (at least 0)", (long long) id, i);
            return NULL;
        }
        ln->memory = mem;
        ln->cores = p;
        ln->ncores = (int) json_array_size (c);
        p += ln->ncores;
        ln->gpus = p;
        ln->ngpus = (int) json_array_size (gpus);
        p += ln->ngpus;
        if (int_list (c, ln->cores) < 0 || int_list (gpus, ln->gpus) < 0) {
            free (ls);
            errprintf (err, "L%lld: node %zu lists a core or GPU id that is "
                       "not a non-negative integer", (long long) id, i);
            return NULL;
        }
    }
    return ls;
}

/* ---- reading ---- */

struct live_entry {
    json_t *rec;
    int line;
};

static void free_entry (void *value, void *arg)
{
    (void) arg;
    struct live_entry *e = value;
    json_decref (e->rec);
    free (e);
}

struct collect {
    struct live_entry **v;
    size_t n;
};

static void collect_entry (void *value, void *arg)
{
    struct collect *c = arg;
    c->v[c->n++] = value;
}

static int by_id (const void *a, const void *b)
{
    json_int_t x = json_integer_value (json_object_get (
                       (*(struct live_entry *const *) a)->rec, "id"));
    json_int_t y = json_integer_value (json_object_get (
                       (*(struct live_entry *const *) b)->rec, "id"));
    return x < y ? -1 : x > y;
}

void journal_contents_free (struct journal_contents *jc)
{
    json_decref (jc->start);
    json_decref (jc->live);
    json_decref (jc->waits);
    free (jc->live_lines);
    memset (jc, 0, sizeof (*jc));
}

struct reader {
    struct idmap *live;
    json_int_t last_grant;
    uint64_t next_id;
    struct idmap *waits;      /* wait id -> struct live_entry */
    uint64_t next_wait;
};

/* Entry id taken out of m and freed; false when m does not hold it. */
static bool drop_entry (struct idmap *m, json_int_t id)
{
    struct live_entry *ent = id > 0 ? idmap_remove (m, (uint64_t) id) : NULL;
    if (!ent)
        return false;
    free_entry (ent, NULL);
    return true;
}

/* The wait a record names ("id" of an unwait, "wait" of a grant), ended. */
static int end_wait (struct reader *r, json_int_t id, berth_error_t *why)
{
    if (!drop_entry (r->waits, id))
        return errprintf (why, "it ends wait %lld, which is not waiting at "
                          "that point", (long long) id);
    return 0;
}

/* A record that amends live grant id (verb: what it does to it, for the
 * message) with the members of set (taken; NULL: out of memory). */
static int amend_grant (struct reader *r, json_int_t id, const char *verb,
                        json_t *set, berth_error_t *why)
{
    struct live_entry *ent = id > 0 ? idmap_get (r->live, (uint64_t) id)
                                    : NULL;
    json_t *copy = ent && set ? json_deep_copy (ent->rec) : NULL;
    if (!ent || !copy || json_object_update (copy, set) < 0) {
        json_decref (copy);
        json_decref (set);
        return !ent ? errprintf (why, "it %s L%lld, which is not held at "
                                 "that point", verb, (long long) id)
                    : errprintf (why, "out of memory");
    }
    json_decref (set);
    json_decref (ent->rec);
    ent->rec = copy;
    return 0;
}

/* One whole record, in its place. 0, or -1 with why (no file or line). */
static int take_record (struct reader *r, json_t *rec, int lineno,
                        struct journal_contents *jc, berth_error_t *why)
{
    const char *op = json_string_value (json_object_get (rec, "op"));
    if (lineno == 1) {
        json_t *nodes, *job;
        json_int_t next = 1;
        int local;
        if (!op || strcmp (op, "start") != 0)
            return errprintf (why, "the first record must be the start "
                              "record (op \"start\"), not %s%s%s",
                              op ? "\"" : "", op ? op : "one without an op",
                              op ? "\"" : "");
        if (json_unpack (rec, "{s:o s:i s:o s?I}", "job", &job, "local_node",
                         &local, "nodes", &nodes, "next_id", &next) < 0
            || !(json_is_string (job) || json_is_null (job))
            || !json_is_array (nodes) || json_array_size (nodes) < 1
            || next < 1)
            return errprintf (why, "the start record needs job, local_node, "
                              "a non-empty nodes list and a positive "
                              "next_id");
        jc->start = json_incref (rec);
        r->next_id = (uint64_t) next;
        return 0;
    }
    if (op && strcmp (op, "grant") == 0) {
        berth_error_t e;
        struct ledger_lease *ll = journal_grant_lease (rec, &e);
        if (!ll)
            return errprintf (why, "%s", e.text);
        json_int_t id = (json_int_t) ll->id;
        free (ll);
        if (id <= r->last_grant)
            return errprintf (why, "it grants L%lld after L%lld; lease ids "
                              "only grow", (long long) id,
                              (long long) r->last_grant);
        struct live_entry *ent = malloc (sizeof (*ent));
        if (!ent || idmap_put (r->live, (uint64_t) id, ent) < 0) {
            free (ent);
            return errprintf (why, "out of memory");
        }
        ent->rec = json_incref (rec);
        ent->line = lineno;
        r->last_grant = id;
        json_t *w = json_object_get (rec, "wait");
        if (w && (!json_is_integer (w)
                  || end_wait (r, json_integer_value (w), why) < 0))
            return json_is_integer (w) ? -1
                   : errprintf (why, "the grant of L%lld has a \"wait\" that "
                                "is not an integer", (long long) id);
        return 0;
    }
    if (op && strcmp (op, "wait") == 0) {
        json_int_t id, pid, start, uid;
        double time;
        if (json_unpack (rec, "{s:I s:f s:I s:I s:I}", "id", &id, "time", &time,
                         "peer_pid", &pid, "peer_start", &start, "uid",
                         &uid) < 0 || id < 1 || pid < 0 || pid > INT_MAX
            || start < 0 || uid < 0)
            return errprintf (why, "a wait record needs a positive integer id, "
                              "a time, and peer_pid, peer_start and uid (at "
                              "least 0)");
        json_t *req = json_object_get (rec, "request");
        if (req && !json_is_object (req))
            return errprintf (why, "wait %lld has a \"request\" that is not "
                              "an object (the acquire request as sent)",
                              (long long) id);
        struct live_entry *ent = malloc (sizeof (*ent));
        if (idmap_get (r->waits, (uint64_t) id)) {
            free (ent);
            return errprintf (why, "wait %lld is already waiting",
                              (long long) id);
        }
        if (!ent || idmap_put (r->waits, (uint64_t) id, ent) < 0) {
            free (ent);
            return errprintf (why, "out of memory");
        }
        ent->rec = json_incref (rec);
        ent->line = lineno;
        if ((uint64_t) id >= r->next_wait)
            r->next_wait = (uint64_t) id + 1;
        return 0;
    }
    if (op && strcmp (op, "unwait") == 0) {
        json_int_t id;
        if (json_unpack (rec, "{s:I}", "id", &id) < 0)
            return errprintf (why, "an unwait record needs an integer id");
        return end_wait (r, id, why);
    }
    if (op && strcmp (op, "release") == 0) {
        json_int_t id;
        if (json_unpack (rec, "{s:I}", "id", &id) < 0)
            return errprintf (why, "a release record needs an integer id");
        if (!drop_entry (r->live, id))
            return errprintf (why, "it releases L%lld, which is not held at "
                              "that point", (long long) id);
        return 0;
    }
    if (op && strcmp (op, "reclaim") == 0) {
        /* another process took the lease back after a restart: the holder
         * to watch after the next one */
        json_int_t id, pid, start;
        if (json_unpack (rec, "{s:I s:I s:I}", "id", &id, "peer_pid", &pid,
                         "peer_start", &start) < 0 || pid < 0 || start < 0
            || pid > INT_MAX)
            return errprintf (why, "a reclaim record needs an integer id, "
                              "peer_pid and peer_start (at least 0)");
        return amend_grant (r, id, "reclaims", json_pack ("{s:I s:I}",
                            "peer_pid", pid, "peer_start", start), why);
    }
    if (op && strcmp (op, "placed") == 0) {
        /* the ids a local step reported: they go with its grant record */
        json_int_t id;
        json_t *placed;
        if (json_unpack (rec, "{s:I s:o}", "id", &id, "placed", &placed) < 0)
            return errprintf (why, "a placed record needs an integer id and "
                              "the ids (\"placed\")");
        return amend_grant (r, id, "places", json_pack ("{s:O}", "placed",
                            placed), why);
    }
    return errprintf (why, "unknown record op %s%s%s (a journal holds one "
                      "start record, then grants, reclaims, placed records, "
                      "releases, waits and unwaits)",
                      op ? "\"" : "", op ? op : "(none)", op ? "\"" : "");
}

/* The records of a map, in id order, as an array. */
static json_t *in_id_order (struct idmap *m)
{
    size_t n = idmap_count (m);
    struct collect c = { malloc ((n + 1) * sizeof (*c.v)), 0 };
    json_t *a = json_array ();
    if (!c.v || !a) {
        free (c.v);
        json_decref (a);
        return NULL;
    }
    idmap_each (m, collect_entry, &c);
    qsort (c.v, c.n, sizeof (*c.v), by_id);
    for (size_t i = 0; i < c.n; i++)
        if (json_array_append (a, c.v[i]->rec) < 0) {
            json_decref (a);
            a = NULL;
            break;
        }
    free (c.v);
    return a;
}

/* The live entries, in id order, into jc. */
static int finish (struct reader *r, struct journal_contents *jc,
                   berth_error_t *err)
{
    size_t n = idmap_count (r->live);
    struct collect c = { malloc ((n + 1) * sizeof (*c.v)), 0 };
    jc->live = json_array ();
    jc->live_lines = malloc ((n + 1) * sizeof (int));
    jc->waits = in_id_order (r->waits);
    jc->next_wait = r->next_wait;
    if (!c.v || !jc->live || !jc->live_lines || !jc->waits) {
        free (c.v);
        return errprintf (err, "out of memory reading the journal");
    }
    idmap_each (r->live, collect_entry, &c);
    qsort (c.v, c.n, sizeof (*c.v), by_id);
    for (size_t i = 0; i < c.n; i++) {
        if (json_array_append (jc->live, c.v[i]->rec) < 0) {
            free (c.v);
            return errprintf (err, "out of memory reading the journal");
        }
        jc->live_lines[i] = c.v[i]->line;
    }
    free (c.v);
    uint64_t above = (uint64_t) r->last_grant + 1;
    jc->next_id = r->next_id > above ? r->next_id : above;
    return 0;
}

int journal_read (const char *path, struct journal_contents *jc,
                  berth_error_t *err)
{
    memset (jc, 0, sizeof (*jc));
    jc->next_id = 1;
    jc->next_wait = 1;
    /* O_NONBLOCK: a FIFO put there would hold the start until a writer
     * came; it, and anything else but a file, is refused at once */
    int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st = { 0 };
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        return errprintf (err, "cannot read the journal %s: %s", path,
                          strerror (errno));
    }
    int e = fstat (fd, &st) < 0 ? errno : 0;
    if (e || !S_ISREG (st.st_mode)) {
        close (fd);
        return errprintf (err, "the journal %s is %s, not a regular file; "
                          "move it aside", path, e ? strerror (e)
                          : S_ISFIFO (st.st_mode) ? "a FIFO"
                          : S_ISDIR (st.st_mode) ? "a directory"
                          : "a special file");
    }
    FILE *f = fdopen (fd, "re");
    if (!f) {
        close (fd);
        return errprintf (err, "out of memory reading the journal %s", path);
    }
    struct reader r = { idmap_create (), 0, 1, idmap_create (), 1 };
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    if (!r.live || !r.waits)
        rc = errprintf (err, "out of memory reading the journal %s", path);
    while (rc == 0 && (len = getline (&line, &cap, f)) > 0) {
        lineno++;
        json_error_t je;
        bool whole = line[len - 1] == '\n';
        json_t *rec = whole ? json_loadb (line, (size_t) len - 1,
                                          JSON_REJECT_DUPLICATES, &je)
                            : NULL;
        if (!rec || !json_is_object (rec)) {
            char what[300];
            if (!whole)
                snprintf (what, sizeof (what), "it ends without a newline");
            else if (!rec)
                snprintf (what, sizeof (what), "not valid JSON: %s at "
                          "column %d", je.text, je.column);
            else
                snprintf (what, sizeof (what), "not a JSON object");
            json_decref (rec);
            int next = fgetc (f);
            if (next == EOF) {
                snprintf (jc->warning, sizeof (jc->warning), "journal %s: "
                          "line %d is incomplete or unreadable (%s), the mark "
                          "of a crash while it was written; it is ignored "
                          "and cut off", path, lineno, what);
                break;
            }
            rc = errprintf (err, "journal %s: line %d: %s" DAMAGED, path,
                            lineno, what);
            break;
        }
        berth_error_t why;
        if (take_record (&r, rec, lineno, jc, &why) < 0)
            rc = errprintf (err, "journal %s: line %d: %s" DAMAGED, path,
                            lineno, why.text);
        json_decref (rec);
        if (rc == 0) {
            jc->good += len;
            jc->records++;
        }
    }
    if (rc == 0 && ferror (f))
        rc = errprintf (err, "cannot read the journal %s: %s", path,
                        strerror (errno));
    free (line);
    fclose (f);
    if (rc == 0 && finish (&r, jc, err) < 0)
        rc = errprefix (err, "%s: ", path);
    struct idmap *maps[] = { r.live, r.waits };
    for (int i = 0; i < 2; i++)
        if (maps[i]) {
            idmap_each (maps[i], free_entry, NULL);
            idmap_destroy (maps[i]);
        }
    if (rc < 0)
        journal_contents_free (jc);
    return rc;
}

/* ---- writing ---- */

static int write_all (int fd, const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write (fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        off += (size_t) w;
    }
    return 0;
}

int journal_append_line (int fd, const char *path, off_t *size,
                         const char *line, size_t len, bool *torn,
                         berth_error_t *err)
{
    if (write_all (fd, line, len) < 0) {
        int e = errno;
        /* Whatever part of the line got written must not stay: a later
         * record after it would make a damaged middle line. */
        if (ftruncate (fd, *size) < 0)
            *torn = true;
        return errprintf_code (err, journal_errno_code (e),
                               "cannot write to the journal %s: %s", path,
                               strerror (e));
    }
    *size += (off_t) len;
    return 0;
}

int journal_append (int fd, const char *path, off_t *size, json_t *rec,
                    bool *torn, berth_error_t *err)
{
    char *line = proto_line (rec);
    json_decref (rec);
    if (!line)
        return errprintf (err, "out of memory writing to the journal %s",
                          path);
    int rc = journal_append_line (fd, path, size, line, strlen (line), torn,
                                  err);
    free (line);
    return rc;
}

int journal_rewrite_text (const char *path, const char *text, size_t len,
                          int *fdp, off_t *sizep, berth_error_t *err)
{
    char tmp[PATH_MAX + 8];
    if (snprintf (tmp, sizeof (tmp), "%s.tmp", path) >= (int) sizeof (tmp))
        return errprintf (err, "journal path %s is too long", path);
    int fd = open (tmp, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
                   0600);
    if (fd < 0)
        return errprintf_code (err, journal_errno_code (errno),
                               "cannot create %s: %s", tmp, strerror (errno));
    if (write_all (fd, text, len) < 0) {
        errprintf_code (err, journal_errno_code (errno),
                        "cannot write %s: %s", tmp, strerror (errno));
        goto fail;
    }
    /* Not fsync'd, as appends are not: the journal outlives a crash of
     * berthd, which the rename makes atomic, while a crash of the node ends
     * the job. A flush here stalled every request behind a compaction for
     * milliseconds. */
    if (rename (tmp, path) < 0) {
        errprintf (err, "cannot rename %s to %s: %s", tmp, path,
                   strerror (errno));
        goto fail;
    }
    *fdp = fd;
    *sizep = (off_t) len;
    return 0;
fail:
    close (fd);
    unlink (tmp);
    return -1;
}
