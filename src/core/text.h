/* Internal: building text output (DOT, trace JSON) in memory, and writing
 * user-given strings (node and graph names) into it safely.
 *
 * Names are arbitrary bytes to the library, but the formats they end up in
 * are not: JSON must be valid UTF-8 with control characters escaped, and a
 * DOT string must not end early or break its line. So every name goes
 * through sg__text_json, sg__text_dot or sg__text_xml, which escape what the format needs
 * and replace each byte that does not begin a well-formed UTF-8 sequence by
 * U+FFFD (the replacement character), as browsers and Perfetto do when
 * decoding. */
#ifndef SG_CORE_TEXT_H
#define SG_CORE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* A growing buffer. On an allocation failure `failed` is set and every
 * later call does nothing, so a writer checks once at the end. */
typedef struct sg__text {
  char *data;                /* NUL-terminated once anything was written */
  size_t len, cap;
  int failed;
} sg__text;

void sg__text_printf(sg__text *t, const char *fmt, ...) SG_PRINTF(2, 3);
void sg__text_put(sg__text *t, const char *bytes, size_t len);
/* `s` as the inside of a JSON string. */
void sg__text_json(sg__text *t, const char *s);
/* `s` as the inside of a double-quoted DOT string (control characters
 * become spaces). */
void sg__text_dot(sg__text *t, const char *s);
/* `s` as XML character data or the inside of a double-quoted attribute
 * (SVG): markup characters as entities, control characters as spaces. */
void sg__text_xml(sg__text *t, const char *s);
/* Frees the buffer (a text is reusable after). */
void sg__text_free(sg__text *t);
/* Hands the buffer over (NUL-terminated, "" when nothing was written), or
 * NULL if an allocation failed (the buffer is then freed). */
char *sg__text_take(sg__text *t);

/* The length (1-4) of the well-formed UTF-8 sequence at `s` (at most `len`
 * bytes are looked at), or 0 if none starts there: a stray continuation
 * byte, an overlong form, a surrogate, a value past U+10FFFF, or a
 * truncated sequence. */
size_t sg__utf8_sequence(const unsigned char *s, size_t len);

#endif
