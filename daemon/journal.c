/* The journal (50-daemon.md "Durability and faults"): every grant and release
 * as one JSON line, appended before the client hears of it, in the state
 * directory (journal.jsonl). After a crash, berthd rebuilds its ledger by
 * replaying the same calls: the ledger is deterministic, so the same grants
 * land on the same cores, and no placement is ever handed out twice. The
 * first line records the ledger's nodes as they were built, so that a
 * restart replays against the same figures even where the credited memory
 * has moved since. A journal with no live lease left is set aside at start. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "berthd.h"
#include "idset.h"

#define MAX_ID_GAP 100000000ULL    /* ids skipped by grants never journaled */

static void journal_path (const struct berthd *d, char *buf, size_t size,
                          const char *suffix)
{
    snprintf (buf, size, "%s/journal.jsonl%s", d->state_dir, suffix);
}

static int write_text (struct berthd *d, const char *line, size_t len,
                       berth_error_t *err)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write (d->journal_fd, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return errprintf (err, "writing the journal in %s: %s; the "
                              "grant is refused", d->state_dir,
                              strerror (errno));
        off += (size_t) w;
    }
    return 0;
}

static const char *layout_name (enum ledger_layout l)
{
    return l == LEDGER_SCHEDULER ? "scheduler" : "cpu_binding";
}

static int shape_parse (json_t *o, struct step_shape *s)
{
    int mpi, span, local;
    json_int_t mem, budget;
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

/* The record restore and replay read (shape_parse, restore): written
 * directly around the lease text the reply and the event use too. */
int journal_grant (struct berthd *d, const struct lease *ls,
                   const struct lease_text *t, berth_error_t *err)
{
    const struct step_shape *s = &ls->shape;
    char head[1024], expires[40] = "null";
    if (ls->expires >= 0)
        json_real_text (ls->expires, expires, sizeof (expires));
#define B(x) ((x) ? "true" : "false")
    snprintf (head, sizeof (head), "{\"op\":\"grant\",\"id\":%llu,\"time\":%s,"
              "\"shape\":{\"mpi\":%s,\"ntasks\":%d,\"cpus_per_task\":%d,"
              "\"cores\":%d,\"gpus\":%d,\"memory\":%lld,\"budget\":%lld,"
              "\"may_span\":%s,\"local\":%s},\"layout\":\"%s\","
              "\"detached\":%s,\"expires\":%s,\"owner\":%d,\"peer_pid\":%d,"
              "\"uid\":%d,\"lease\":{", (unsigned long long) ls->id, t->time,
              B (s->mpi), s->ntasks, s->cpus_per_task, s->cores, s->gpus,
              (long long) s->memory, (long long) s->budget, B (s->may_span),
              B (s->local), layout_name (ls->layout), B (ls->detached),
              expires, (int) ls->owner_pid, (int) ls->peer_pid,
              (int) ls->uid);
#undef B
    size_t len;
    char *line = lease_text_line (t, head, true, "}}", &len);
    if (!line)
        return errprintf (err, "out of memory journaling %s", ls->name);
    int rc = write_text (d, line, len, err);
    free (line);
    return rc;
}

int journal_release (struct berthd *d, uint64_t id, const char *reason,
                     berth_error_t *err)
{
    if (d->journal_fd < 0)
        return 0;
    char line[256], t[40];
    json_real_text (now_wall (), t, sizeof (t));
    /* reason is one of berthd's own words: nothing to escape */
    int n = snprintf (line, sizeof (line), "{\"op\":\"release\",\"id\":%llu,"
                      "\"time\":%s,\"reason\":\"%s\"}\n",
                      (unsigned long long) id, t, reason);
    if (n < 0 || (size_t) n >= sizeof (line))
        return errprintf (err, "journaling the release of L%llu: reason too "
                          "long", (unsigned long long) id);
    return write_text (d, line, (size_t) n, err);
}

void journal_close (struct berthd *d)
{
    if (d->journal_fd >= 0)
        close (d->journal_fd);
    d->journal_fd = -1;
    json_decref (d->journal_live);
    d->journal_live = NULL;
}

/* ---- the ledger's nodes ---- */

struct specs {
    struct ledger_node_spec *v;
    int n, local;
    int **cores;
};

static void specs_free (struct specs *s)
{
    for (int i = 0; s->cores && i < s->n; i++)
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
    }
    return 0;
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
    if ((int) json_array_size (nodes) != a->nnodes)
        return errprintf (err, "it records %zu nodes; the allocation has %d",
                          json_array_size (nodes), a->nnodes);
    s->n = a->nnodes;
    s->v = calloc ((size_t) s->n, sizeof (*s->v));
    s->cores = calloc ((size_t) s->n, sizeof (*s->cores));
    if (!s->v || !s->cores)
        return errprintf (err, "out of memory");
    for (int i = 0; i < s->n; i++) {
        const char *name, *cores;
        int gpus, ncores;
        json_int_t mem;
        berth_error_t e;
        if (json_unpack (json_array_get (nodes, i), "{s:s s:s s:i s:I}",
                         "name", &name, "cores", &cores, "gpus", &gpus,
                         "memory", &mem) < 0)
            return errprintf (err, "node %d of its first line is unreadable", i);
        if (strcmp (name, a->nodes[i].name) != 0)
            return errprintf (err, "its node %d is %s; the allocation's is %s",
                              i, name, a->nodes[i].name);
        if (idset_parse (cores, &s->cores[i], &ncores, &e) < 0)
            return errprintf (err, "node %s: %s", name, e.text);
        s->v[i] = (struct ledger_node_spec) {
            a->nodes[i].name, s->cores[i], ncores, gpus, mem };
    }
    return 0;
}

