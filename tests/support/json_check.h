// A strict JSON parser (RFC 8259) for tests: rejects anything a conforming
// parser would (trailing commas, bad escapes, control characters in strings,
// invalid UTF-8, lone surrogates, trailing garbage) and gives a small DOM, so
// that tests can both prove a file is JSON and look inside it.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sgtest {

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> items;
  std::map<std::string, Json> fields;

  bool has(const std::string &key) const { return kind == Object && fields.count(key); }
  const Json &operator[](const std::string &key) const {
    static const Json none;
    auto it = fields.find(key);
    return it == fields.end() ? none : it->second;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string &text) : s_(text) {}

  // true and *out on success; false and error() otherwise.
  bool parse(Json *out) {
    ws();
    if (!value(out, 0)) return false;
    ws();
    if (p_ != s_.size()) return fail("trailing characters");
    return true;
  }
  const std::string &error() const { return err_; }

 private:
  const std::string &s_;
  size_t p_ = 0;
  std::string err_;

  bool fail(const std::string &why) {
    if (err_.empty()) err_ = why + " at byte " + std::to_string(p_);
    return false;
  }
  void ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r'))
      p_++;
  }
  bool lit(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (s_.compare(p_, n, word) != 0) return fail(std::string("expected ") + word);
    p_ += n;
    return true;
  }
  bool value(Json *v, int depth) {
    if (depth > 256) return fail("nested too deeply");
    if (p_ >= s_.size()) return fail("unexpected end");
    char c = s_[p_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v->kind = Json::String;
      return string(&v->str);
    }
    if (c == 't') { v->kind = Json::Bool; v->b = true; return lit("true"); }
    if (c == 'f') { v->kind = Json::Bool; return lit("false"); }
    if (c == 'n') { v->kind = Json::Null; return lit("null"); }
    return number(v);
  }
  bool object(Json *v, int depth) {
    v->kind = Json::Object;
    p_++;
    ws();
    if (p_ < s_.size() && s_[p_] == '}') { p_++; return true; }
    for (;;) {
      ws();
      std::string key;
      if (p_ >= s_.size() || s_[p_] != '"') return fail("expected a key");
      if (!string(&key)) return false;
      ws();
      if (p_ >= s_.size() || s_[p_++] != ':') return fail("expected ':'");
      ws();
      Json item;
      if (!value(&item, depth + 1)) return false;
      v->fields[key] = std::move(item);
      ws();
      if (p_ >= s_.size()) return fail("unterminated object");
      if (s_[p_] == ',') { p_++; continue; }
      if (s_[p_] == '}') { p_++; return true; }
      return fail("expected ',' or '}'");
    }
  }
  bool array(Json *v, int depth) {
    v->kind = Json::Array;
    p_++;
    ws();
    if (p_ < s_.size() && s_[p_] == ']') { p_++; return true; }
    for (;;) {
      ws();
      Json item;
      if (!value(&item, depth + 1)) return false;
      v->items.push_back(std::move(item));
      ws();
      if (p_ >= s_.size()) return fail("unterminated array");
      if (s_[p_] == ',') { p_++; continue; }
      if (s_[p_] == ']') { p_++; return true; }
      return fail("expected ',' or ']'");
    }
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  bool number(Json *v) {
    size_t start = p_;
    if (p_ < s_.size() && s_[p_] == '-') p_++;
    if (p_ >= s_.size() || !digit(s_[p_])) return fail("bad value");
    if (s_[p_] == '0') p_++;
    else while (p_ < s_.size() && digit(s_[p_])) p_++;
    if (p_ < s_.size() && s_[p_] == '.') {
      p_++;
      if (p_ >= s_.size() || !digit(s_[p_])) return fail("bad fraction");
      while (p_ < s_.size() && digit(s_[p_])) p_++;
    }
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      p_++;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) p_++;
      if (p_ >= s_.size() || !digit(s_[p_])) return fail("bad exponent");
      while (p_ < s_.size() && digit(s_[p_])) p_++;
    }
    v->kind = Json::Number;
    v->num = std::stod(s_.substr(start, p_ - start));
    return true;
  }
  static void put_utf8(std::string *out, uint32_t cp) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xc0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xe0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      *out += static_cast<char>(0xf0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool hex4(uint32_t *cp) {
    if (p_ + 4 > s_.size()) return fail("short \\u escape");
    *cp = 0;
    for (int i = 0; i < 4; i++) {
      char c = s_[p_++];
      *cp <<= 4;
      if (c >= '0' && c <= '9') *cp |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') *cp |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') *cp |= static_cast<uint32_t>(c - 'A' + 10);
      else return fail("bad \\u escape");
    }
    return true;
  }
  // One well-formed UTF-8 sequence at p_ (strict: no overlongs, no
  // surrogates, nothing past U+10FFFF).
  bool utf8(std::string *out) {
    const unsigned char c = static_cast<unsigned char>(s_[p_]);
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) { n = 3; if (c == 0xe0) lo = 0xa0; if (c == 0xed) hi = 0x9f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; if (c == 0xf0) lo = 0x90; if (c == 0xf4) hi = 0x8f; }
    else return fail("invalid UTF-8 lead byte");
    if (p_ + n > s_.size()) return fail("truncated UTF-8");
    for (size_t i = 1; i < n; i++) {
      const unsigned char d = static_cast<unsigned char>(s_[p_ + i]);
      if (i == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xbf)) return fail("invalid UTF-8");
    }
    out->append(s_, p_, n);
    p_ += n;
    return true;
  }
  bool string(std::string *out) {
    p_++;  // the opening quote
    for (;;) {
      if (p_ >= s_.size()) return fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[p_]);
      if (c == '"') { p_++; return true; }
      if (c < 0x20) return fail("control character in a string");
      if (c >= 0x80) {
        if (!utf8(out)) return false;
        continue;
      }
      p_++;
      if (c != '\\') { *out += static_cast<char>(c); continue; }
      if (p_ >= s_.size()) return fail("unterminated escape");
      const char e = s_[p_++];
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xdc00 && cp <= 0xdfff) return fail("lone low surrogate");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t low;
            if (s_.compare(p_, 2, "\\u") != 0) return fail("lone high surrogate");
            p_ += 2;
            if (!hex4(&low)) return false;
            if (low < 0xdc00 || low > 0xdfff) return fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          put_utf8(out, cp);
          break;
        }
        default: return fail("bad escape");
      }
    }
  }
};

