/* SPDX-License-Identifier: MIT */
/* The ledger's bit sets: a node's core ids as words of bits, scanned word by
 * word (first set bit, shortest run, choosing ids).
 *
 * The scans are static functions, a copy in each file that uses them, so
 * that the compiler inlines or specialises them per call site as it did
 * when one file held the whole ledger: as calls into a file of their own
 * they cost the one-node pair 5-15% (bench_ledger), and made static inline
 * they were inlined into the placement loops, whose registers then spilled
 * (the one-node pair at 10,000 nodes about 7% slower). */
#ifndef BERTHD_LEDGER_BITSET_H
#define BERTHD_LEDGER_BITSET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

static inline uint64_t bit (int i)
{
    return 1ULL << (i & 63);
}

static inline bool bits_subset (const uint64_t *a, const uint64_t *b,
                                int W)
{
    for (int i = 0; i < W; i++)
        if (a[i] & ~b[i])
            return false;
    return true;
}

/* unused: not every file calls every scan */
#define BITS_FN __attribute__ ((unused))

/* Set bits in x[0..W). */
static BITS_FN int bits_count (const uint64_t *x, int W)
{
    int n = 0;
    for (int i = 0; i < W; i++)
        n += __builtin_popcountll (x[i]);
    return n;
}

/* First set bit of x (or of ~x when flip) at or after from; W*64 if none. */
static BITS_FN int bits_next (const uint64_t *x, int W, int from,
                              bool flip)
{
    int wi = from >> 6;
    if (wi >= W)
        return W * 64;
    uint64_t v = (flip ? ~x[wi] : x[wi]) & (~0ULL << (from & 63));
    while (!v) {
        if (++wi == W)
            return W * 64;
        v = flip ? ~x[wi] : x[wi];
    }
    return wi * 64 + __builtin_ctzll (v);
}

/* Start of the shortest run of >= c consecutive set ids (lowest on ties), or
 * -1: contiguous ids keep the rest of the node in long runs too. */
static BITS_FN int bits_best_run (const uint64_t *x, int W, int c)
{
    int best = -1, bestlen = INT_MAX, end = W * 64;
    for (int i = bits_next (x, W, 0, false); i < end;) {
        int j = bits_next (x, W, i, true);
        if (j - i >= c && j - i < bestlen) {
            best = i;
            bestlen = j - i;
            if (bestlen == c)
                break;
        }
        i = bits_next (x, W, j, false);
    }
    return best;
}

/* c ids from x: a contiguous run when there is one, else the lowest. */
static BITS_FN void bits_choose (const uint64_t *x, int W, int c,
                                 int *ids)
{
    int start = bits_best_run (x, W, c);
    if (start >= 0) {
        for (int i = 0; i < c; i++)
            ids[i] = start + i;
        return;
    }
    for (int i = 0, id = bits_next (x, W, 0, false); i < c;
         id = bits_next (x, W, id + 1, false))
        ids[i++] = id;
}

#endif