/* A string as JSON text onto f: names are plain as a rule, and only the
 * others go through jansson's escaping. */
static int put_json_string (FILE *f, const char *v)
{
    if (!v)
        return fputs ("null", f) < 0 ? -1 : 0;
    if (strspn (v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   "0123456789-_.:+@/") == strlen (v))
        return fprintf (f, "\"%s\"", v) < 0 ? -1 : 0;
    json_t *j = json_string (v);
    char *t = j ? json_dumps (j, JSON_ENCODE_ANY) : NULL;
    json_decref (j);
    int rc = t && fputs (t, f) >= 0 ? 0 : -1;
    free (t);
    return rc;
}

/* The first line: the ledger's nodes as built. Written as text (10,000
 * nodes must not cost a start-up its budget); a node's id set is formatted
 * once for a run of nodes alike. */
static char *start_line (const struct berthd *d, const struct specs *s)
{
    char *buf = NULL, *ids = NULL, t[40];
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);
    if (!f)
        return NULL;
    json_real_text (now_wall (), t, sizeof (t));
    int rc = fprintf (f, "{\"op\":\"start\",\"time\":%s,\"pid\":%d,\"job\":", t,
                      (int) getpid ()) < 0 ? -1 : 0;
    rc |= put_json_string (f, d->alloc->job_id);
    rc |= fprintf (f, ",\"local_node\":%d,\"nodes\":[", s->local) < 0;
    for (int i = 0; rc == 0 && i < s->n; i++) {
        const struct ledger_node_spec *v = &s->v[i];
        bool alike = i > 0 && ids && v->ncores == s->v[i - 1].ncores
                     && !memcmp (v->cores, s->v[i - 1].cores,
                                 (size_t) v->ncores * sizeof (int));
        if (!alike) {
            free (ids);
            ids = malloc ((size_t) v->ncores * 9 + 1);
            if (!ids || idset_format (v->cores, v->ncores, ids,
                                      (size_t) v->ncores * 9 + 1) < 0) {
                rc = -1;
                break;
            }
        }
        rc |= fprintf (f, "%s{\"name\":", i ? "," : "") < 0;
        rc |= put_json_string (f, v->name);
        rc |= fprintf (f, ",\"cores\":\"%s\",\"gpus\":%d,\"memory\":%lld}", ids,
                       v->gpus, (long long) v->memory) < 0;
    }
    rc |= fputs ("]}\n", f) < 0;
    free (ids);
    if (fclose (f) != 0 || rc) {
        free (buf);
        return NULL;
    }
    return buf;
}

/* ---- reading ---- */

/* Records of a journal file, in order. A last line cut short by a crash is
 * dropped (and cut from the file); *good is where the whole lines end. */
static int read_records (const char *path, json_t **out, off_t *good,
                         berth_error_t *err)
{
    FILE *f = fopen (path, "re");
    *out = NULL;
    *good = 0;
    if (!f) {
        if (errno == ENOENT)
            return 0;
        return errprintf (err, "cannot read the journal %s: %s", path,
                          strerror (errno));
    }
    json_t *recs = json_array ();
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    while (recs && (len = getline (&line, &cap, f)) > 0) {
        lineno++;
        json_t *r = line[len - 1] == '\n'
                    ? json_loadb (line, (size_t) len, 0, NULL) : NULL;
        if (!r || !json_is_object (r)) {
            json_decref (r);
            if (fgetc (f) == EOF) {
                log_msg (LOG_WARNING, "journal %s: line %d is incomplete "
                         "(cut short by a crash); ignoring it", path, lineno);
                break;
            }
            rc = errprintf (err, "journal %s: line %d is not a JSON object; "
                            "move the state directory aside to start afresh",
                            path, lineno);
            break;
        }
        json_array_append_new (recs, r);
        *good += len;
    }
    free (line);
    fclose (f);
    if (rc < 0 || !recs) {
        json_decref (recs);
        return rc < 0 ? rc : errprintf (err, "out of memory");
    }
    *out = recs;
    return 0;
}

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

