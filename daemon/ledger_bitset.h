/* The ledger's bit sets: a node's core ids as words of bits, scanned word by
 * word (ledger_bitset.c). The two smallest are inline; the scans are calls,
 * as they were when one file held the ledger: inlining them all into the
 * placement loops made those loops slower (bench_ledger). */
#ifndef BERTHD_LEDGER_BITSET_H
#define BERTHD_LEDGER_BITSET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

static inline uint64_t bit (int i)
{
    return 1ULL << (i & 63);
}

static inline bool bits_subset (const uint64_t *a, const uint64_t *b, int W)
{
    for (int i = 0; i < W; i++)
        if (a[i] & ~b[i])
            return false;
    return true;
}

/* Set bits in x[0..W). */
int bits_count (const uint64_t *x, int W);

/* First set bit of x (or of ~x when flip) at or after from; W*64 if none. */
int bits_next (const uint64_t *x, int W, int from, bool flip);

/* Start of the shortest run of >= c consecutive set ids (lowest on ties), or
 * -1: contiguous ids keep the rest of the node in long runs too. */
int bits_best_run (const uint64_t *x, int W, int c);

/* c ids from x: a contiguous run when there is one, else the lowest. */
void bits_choose (const uint64_t *x, int W, int c, int *ids);

#endif
