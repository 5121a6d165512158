/* SPDX-License-Identifier: MIT */
/* Fuzz target: from a request line to cores, as berthd does it. The first
 * byte picks an allocation; every following line is
 *   - a request: decoded (proto_decode_request); an acquire is cut to fit
 *     (step_cut_to_fit) and placed (ledger_acquire, layout from the line's
 *     length); a release names the lease to end;
 *   - "-" and a number: release the held lease at that index;
 *   - "*": release every lease.
 * After every step the ledger's own invariants hold, and an independent
 * record of held cores and GPUs (rebuilt from the placements) agrees: no
 * core or GPU is ever granted twice, every one is the node's, a grant fits
 * the empty allocation too, and everything is free again at the end. */
#include <jansson.h>

#include "codec.h"
#include "fuzz.h"
#include "ledger.h"
#include "step.h"

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    return 0;
}

#define MAXN 4
#define MAXID 256

struct alloc {
    int n;
    int cores[MAXN][MAXID];
    int ncores[MAXN];
    int gpus[MAXN];
    int64_t memory[MAXN];
    int local;
};

static void make_alloc (int which, struct alloc *a)
{
    memset (a, 0, sizeof (*a));
    switch (which % 4) {
    case 0:         /* a CPU machine: 4 x 128 cores, memory known */
        a->n = 4;
        for (int i = 0; i < 4; i++) {
            a->ncores[i] = 128;
            for (int j = 0; j < 128; j++)
                a->cores[i][j] = j;
            a->memory[i] = 512000;
        }
        break;
    case 1:         /* a GPU machine: 2 x 64 cores, 4 GPUs */
        a->n = 2;
        for (int i = 0; i < 2; i++) {
            a->ncores[i] = 64;
            for (int j = 0; j < 64; j++)
                a->cores[i][j] = j;
            a->gpus[i] = 4;
            a->memory[i] = 256000;
        }
        break;
    case 2:         /* uneven nodes, holes in the ids, memory unknown */
        a->n = 3;
        for (int j = 0; j < 16; j++)
            a->cores[0][j] = j < 8 ? j : j + 8;
        a->ncores[0] = 16;
        a->gpus[0] = 2;
        for (int j = 0; j < 32; j++)
            a->cores[1][j] = 2 * j + 1;
        a->ncores[1] = 32;
        a->gpus[1] = 64;
        for (int j = 0; j < 130; j++)
            a->cores[2][j] = 129 - j;
        a->ncores[2] = 130;
        for (int i = 0; i < 3; i++)
            a->memory[i] = -1;
        a->local = 2;
        break;
    default:        /* one small node, little memory, daemon elsewhere */
        a->n = 1;
        a->ncores[0] = 4;
        for (int j = 0; j < 4; j++)
            a->cores[0][j] = 3 * j;
        a->gpus[0] = 1;
        a->memory[0] = 1000;
        a->local = -1;
        break;
    }
}

struct held {
    uint64_t id;
};

static const char *names[MAXN] = { "n0", "n1", "n2", "n3" };

/* Independent bookkeeping: cores and GPUs held per node. */
static unsigned char core_used[MAXN][MAXID], gpu_used[MAXN][64];

static int node_index (const char *name)
{
    for (int i = 0; i < MAXN; i++)
        if (!strcmp (names[i], name))
            return i;
    return -1;
}

static bool node_has_core (const struct alloc *a, int node, int id)
{
    for (int j = 0; j < a->ncores[node]; j++)
        if (a->cores[node][j] == id)
            return true;
    return false;
}

static void mark (const struct ledger *l, const struct alloc *a, uint64_t id, bool take)
{
    const struct ledger_lease *ll = ledger_lease_find (l, id);
    FUZZ_CHECK (ll, "L%llu is in the ledger", (unsigned long long) id);
    struct placement p;
    berth_error_t err;
    FUZZ_CHECK (ledger_lease_placement (l, ll, &p, &err) == 0, "placement: %s", err.text);
    FUZZ_CHECK (placement_validate (&p, &err) == 0, "a grant is a valid placement: %s",
                err.text);
    int total = 0;
    for (int i = 0; i < p.nnodes; i++) {
        int n = node_index (p.nodes[i].name);
        FUZZ_CHECK (n >= 0 && n < a->n, "node %s is the allocation's", p.nodes[i].name);
        for (int j = 0; j < p.nodes[i].ncores; j++) {
            int c = p.nodes[i].cores[j];
            FUZZ_CHECK (node_has_core (a, n, c), "core %d is node %s's", c, names[n]);
            FUZZ_CHECK (core_used[n][c] == (take ? 0 : 1), "core %d of %s is %s twice",
                        c, names[n], take ? "granted" : "freed");
            core_used[n][c] = take;
        }
        total += p.nodes[i].ncores;
        for (int j = 0; j < ll->nodes[i].ngpus; j++) {
            int g = ll->nodes[i].gpus[j];
            FUZZ_CHECK (g >= 0 && g < a->gpus[n], "GPU %d is node %s's", g, names[n]);
            FUZZ_CHECK (gpu_used[n][g] == (take ? 0 : 1), "GPU %d of %s is %s twice", g,
                        names[n], take ? "granted" : "freed");
            gpu_used[n][g] = take;
        }
    }
    FUZZ_CHECK (total >= ll->shape.cores, "L%llu holds %d cores for %d",
                (unsigned long long) id, total, ll->shape.cores);
    placement_free (&p);
}

