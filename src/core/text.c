/* Text output: a growing buffer, and names escaped for JSON, DOT and XML (SVG). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/sys.h"
#include "core/text.h"

static int reserve(sg__text *t, size_t more) {
  if (t->failed) return 0;
  if (t->cap - t->len > more) return 1;
  size_t want = t->len + more + 1;
  if (want < t->len) { /* overflow */
    t->failed = 1;
    return 0;
  }
  size_t cap = t->cap ? t->cap : 256;
  while (cap < want) cap = cap * 2 > cap ? cap * 2 : want;
  char *grown = sg__realloc(t->data, cap);
  if (!grown) {
    t->failed = 1;
    return 0;
  }
  t->data = grown;
  t->cap = cap;
  return 1;
}

void sg__text_put(sg__text *t, const char *bytes, size_t len) {
  if (!reserve(t, len)) return;
  memcpy(t->data + t->len, bytes, len);
  t->len += len;
  t->data[t->len] = '\0';
}

void sg__text_printf(sg__text *t, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    t->failed = 1;
    return;
  }
  if ((size_t)n < sizeof small) {
    sg__text_put(t, small, (size_t)n);
    return;
  }
  if (!reserve(t, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

size_t sg__utf8_sequence(const unsigned char *s, size_t len) {
  if (len == 0) return 0;
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;      /* no overlong forms */
    else if (c == 0xed) hi = 0x9f; /* no surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;      /* no overlong forms */
    else if (c == 0xf4) hi = 0x8f; /* nothing past U+10FFFF */
  } else {
    return 0; /* a continuation byte, 0xc0/0xc1 (overlong), or 0xf5..0xff */
  }
  if (len < n || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xbf) return 0;
  return n;
}

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD in UTF-8 */

/* Writes `s`, UTF-8 repaired; bytes below 0x20 go through `control`. */
static void put_escaped(sg__text *t, const char *s, int json) {
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s);
  while (left) {
    size_t n = sg__utf8_sequence(p, left);
    if (n == 0) {
      sg__text_put(t, replacement, 3);
      n = 1;
    } else if (*p == '"' || *p == '\\') {
      char esc[2] = {'\\', (char)*p};
      sg__text_put(t, esc, 2);
    } else if (*p < 0x20 || (!json && *p == 0x7f)) {
      if (json) sg__text_printf(t, "\\u%04x", *p);
      else sg__text_put(t, " ", 1);
    } else {
      sg__text_put(t, (const char *)p, n);
    }
    p += n;
    left -= n;
  }
}

void sg__text_json(sg__text *t, const char *s) { put_escaped(t, s, 1); }

void sg__text_xml(sg__text *t, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s);
  while (left) {
    size_t n = sg__utf8_sequence(p, left);
    if (n == 0) {
      sg__text_put(t, replacement, 3);
      n = 1;
    } else if (*p == '&') {
      sg__text_put(t, "&amp;", 5);
    } else if (*p == '<') {
      sg__text_put(t, "&lt;", 4);
    } else if (*p == '>') {
      sg__text_put(t, "&gt;", 4);
    } else if (*p == '"') {
      sg__text_put(t, "&quot;", 6);
    } else if (*p < 0x20 || *p == 0x7f) {
      sg__text_put(t, " ", 1); /* XML 1.0 allows no control characters but tab and newline */
    } else {
      sg__text_put(t, (const char *)p, n);
    }
    p += n;
    left -= n;
  }
}

void sg__text_dot(sg__text *t, const char *s) { put_escaped(t, s, 0); }

void sg__text_free(sg__text *t) {
  sg__free(t->data);
  *t = (sg__text){0};
}

char *sg__text_take(sg__text *t) {
  if (!t->failed && !t->data) sg__text_put(t, "", 0);
  if (t->failed) {
    sg__text_free(t);
    return NULL;
  }
  char *data = t->data;
  *t = (sg__text){0};
  return data;
}