/* Grant again what the journal granted: the same shape on the same ledger
 * state gives the same placement; ids of grants never journaled (refused
 * after placing) are skipped over. */
static int replay_grant (struct berthd *d, json_t *rec, berth_error_t *err)
{
    json_int_t want;
    json_t *shape;
    const char *layout;
    struct step_shape sh;
    if (json_unpack (rec, "{s:I s:o s:s}", "id", &want, "shape", &shape,
                     "layout", &layout) < 0 || shape_parse (shape, &sh) < 0)
        return errprintf (err, "a grant record is unreadable");
    enum ledger_layout lay = strcmp (layout, "scheduler") == 0
                             ? LEDGER_SCHEDULER : LEDGER_CPU_BINDING;
    for (uint64_t tries = 0; tries < MAX_ID_GAP; tries++) {
        uint64_t id;
        char why[256];
        int rc = ledger_acquire (d->ledger, &sh, lay, &id, why, sizeof (why),
                                 err);
        if (rc != 0)
            return errprintf (err, "L%lld does not fit again (%s)",
                              (long long) want, rc < 0 ? err->text : why);
        if (id == (uint64_t) want)
            return 0;
        ledger_release (d->ledger, id, NULL);
        if (id > (uint64_t) want)
            break;
    }
    return errprintf (err, "L%lld cannot be granted again under its id",
                      (long long) want);
}

int journal_open_ledger (struct berthd *d, berth_error_t *err)
{
    char path[PATH_MAX + 32], aside[PATH_MAX + 32];
    journal_path (d, path, sizeof (path), "");
    journal_path (d, aside, sizeof (aside), ".prev");
    json_t *recs = NULL, *live = json_object ();
    struct specs s = { 0 };
    off_t good = 0;
    int rc = -1;
    size_t i;
    json_t *rec;
    if (!live || read_records (path, &recs, &good, err) < 0)
        goto done;
    /* Which leases are still live, and is the journal this allocation's? */
    json_array_foreach (recs, i, rec) {
        const char *op = json_string_value (json_object_get (rec, "op"));
        char key[32];
        snprintf (key, sizeof (key), "%lld", (long long) json_integer_value (
                                                 json_object_get (rec, "id")));
        if (op && strcmp (op, "grant") == 0)
            json_object_set (live, key, rec);
        else if (op && strcmp (op, "release") == 0)
            json_object_del (live, key);
    }
    berth_error_t why;
    if (recs && json_object_size (live) > 0
        && specs_from_start (json_array_get (recs, 0), d->alloc, &s, &why) < 0) {
        log_msg (LOG_WARNING, "the journal %s is not this allocation's (%s): "
                 "setting it aside as %s", path, why.text, aside);
        specs_free (&s);
        json_object_clear (live);
    }
    if (recs && json_object_size (live) == 0) {
        /* Nothing held: start a fresh journal with today's figures. */
        if (rename (path, aside) < 0) {
            errprintf (err, "cannot set the journal %s aside: %s", path,
                       strerror (errno));
            goto done;
        }
        json_decref (recs);
        recs = NULL;
    }
    if (!s.v && specs_from_alloc (d->alloc, &s, err) < 0)
        goto done;
    if (!(d->ledger = ledger_create (s.v, s.n, s.local, err))
        || !(d->empty = ledger_create (s.v, s.n, s.local, err)))
        goto done;
    json_array_foreach (recs, i, rec) {
        const char *op = json_string_value (json_object_get (rec, "op"));
        json_int_t id = json_integer_value (json_object_get (rec, "id"));
        if (op && strcmp (op, "grant") == 0) {
            if (replay_grant (d, rec, err) < 0) {
                errprefix (err, "replaying the journal %s: ", path);
                goto done;
            }
        }
        else if (op && strcmp (op, "release") == 0)
            ledger_release (d->ledger, (uint64_t) id, NULL);
    }
    d->journal_fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                          0600);
    if (d->journal_fd < 0) {
        errprintf (err, "cannot open the journal %s: %s", path,
                   strerror (errno));
        goto done;
    }
    if (recs && ftruncate (d->journal_fd, good) < 0) {
        errprintf (err, "cannot cut the incomplete line off the journal %s: "
                   "%s", path, strerror (errno));
        goto done;
    }
    if (!recs) {
        char *line = start_line (d, &s);
        rc = line ? write_text (d, line, strlen (line), err)
                  : errprintf (err, "out of memory writing the journal");
        free (line);
        if (rc < 0)
            goto done;
        rc = -1;
    }
    d->journal_live = live;
    live = NULL;
    rc = 0;
