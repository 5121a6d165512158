/* SPDX-License-Identifier: MIT */
/* Fuzz target: berthd's journal as it reads it after a crash. The input is
 * the file journal.jsonl, read with journal_read (a torn last line is
 * dropped, any other damage refuses the journal); every live grant is put
 * back into a ledger (journal_grant_lease, ledger_restore) as the restart
 * does, its lease object decoded as the restore does (proto_decode_lease),
 * and the next id raised. A journal may be refused; it must never crash,
 * leak, or leave the ledger inconsistent, and a ledger that took it hands
 * out nothing it holds: every later grant fits beside the restored leases
 * and gets an id above the journal's. */
#include <jansson.h>
#include <unistd.h>

#include "codec.h"
#include "fuzz.h"
#include "journal_file.h"
#include "ledger.h"

static char path[64];

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    const char *dir = access ("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf (path, sizeof (path), "%s/fuzz-journal-%d.jsonl", dir, (int) getpid ());
    return 0;
}

static struct ledger *make_ledger (void)
{
    static int ids[128];
    static const char *names[] = { "vm", "nid000002", "nid000003", "nid000004" };
    struct ledger_node_spec spec[4];
    berth_error_t err;
    for (int i = 0; i < 128; i++)
        ids[i] = i;
    for (int i = 0; i < 4; i++)
        spec[i] = (struct ledger_node_spec) { names[i], ids, i == 3 ? 64 : 128,
                                              i == 2 ? 4 : 0, i == 1 ? -1 : 23666 };
    struct ledger *l = ledger_create (spec, 4, 0, &err);
    FUZZ_CHECK (l, "ledger_create: %s", err.text);
    return l;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    FILE *f = fopen (path, "wb");
    FUZZ_CHECK (f, "cannot write %s", path);
    if (size)
        FUZZ_CHECK (fwrite (data, 1, size, f) == size, "write");
    fclose (f);
    struct journal_contents jc;
    berth_error_t err;
    if (journal_read (path, &jc, &err) < 0) {
        FUZZ_CHECK (err.text[0], "a refused journal says why");
        unlink (path);
        return 0;
    }
    FUZZ_CHECK (jc.good >= 0 && (size_t) jc.good <= size, "good %lld of %zu bytes",
                (long long) jc.good, size);
    struct ledger *l = make_ledger ();
    size_t i;
    json_t *rec;
    bool whole = true;
    json_array_foreach (jc.live, i, rec) {
        struct ledger_lease *ll = journal_grant_lease (rec, &err);
        int rc = ll ? ledger_restore (l, ll, &err) : -1;
        if (rc < 0)
            FUZZ_CHECK (err.text[0], "a lease that cannot be restored says why");
        free (ll);
        FUZZ_CHECK (ledger_check_invariants (l, &err) == 0, "ledger invariants after "
                    "restoring record %zu: %s", i, err.text);
        if (rc < 0) {
            whole = false;      /* berthd refuses such a journal */
            break;
        }
        struct proto_lease pl;
        json_t *lj = json_object_get (rec, "lease");
        if (lj && proto_decode_lease (lj, &pl, &err) == 0)
            proto_lease_free (&pl);
    }
    if (whole) {
        ledger_raise_next_id (l, jc.next_id);
        FUZZ_CHECK (ledger_next_id (l) >= jc.next_id, "the next id is raised");
        /* fill what is left: nothing restored is handed out again */
        struct step_shape one = { .ntasks = 1, .cpus_per_task = 1, .cores = 1,
                                  .memory = -1, .budget = -1 };
        uint64_t id;
        for (int k = 0; k < 600; k++) {
            if (ledger_acquire (l, &one, LEDGER_CPU_BINDING, &id, NULL, 0, &err) != 0)
                break;
            FUZZ_CHECK (id >= jc.next_id, "L%llu is above the journal's ids (%llu)",
                        (unsigned long long) id, (unsigned long long) jc.next_id);
        }
        FUZZ_CHECK (ledger_check_invariants (l, &err) == 0, "ledger invariants after "
                    "filling it: %s", err.text);
    }
    ledger_destroy (l);
    journal_contents_free (&jc);
    unlink (path);
    return 0;
}
