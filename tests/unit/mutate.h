/* SPDX-License-Identifier: MIT */
/* Random edits of a JSON line, for the tests that hold a fast lane to the
 * jansson path: replace, insert or delete one byte drawn from an alphabet,
 * or flip one bit. */
#ifndef BERTH_TEST_MUTATE_H
#define BERTH_TEST_MUTATE_H

#include <stdint.h>
#include <string.h>

/* Edit line (n bytes, room for cap) edits times; *state drives the choices
 * (a fixed start makes the test repeatable). Returns the new length. */
static inline size_t mutate_line (char *line, size_t n, size_t cap, int edits,
                                  const char *alphabet, uint64_t *state)
{
    size_t nalpha = strlen (alphabet);
    for (int e = 0; e < edits; e++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t) (*state >> 33);
        size_t at = n ? r % n : 0;
        char c = alphabet[(r >> 12) % nalpha];
        switch ((r >> 20) % 4) {
        case 0:                                  /* replace */
            if (n)
                line[at] = c;
            break;
        case 1:                                  /* insert */
            if (n + 1 < cap) {
                memmove (line + at + 1, line + at, n - at);
                line[at] = c;
                n++;
            }
            break;
        case 2:                                  /* delete */
            if (n) {
                memmove (line + at, line + at + 1, n - at - 1);
                n--;
            }
            break;
        default:                                 /* flip a bit */
            if (n)
                line[at] ^= (char) (1u << ((r >> 8) % 8));
            break;
        }
    }
    return n;
}

#endif