inline std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Parses `text`; on failure returns false and says why in *error.
inline bool parse_json(const std::string &text, Json *out, std::string *error) {
  JsonParser p(text);
  if (p.parse(out)) return true;
  *error = p.error();
  return false;
}

// Strict UTF-8 (the rules JSON strings follow), for text that is not JSON.
inline bool valid_utf8(const std::string &text, std::string *error) {
  for (size_t p = 0; p < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[p]);
    if (c < 0x80) { p++; continue; }
    const size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    Json ignored;
    std::string why;
    if (p + n > text.size() || !parse_json("\"" + text.substr(p, n) + "\"", &ignored, &why)) {
      *error = "invalid UTF-8 at byte " + std::to_string(p);
      return false;
    }
    p += n;
  }
  return true;
}

// A light well-formedness check of Graphviz DOT as the library writes it:
// valid UTF-8, "digraph" first, braces balanced outside strings, every
// string closed on its line, every statement line ends in ';' '{' or '}'.
inline bool check_dot(const std::string &dot, std::string *error) {
  std::string why;
  if (!valid_utf8(dot, &why)) {
    *error = why;
    return false;
  }
  if (dot.compare(0, 8, "digraph ") != 0) {
    *error = "does not start with 'digraph '";
    return false;
  }
  int depth = 0;
  bool in_string = false, in_comment = false;
  size_t line_start = 0;
  for (size_t p = 0; p < dot.size(); p++) {
    const char c = dot[p];
    if (in_comment) {
      if (c == '*' && p + 1 < dot.size() && dot[p + 1] == '/') { in_comment = false; p++; }
      continue;
    }
    if (in_string) {
      if (c == '\\') { p++; continue; }
      if (c == '"') in_string = false;
      else if (c == '\n') { *error = "string broken by a newline at byte " + std::to_string(p); return false; }
      continue;
    }
    if (c == '/' && p + 1 < dot.size() && dot[p + 1] == '*') { in_comment = true; p++; continue; }
    if (c == '"') in_string = true;
    else if (c == '{') depth++;
    else if (c == '}' && --depth < 0) { *error = "unbalanced '}'"; return false; }
    else if (c == '\n') {
      std::string line = dot.substr(line_start, p - line_start);
      size_t end = line.find_last_not_of(" \t");
      char last = end == std::string::npos ? ';' : line[end];
      if (last != ';' && last != '{' && last != '}' && last != '/') {
        *error = "statement without ';': " + line;
        return false;
      }
      line_start = p + 1;
    }
  }
  if (in_string || in_comment || depth != 0) {
    *error = "unterminated string, comment or brace";
    return false;
  }
  return true;
}

}  // namespace sgtest
