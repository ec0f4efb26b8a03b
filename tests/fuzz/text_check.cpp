// Strict JSON and DOT checkers (text_check.h).
#include "text_check.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <strings.h>

namespace sgfuzz {

size_t utf8_invalid_at(const char *text, size_t size) {
  const unsigned char *s = reinterpret_cast<const unsigned char *>(text);
  size_t i = 0;
  while (i < size) {
    unsigned char c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07, min = 0x10000;
    else return i;
    if (i + len > size) return i;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return size;
}

namespace {

// ---- JSON --------------------------------------------------------------

struct Json {
  const char *s;
  size_t n, i = 0;
  std::string err;
  int depth = 0;

  bool fail(const char *what) {
    if (err.empty()) err = std::string(what) + " at byte " + std::to_string(i);
    return false;
  }
  void ws() {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
  }
  bool lit(const char *word) {
    size_t len = std::strlen(word);
    if (n - i < len || std::memcmp(s + i, word, len)) return fail("unknown literal");
    i += len;
    return true;
  }
  bool digits() {
    if (i >= n || !isdigit(static_cast<unsigned char>(s[i]))) return fail("digit expected");
    while (i < n && isdigit(static_cast<unsigned char>(s[i]))) i++;
    return true;
  }
  bool number() {
    if (s[i] == '-') i++;
    if (i < n && s[i] == '0') i++;
    else if (!digits()) return false;
    if (i < n && s[i] == '.') {
      i++;
      if (!digits()) return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
      i++;
      if (i < n && (s[i] == '+' || s[i] == '-')) i++;
      if (!digits()) return false;
    }
    return true;
  }
  bool string() {
    i++;  // the opening quote
    while (i < n) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == '"') {
        i++;
        return true;
      }
      if (c < 0x20) return fail("control character in a string");
      if (c == '\\') {
        if (++i >= n) break;
        char e = s[i];
        if (e == 'u') {
          for (int k = 1; k <= 4; k++)
            if (i + k >= n || !isxdigit(static_cast<unsigned char>(s[i + k])))
              return fail("bad \\u escape");
          i += 5;
          continue;
        }
        if (!std::strchr("\"\\/bfnrt", e) || e == '\0') return fail("bad escape");
      }
      i++;
    }
    return fail("unterminated string");
  }
  bool value() {
    if (++depth > 256) return fail("nested too deeply");
    ws();
    if (i >= n) return fail("value expected");
    bool ok;
    switch (s[i]) {
      case '{': ok = members('}', true); break;
      case '[': ok = members(']', false); break;
      case '"': ok = string(); break;
      case 't': ok = lit("true"); break;
      case 'f': ok = lit("false"); break;
      case 'n': ok = lit("null"); break;
      default:
        ok = (s[i] == '-' || isdigit(static_cast<unsigned char>(s[i]))) ? number()
                                                                         : fail("value expected");
    }
    depth--;
    return ok;
  }
  bool members(char close, bool object) {
    i++;
    ws();
    if (i < n && s[i] == close) {
      i++;
      return true;
    }
    for (;;) {
      if (object) {
        ws();
        if (i >= n || s[i] != '"') return fail("member name expected");
        if (!string()) return false;
        ws();
        if (i >= n || s[i] != ':') return fail("':' expected");
        i++;
      }
      if (!value()) return false;
      ws();
      if (i < n && s[i] == ',') {
        i++;
        continue;
      }
      if (i < n && s[i] == close) {
        i++;
        return true;
      }
      return fail(object ? "',' or '}' expected" : "',' or ']' expected");
    }
  }
};

// ---- DOT ---------------------------------------------------------------

enum Tok { END, ID, LBRACE, RBRACE, LBRACKET, RBRACKET, EQUAL, SEMI, COMMA, COLON, ARROW, DASHES, BAD };

struct Dot {
  const char *s;
  size_t n, i = 0;
  Tok tok = END;
  std::string text;  // the current ID (unquoted ones: as written)
  bool quoted = false;
  bool directed = false;
  std::string err;
  int depth = 0;

