/* SPDX-License-Identifier: MIT */
/* Shared by test_json_scan and fuzz_json_scan: does what json_scan read
 * agree with jansson's tree of the same line? */
#ifndef BERTH_JSON_SCAN_AGREE_H
#define BERTH_JSON_SCAN_AGREE_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"

/* Token i against v: the index of the token after it, or -1 with why
 * filled when they differ. */
static int json_scan_agrees (const struct json_scan *s, int i, json_t *v,
                             char *why, size_t whylen)
{
    const struct json_scan_token *t = &s->tokens[i];
    const char *p = s->line + t->start;
    size_t n = (size_t) (t->end - t->start);
    long long iv;
    double dv;
    char *str = NULL;
    bool same = false;
    int j = i + 1;
    switch (t->kind) {
    case JSON_SCAN_OBJECT: {
        if (!json_is_object (v) || json_object_size (v) != (size_t) t->size)
            break;
        const char *key;
        json_t *member;
        json_object_foreach (v, key, member) {
            /* jansson keeps the members in their order in the text */
            if (!json_scan_is (s, j, key)) {
                snprintf (why, whylen, "member key %s differs", key);
                return -1;
            }
            if ((j = json_scan_agrees (s, j + 1, member, why, whylen)) < 0)
                return -1;
        }
        same = true;
        break;
    }
    case JSON_SCAN_ARRAY:
        if (!json_is_array (v) || json_array_size (v) != (size_t) t->size)
            break;
        for (size_t k = 0; k < json_array_size (v); k++)
            if ((j = json_scan_agrees (s, j, json_array_get (v, k), why, whylen)) < 0)
                return -1;
        same = true;
        break;
    case JSON_SCAN_STRING:
        same = json_is_string (v) && json_string_length (v) == n
               && !memcmp (json_string_value (v), p, n)
               && json_scan_strdup (s, i, false, &str) == 0
               && !strcmp (str, json_string_value (v));
        free (str);
        break;
    case JSON_SCAN_INTEGER:
        same = json_is_integer (v) && json_scan_integer (s, i, &iv) == 0
               && iv == json_integer_value (v) && json_scan_real (s, i, &dv) == 0
               && dv == json_number_value (v);
        break;
    case JSON_SCAN_REAL:
        same = json_is_real (v) && json_scan_real (s, i, &dv) == 0
               && dv == json_real_value (v) && json_scan_integer (s, i, &iv) < 0;
        break;
    case JSON_SCAN_TRUE:
        same = json_is_true (v);
        break;
    case JSON_SCAN_FALSE:
        same = json_is_false (v);
        break;
    case JSON_SCAN_NULL:
        same = json_is_null (v);
        break;
    }
    if (same && json_scan_skip (s, i) == j)
        return j;
    snprintf (why, whylen, "token %d (%.*s) differs from jansson's value", i,
              (int) (n > 80 ? 80 : n), p);
    return -1;
}

#endif
