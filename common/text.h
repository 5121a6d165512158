/* SPDX-License-Identifier: MIT */
/* Small text helpers shared by the readers of configs and requests. */
#ifndef BERTH_TEXT_H
#define BERTH_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Narrow [*start, *start + *len) to drop leading and trailing white space. */
void text_trim_span (const char **start, size_t *len);

/* A trimmed copy of text, or NULL when text is NULL or blank (errno ENOMEM
 * when the copy fails). */
char *text_trim_dup (const char *text);

/* The first line of text (a command's output), trimmed, into buf. */
void text_first_line (const char *text, char *buf, size_t size);

/* The number of seconds text says, when it is one from lo to hi (an
 * environment variable's value: NULL or "" is none); else dflt. */
double text_seconds_or (const char *text, double lo, double hi, double dflt);

/* UTF-8 text in characters (terminal cells and SVG glyphs count one per
 * character here): how many s holds, and the bytes of its first `chars`. */
size_t text_utf8_chars (const char *s);
size_t text_utf8_prefix (const char *s, size_t chars);

/* A growing string for writing JSON lines without printf, always ending in
 * a NUL. Once bad (memory ran out, or a writer gave up on a value), nothing
 * more is added. Start it zeroed; the caller frees s. */
struct text_buf {
    char *s;
    size_t len, cap;
    bool bad;
};
void text_buf_put (struct text_buf *b, const char *p, size_t n);
void text_buf_puts (struct text_buf *b, const char *p);
void text_buf_int (struct text_buf *b, long long v);   /* as "%lld" */

/* text as one POSIX shell word: bare when it is not empty and holds only
 * characters no shell treats specially (and always_quote is false), else in
 * single quotes, each ' written as '\''. */
void text_buf_shell_word (struct text_buf *b, const char *text,
                          bool always_quote);

#endif
