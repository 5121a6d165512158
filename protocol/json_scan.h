/* SPDX-License-Identifier: MIT */
/* A strict, allocation-free reader of the protocol's hot lines (acquire and
 * release requests, grant and release replies), so that the common request
 * and reply do not pay for building and freeing a jansson tree. Tokens come
 * from jsmn (Debian's libjsmn-dev); the separators, numbers, strings and
 * duplicate keys are checked here.
 *
 * The contract that keeps it safe: json_scan_parse accepts a line only when
 * jansson (json_loadb with JSON_REJECT_DUPLICATES) would accept it and read
 * the same values. Everything else -- a string with an escape or a byte
 * outside printable ASCII, a number with an exponent or more than 18 digits,
 * too many tokens, anything malformed -- is declined, and the caller decodes
 * the line with jansson as before, which also words every error. A decoder
 * built on it declines (returns 1) as soon as a line holds anything it does
 * not expect, before any side effect. */
#ifndef BERTH_JSON_SCAN_H
#define BERTH_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_SCAN_MAX_TOKENS 160

enum json_scan_kind {
    JSON_SCAN_OBJECT,
    JSON_SCAN_ARRAY,
    JSON_SCAN_STRING,             /* no escapes: text is the value itself */
    JSON_SCAN_INTEGER,            /* -?(0|[1-9][0-9]*), at most 18 digits */
    JSON_SCAN_REAL,               /* with a fraction, no exponent, at most
                                     63 bytes */
    JSON_SCAN_TRUE,
    JSON_SCAN_FALSE,
    JSON_SCAN_NULL,
};

struct json_scan_token {
    enum json_scan_kind kind;
    int start, end;               /* byte offsets in the line; a string's are
                                     inside its quotes */
    int size;                     /* object: members; array: items; else 0 */
    int next;                     /* the token after this one and everything
                                     inside it (json_scan_skip) */
};

struct json_scan {
    const char *line;
    int ntokens;
    /* In document order: an object's members follow it as key, value, key,
     * value...; an array's items follow it; a container's children come
     * before its next sibling. Token 0 is the line's object. */
    struct json_scan_token tokens[JSON_SCAN_MAX_TOKENS];
};

/* 0 when line (len bytes; a trailing newline and other whitespace allowed) is
 * one JSON object in the subset above, with no key twice in any object;
 * 1 when it is not (nothing else is said: jansson will say why). */
int json_scan_parse (struct json_scan *s, const char *line, size_t len);

/* The index of the token after token i and everything inside it. */
int json_scan_skip (const struct json_scan *s, int i);

/* Does token i (a string) hold exactly name? */
bool json_scan_is (const struct json_scan *s, int i, const char *name);

/* Is token i there (i >= 0) and not null? The protocol reads null as a
 * member left out. */
bool json_scan_given (const struct json_scan *s, int i);

/* The value tokens of object token obj's members by name: at[m] for
 * names[m], -1 when not there. 0, or 1 when obj is not an object or has a
 * member not in names. */
int json_scan_members (const struct json_scan *s, int obj, const char *const *names,
                       int n, int *at);

/* Does token i hold a string of min to max bytes? (A scanned string is
 * printable ASCII: it holds no control character and no NUL.) */
bool json_scan_string_in (const struct json_scan *s, int i, size_t min, size_t max);

/* Token i's integer, when it is one from min to max; else -1. */
int json_scan_integer_in (const struct json_scan *s, int i, long long min,
                          long long max, long long *out);

/* Token i's value, when it is of that kind: integer (as jansson reads it),
 * real (an integer token reads as a real too, as jansson's json_number_value
 * does) and a new copy of a string (*out NULL and 0 returned for null, when
 * allow_null). -1 when the kind differs or memory runs out; nothing is
 * allocated then. */
int json_scan_integer (const struct json_scan *s, int i, long long *out);
int json_scan_real (const struct json_scan *s, int i, double *out);
int json_scan_strdup (const struct json_scan *s, int i, bool allow_null, char **out);

#endif
