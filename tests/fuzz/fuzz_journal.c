/* Fuzz target: berthd's journal as it reads it after a crash. The input is
 * the file journal.jsonl. It is read line by line as journal.c reads it (a
 * last line cut short is dropped, any other bad line stops the replay), the
 * live grants are found, and every record is replayed onto a fresh ledger
 * (journal_replay_grant, ledger_release) with the lease objects decoded as
 * the restore does (proto_decode_lease). A replay may refuse a journal;
 * it must never crash, leak, hang on a huge id, or leave the ledger
 * inconsistent. */
#include <jansson.h>

#include "codec.h"
#include "fuzz.h"
#include "journal_parse.h"
#include "ledger.h"

/* A small gap bound keeps each input fast; the code path is the same. */
#define GAP 64

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    return 0;
}

static struct ledger *make_ledger (void)
{
    static int ids[64];
    static const char *names[] = { "nid001", "nid002", "nid003" };
    struct ledger_node_spec spec[3];
    berth_error_t err;
    for (int i = 0; i < 64; i++)
        ids[i] = i;
    for (int i = 0; i < 3; i++)
        spec[i] = (struct ledger_node_spec) { names[i], ids, 64, i == 2 ? 0 : 4,
                                              i == 1 ? -1 : 64000 };
    struct ledger *l = ledger_create (spec, 3, 0, &err);
    FUZZ_CHECK (l, "ledger_create: %s", err.text);
    return l;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    json_t *recs = json_array (), *live = json_object ();
    const char *p = (const char *) data, *end = p + size;
    FUZZ_CHECK (recs && live, "memory");
    bool bad = false;
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t) (end - p));
        size_t len = nl ? (size_t) (nl - p) + 1 : (size_t) (end - p);
        json_t *r = journal_parse_line (p, len);
        p += len;
        if (!r) {
            bad = p < end;      /* not the last line: the journal is refused */
            break;
        }
        FUZZ_CHECK (json_is_object (r), "a record is an object");
        json_array_append_new (recs, r);
    }
    size_t i;
    json_t *rec;
    json_array_foreach (recs, i, rec) {
        const char *op = json_string_value (json_object_get (rec, "op"));
        char key[32];
        snprintf (key, sizeof (key), "%lld",
                  (long long) json_integer_value (json_object_get (rec, "id")));
        if (op && !strcmp (op, "grant"))
            json_object_set (live, key, rec);
        else if (op && !strcmp (op, "release"))
            json_object_del (live, key);
    }
    if (!bad) {
        struct ledger *l = make_ledger ();
        berth_error_t err;
        json_array_foreach (recs, i, rec) {
            const char *op = json_string_value (json_object_get (rec, "op"));
            json_int_t id = json_integer_value (json_object_get (rec, "id"));
            if (op && !strcmp (op, "grant")) {
                if (journal_replay_grant (l, rec, GAP, &err) < 0) {
                    FUZZ_CHECK (err.text[0], "a refused replay says why");
                    break;
                }
                FUZZ_CHECK (ledger_lease_find (l, (uint64_t) id), "L%lld is held after its replay",
                            (long long) id);
            }
            else if (op && !strcmp (op, "release"))
                ledger_release (l, (uint64_t) id, NULL);
            FUZZ_CHECK (ledger_check_invariants (l, &err) == 0, "ledger invariants: %s",
                        err.text);
        }
        /* the restore reads each live grant's lease object */
        const char *key;
        json_object_foreach (live, key, rec) {
            struct proto_lease pl;
            json_t *lj = json_object_get (rec, "lease");
            if (lj && proto_decode_lease (lj, &pl, &err) == 0)
                proto_lease_free (&pl);
            struct step_shape sh;
            (void) journal_parse_shape (json_object_get (rec, "shape"), &sh);
        }
        ledger_destroy (l);
    }
    json_decref (live);
    json_decref (recs);
    return 0;
}