done:
    json_decref (recs);
    json_decref (live);
    specs_free (&s);
    return rc;
}

static void grace_cb (evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    lease_end (NULL, arg, "disconnected");
}

static int restore (struct berthd *d, json_t *rec, struct lease **endnow,
                    const char **reason, berth_error_t *err)
{
    json_int_t id;
    json_t *lj, *expires;
    int detached, owner, peer, uid;
    double granted;
    struct proto_lease pl;
    if (json_unpack (rec, "{s:I s:f s:b s:o s:i s:i s:i s:o}", "id", &id,
                     "time", &granted, "detached", &detached, "expires",
                     &expires, "owner", &owner, "peer_pid", &peer, "uid", &uid,
                     "lease", &lj) < 0
        || proto_decode_lease (lj, &pl, err) < 0)
        return errprintf (err, "grant record of L%lld is unreadable",
                          (long long) id);
    const struct ledger_lease *ll = ledger_lease_find (d->ledger, (uint64_t) id);
    struct lease *ls = calloc (1, sizeof (*ls));
    if (!ll || !ls) {
        free (ls);
        proto_lease_free (&pl);
        return errprintf (err, "L%lld is not in the replayed ledger",
                          (long long) id);
    }
    ls->id = (uint64_t) id;
    ls->pidfd = -1;
    ledger_lease_name (ls->id, ls->name, sizeof (ls->name));
    ls->shape = ll->shape;
    ls->layout = ll->layout;
    ls->local = ll->shape.local;
    ls->detached = detached;
    ls->owner_pid = owner;
    ls->peer_pid = peer;
    ls->uid = (uid_t) uid;
    ls->granted = granted;
    ls->expires = json_is_number (expires) ? json_number_value (expires) : -1;
    ls->label = pl.label;
    ls->launch = pl.launch;
    ls->env = pl.env;
    ls->nenv = pl.nenv;
    pl.label = NULL;
    memset (&pl.launch, 0, sizeof (pl.launch));
    pl.env = NULL;
    pl.nenv = 0;
    int rc = ledger_lease_placement (d->ledger, ll, &ls->placement, err);
    if (rc == 0 && !same_placement (&ls->placement, &pl.placement))
        rc = errprintf (err, "L%lld replays onto other cores than it was "
                        "granted", (long long) id);
    proto_lease_free (&pl);
    if (rc < 0 || idmap_put (d->leases, ls->id, ls) < 0) {
        lease_free (d, ls);
        return rc < 0 ? -1 : errprintf (err, "out of memory");
    }
    *endnow = NULL;
    if (!ls->detached) {
        /* Its connection died with the old daemon; its holder gets a grace
         * period to release it by id before it is freed. */
        struct timeval tv = seconds_tv (d->cfg.reclaim_grace);
        if (!(ls->grace_ev = evtimer_new (d->base, grace_cb, ls))
            || evtimer_add (ls->grace_ev, &tv) < 0)
            return errprintf (err, "out of memory");
        return 0;
    }
    if (ls->expires >= 0 && ls->expires <= now_wall ()) {
        *endnow = ls;
        *reason = "expired";
        return 0;
    }
    int w = lease_watch_owner (d, ls);
    if (w == 1) {
        *endnow = ls;
        *reason = "owner_exited";
        return 0;
    }
    if (w < 0 || lease_arm_ttl (d, ls) < 0)
        return errprintf (err, "out of memory");
    return 0;
}

int journal_restore_leases (struct berthd *d, berth_error_t *err)
{
    const char *key;
    json_t *rec;
    int n = 0, ended = 0;
    struct lease **endnow = calloc (json_object_size (d->journal_live) + 1,
                                    sizeof (*endnow));
    const char **reasons = calloc (json_object_size (d->journal_live) + 1,
                                   sizeof (*reasons));
    if (!endnow || !reasons) {
        free (endnow);
        free (reasons);
        return errprintf (err, "out of memory");
    }
    json_object_foreach (d->journal_live, key, rec) {
        if (restore (d, rec, &endnow[n], &reasons[n], err) < 0) {
            free (endnow);
            free (reasons);
            return errprefix (err, "restoring leases from the journal: ");
        }
        if (endnow[n])
            n++;
    }
    size_t restored = idmap_count (d->leases);
    for (int i = 0; i < n; i++, ended++)
        lease_end (d, endnow[i], reasons[i]);
    if (restored)
        log_msg (LOG_NOTICE, "restored %zu leases from the journal (%d ended "
                 "since: ttl or owner gone)", restored, ended);
    free (endnow);
    free (reasons);
    json_decref (d->journal_live);
    d->journal_live = NULL;
    return 0;
}