  bool fail(const std::string &what) {
    if (err.empty()) err = what + " at byte " + std::to_string(i);
    return false;
  }
  static bool id_start(unsigned char c) { return isalpha(c) || c == '_' || c >= 0x80; }
  static bool id_char(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

  void skip_space_and_comments() {
    for (;;) {
      while (i < n && isspace(static_cast<unsigned char>(s[i]))) i++;
      if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
        while (i < n && s[i] != '\n') i++;
      } else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
        size_t end = i + 2;
        while (end + 1 < n && !(s[end] == '*' && s[end + 1] == '/')) end++;
        i = end + 1 < n ? end + 2 : n;
      } else if (i < n && s[i] == '#' && (i == 0 || s[i - 1] == '\n')) {
        while (i < n && s[i] != '\n') i++;
      } else {
        return;
      }
    }
  }

  // Reads one quoted string (after its quote); false if unterminated.
  bool quoted_string() {
    i++;
    while (i < n && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < n) i++;
      i++;
    }
    if (i >= n) return false;
    i++;
    return true;
  }

  void next() {
    skip_space_and_comments();
    quoted = false;
    text.clear();
    if (i >= n) {
      tok = END;
      return;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t start = i;
    switch (c) {
      case '{': i++; tok = LBRACE; return;
      case '}': i++; tok = RBRACE; return;
      case '[': i++; tok = LBRACKET; return;
      case ']': i++; tok = RBRACKET; return;
      case '=': i++; tok = EQUAL; return;
      case ';': i++; tok = SEMI; return;
      case ',': i++; tok = COMMA; return;
      case ':': i++; tok = COLON; return;
      default: break;
    }
    if (c == '-' && i + 1 < n && (s[i + 1] == '>' || s[i + 1] == '-')) {
      tok = s[i + 1] == '>' ? ARROW : DASHES;
      i += 2;
      return;
    }
    if (c == '"') {
      // "a" + "b" concatenates into one ID.
      for (;;) {
        if (!quoted_string()) {
          tok = BAD;
          fail("unterminated quoted string");
          return;
        }
        size_t save = i;
        skip_space_and_comments();
        if (i < n && s[i] == '+') {
          i++;
          skip_space_and_comments();
          if (i < n && s[i] == '"') continue;
        }
        i = save;
        break;
      }
      tok = ID;
      quoted = true;
      text.assign(s + start, i - start);
      return;
    }
    if (c == '<') {  // an HTML string: balanced angle brackets
      int level = 0;
      do {
        if (s[i] == '<') level++;
        else if (s[i] == '>') level--;
        i++;
      } while (i < n && level > 0);
      if (level) {
        tok = BAD;
        fail("unterminated HTML string");
        return;
      }
      tok = ID;
      quoted = true;
      text.assign(s + start, i - start);
      return;
    }
    if (id_start(c)) {
      while (i < n && id_char(static_cast<unsigned char>(s[i]))) i++;
      tok = ID;
      text.assign(s + start, i - start);
      return;
    }
    if (c == '-' || c == '.' || isdigit(c)) {  // a numeral: -?(.[0-9]+|[0-9]+(.[0-9]*)?)
      if (s[i] == '-') i++;
      size_t digits_before = 0, digits_after = 0;
      while (i < n && isdigit(static_cast<unsigned char>(s[i]))) i++, digits_before++;
      if (i < n && s[i] == '.') {
        i++;
        while (i < n && isdigit(static_cast<unsigned char>(s[i]))) i++, digits_after++;
      }
      if (!digits_before && !digits_after) {
        tok = BAD;
        fail("bad numeral");
        return;
      }
      if (i < n && id_start(static_cast<unsigned char>(s[i]))) {
        tok = BAD;
        fail("a numeral runs into an identifier");
        return;
      }
      tok = ID;
      text.assign(s + start, i - start);
      return;
    }
    tok = BAD;
    fail(std::string("unexpected character 0x") + "0123456789abcdef"[c >> 4] +
         "0123456789abcdef"[c & 15]);
  }

  bool keyword(const char *word) const {
    return tok == ID && !quoted && strcasecmp(text.c_str(), word) == 0;
  }
  bool is_plain_id() const {
    return tok == ID && (quoted || !(keyword("node") || keyword("edge") || keyword("graph") ||
                                     keyword("digraph") || keyword("subgraph") ||
                                     keyword("strict")));
  }

  bool a_list() {  // inside [ ... ]
    while (tok != RBRACKET) {
      if (!is_plain_id()) return fail("attribute name expected");
      next();
      if (tok != EQUAL) return fail("'=' expected in an attribute");
      next();
      if (!is_plain_id()) return fail("attribute value expected");
      next();
      if (tok == SEMI || tok == COMMA) next();
    }
    next();
    return true;
  }
  bool attr_lists() {
    while (tok == LBRACKET) {
      next();
      if (!a_list()) return false;
    }
    return true;
  }
  bool node_id() {
    if (!is_plain_id()) return fail("node ID expected");
    next();
    if (tok == COLON) {
      next();
      if (!is_plain_id()) return fail("port expected");
      next();
      if (tok == COLON) {
        next();
        if (!is_plain_id()) return fail("compass point expected");
        next();
      }
    }
    return true;
  }
  bool subgraph() {
    if (keyword("subgraph")) {
      next();
      if (is_plain_id()) next();
    }
    if (tok != LBRACE) return fail("'{' expected");
    next();
    if (!stmt_list()) return false;
    if (tok != RBRACE) return fail("'}' expected");
    next();
    return true;
  }
  bool operand() { return (keyword("subgraph") || tok == LBRACE) ? subgraph() : node_id(); }
  bool stmt() {
    if (keyword("graph") || keyword("node") || keyword("edge")) {
      next();
      if (tok != LBRACKET) return fail("'[' expected after graph/node/edge");
      return attr_lists();
    }
    if (is_plain_id()) {  // ID '=' ID, or a node or edge statement
      size_t save_i = i;
      std::string save_text = text;
      bool save_quoted = quoted;
      next();
      if (tok == EQUAL) {
        next();
        if (!is_plain_id()) return fail("value expected after '='");
        next();
        return true;
      }
      i = save_i;  // back to the first ID, which node_id consumes
      text = save_text;
      quoted = save_quoted;
      tok = ID;
    }
    if (!operand()) return false;
    bool edge = false;
    while (tok == ARROW || tok == DASHES) {
      if ((tok == ARROW) != directed) return fail(directed ? "'--' in a digraph" : "'->' in a graph");
      edge = true;
      next();
      if (!operand()) return false;
    }
    (void)edge;
    return attr_lists();
  }
  bool stmt_list() {
    if (++depth > 200) return fail("nested too deeply");
    while (tok != RBRACE && tok != END && tok != BAD) {
      if (!stmt()) return false;
      if (tok == SEMI) next();
    }
    depth--;
    return tok != BAD || fail("bad token");
  }
  bool graph() {
    next();
    if (keyword("strict")) next();
    if (keyword("digraph")) directed = true;
    else if (!keyword("graph")) return fail("'graph' or 'digraph' expected");
    next();
    if (is_plain_id()) next();
    if (tok != LBRACE) return fail("'{' expected");
    next();
    if (!stmt_list()) return false;
    if (tok != RBRACE) return fail("'}' expected");
    next();
    if (tok != END) return fail("text after the graph");
    return true;
  }
};

}  // namespace

std::string json_check(const char *text, size_t size, bool require_utf8) {
  if (require_utf8) {
    size_t bad = utf8_invalid_at(text, size);
    if (bad < size) return "invalid UTF-8 at byte " + std::to_string(bad);
  }
  Json j{text, size};
  if (!j.value()) return j.err;
  j.ws();
  if (j.i != size) {
    j.fail("text after the value");
    return j.err;
  }
  return "";
}

std::string dot_check(const char *text, size_t size, bool require_utf8) {
  if (require_utf8) {
    size_t bad = utf8_invalid_at(text, size);
    if (bad < size) return "invalid UTF-8 at byte " + std::to_string(bad);
  }
  if (std::memchr(text, '\0', size)) return "a NUL byte in the text";
  Dot d{text, size};
  if (!d.graph()) return d.err.empty() ? "malformed" : d.err;
  return "";
}

}  // namespace sgfuzz