static void check (const struct ledger *l)
{
    berth_error_t err;
    FUZZ_CHECK (ledger_check_invariants (l, &err) == 0, "ledger invariants: %s", err.text);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct alloc a;
    make_alloc (data[0], &a);
    struct ledger_node_spec spec[MAXN];
    for (int i = 0; i < a.n; i++)
        spec[i] = (struct ledger_node_spec) { names[i], a.cores[i], a.ncores[i], a.gpus[i],
                                              a.memory[i] };
    berth_error_t err;
    struct ledger *l = ledger_create (spec, a.n, a.local, &err);
    struct ledger *empty = ledger_create (spec, a.n, a.local, &err);
    FUZZ_CHECK (l && empty, "ledger_create: %s", err.text);
    struct step_capacity cap;
    ledger_capacity (l, &cap);
    cap.mpi_allowed = data[0] & 0x80 ? false : true;
    memset (core_used, 0, sizeof (core_used));
    memset (gpu_used, 0, sizeof (gpu_used));
    uint64_t held[512];
    int nheld = 0;

    const char *p = (const char *) data + 1, *end = (const char *) data + size;
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t) (end - p));
        size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
        const char *line = p;
        p = nl ? nl + 1 : end;
        if (len >= 1 && line[0] == '*') {
            for (int i = 0; i < nheld; i++) {
                mark (l, &a, held[i], false);
                FUZZ_CHECK (ledger_release (l, held[i], &err) == 0, "release: %s", err.text);
            }
            nheld = 0;
            check (l);
            continue;
        }
        if (len >= 1 && line[0] == '-') {
            if (nheld) {
                int k = (int) (strtoul (line + 1, NULL, 10) % (unsigned) nheld);
                mark (l, &a, held[k], false);
                FUZZ_CHECK (ledger_release (l, held[k], &err) == 0, "release: %s", err.text);
                FUZZ_CHECK (ledger_release (l, held[k], &err) < 0
                            && !strcmp (err.code, "not_found"), "a second release is not_found");
                held[k] = held[--nheld];
            }
            check (l);
            continue;
        }
        struct proto_request req;
        if (proto_decode_request (line, len, &req, &err) < 0) {
            proto_request_free (&req);
            continue;
        }
        if (req.op == PROTO_RELEASE) {
            /* as berthd reads a lease name */
            const char *s = req.release.lease[0] == 'L' ? req.release.lease + 1
                                                         : req.release.lease;
            char *e;
            unsigned long long id = strtoull (s, &e, 10);
            int k = -1;
            for (int i = 0; i < nheld; i++)
                if (held[i] == id)
                    k = i;
            if (!*e && k >= 0) {
                mark (l, &a, id, false);
                FUZZ_CHECK (ledger_release (l, id, &err) == 0, "release: %s", err.text);
                held[k] = held[--nheld];
            }
            else if (!*e)
                FUZZ_CHECK (ledger_release (l, id, &err) < 0, "an unknown lease is refused");
        }
        else if (req.op == PROTO_ACQUIRE && nheld < 512) {
            struct step_shape shape;
            char warn[512];
            if (step_cut_to_fit (&req.acquire.step, &cap, &shape, warn, sizeof (warn),
                                 &err) == 0) {
                FUZZ_CHECK (shape.cores >= 1 && shape.ntasks >= 1 && shape.gpus >= 0,
                            "a cut step has a positive shape");
                enum ledger_layout lay = shape.local || len % 2 ? LEDGER_CPU_BINDING
                                                                 : LEDGER_SCHEDULER;
                uint64_t id;
                char why[512];
                int rc = ledger_acquire (l, &shape, lay, &id, why, sizeof (why), &err);
                FUZZ_CHECK (rc >= 0, "a cut step is a valid shape: %s", err.text);
                if (rc == 0) {
                    mark (l, &a, id, true);
                    held[nheld++] = id;
                    uint64_t eid;
                    FUZZ_CHECK (ledger_acquire (empty, &shape, lay, &eid, why, sizeof (why),
                                                &err) == 0,
                                "what fits now fits the empty allocation");
                    ledger_release (empty, eid, NULL);
                }
                else
                    FUZZ_CHECK (why[0], "a step that does not fit says why");
            }
            else
                FUZZ_CHECK (err.text[0], "a refused step says why");
        }
        proto_request_free (&req);
        check (l);
    }
    for (int i = 0; i < nheld; i++) {
        mark (l, &a, held[i], false);
        FUZZ_CHECK (ledger_release (l, held[i], &err) == 0, "release: %s", err.text);
    }
    check (l);
    for (int i = 0; i < a.n; i++) {
        struct ledger_node_info info;
        ledger_node_info (l, i, &info);
        FUZZ_CHECK (info.free_cores == info.cores && info.free_gpus == info.gpus
                    && info.leases == 0 && info.unbudgeted == info.memory,
                    "node %s is whole again", info.name);
    }
    ledger_destroy (l);
    ledger_destroy (empty);
    return 0;
}
