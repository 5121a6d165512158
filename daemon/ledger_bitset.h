/* The ledger's bit sets: core ids of a node as words of bits, scanned word
 * by word. Inline: these run inside the placement loops, and a call per word
 * would be felt (bench_ledger). */
#ifndef BERTHD_LEDGER_BITSET_H
#define BERTHD_LEDGER_BITSET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

static inline uint64_t bit (int i)
{
    return 1ULL << (i & 63);
}

static inline int bits_count (const uint64_t *x, int W)
{
    int n = 0;
    for (int i = 0; i < W; i++)
        n += __builtin_popcountll (x[i]);
    return n;
}

/* First set bit of x (or of ~x when flip) at or after from; W*64 if none. */
static inline int bits_next (const uint64_t *x, int W, int from, bool flip)
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

static inline bool bits_subset (const uint64_t *a, const uint64_t *b, int W)
{
    for (int i = 0; i < W; i++)
        if (a[i] & ~b[i])
            return false;
    return true;
}

/* Start of the shortest run of >= c consecutive set ids (lowest on ties), or
 * -1: contiguous ids keep the rest of the node in long runs too. */
static inline int bits_best_run (const uint64_t *x, int W, int c)
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
static inline void bits_choose (const uint64_t *x, int W, int c, int *ids)
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
