/* The ledger's bit sets: scans over a node's core-id words (first set bit,
 * shortest run, choosing ids) and the node sets that index nodes by free
 * count (two levels: words, and a summary word per 64 of them). */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "ledger_private.h"

int bits_count (const uint64_t *x, int W)
{
    int n = 0;
    for (int i = 0; i < W; i++)
        n += __builtin_popcountll (x[i]);
    return n;
}

/* First set bit of x (or of ~x when flip) at or after from; W*64 if none. */
int bits_next (const uint64_t *x, int W, int from, bool flip)
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
int bits_best_run (const uint64_t *x, int W, int c)
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
void bits_choose (const uint64_t *x, int W, int c, int *ids)
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

/* ---- node sets ---- */

void ns_add (struct nodeset *s, int i)
{
    s->w[i >> 6] |= bit (i);
    s->sum[i >> 12] |= bit (i >> 6);
    s->count++;
}

void ns_del (struct nodeset *s, int i)
{
    if (!(s->w[i >> 6] &= ~bit (i)))
        s->sum[i >> 12] &= ~bit (i >> 6);
    s->count--;
}

int ns_next (const struct ledger *l, const struct nodeset *s, int from)
{
    int wi = from >> 6;
    if (wi >= l->nw)
        return -1;
    uint64_t v = s->w[wi] & (~0ULL << (from & 63));
    if (v)
        return wi * 64 + __builtin_ctzll (v);
    int next = wi + 1;     /* next non-empty word, from the summary */
    wi = bits_next (s->sum, l->nsw, next, false);
    if (wi >= l->nw)
        return -1;
    return wi * 64 + __builtin_ctzll (s->w[wi]);
}
