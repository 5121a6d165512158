/* Small text helpers shared by the readers of configs and requests. */
#ifndef BERTH_TEXT_H
#define BERTH_TEXT_H

#include <stddef.h>

/* Narrow [*start, *start + *len) to drop leading and trailing white space. */
void text_trim_span (const char **start, size_t *len);

/* A trimmed copy of text, or NULL when text is NULL or blank (errno ENOMEM
 * when the copy fails). */
char *text_trim_dup (const char *text);

/* The first line of text (a command's output), trimmed, into buf. */
void text_first_line (const char *text, char *buf, size_t size);

#endif
