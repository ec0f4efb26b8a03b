// A small strict XML reader for the SVG the library writes: checks that the
// text is well-formed (one root, tags closed in order, attributes quoted,
// only the predefined entities, valid UTF-8, no control characters) and
// gives the elements with their attributes and text, for tests to compare
// with what they expect.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace sgtest {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;       // character data directly inside, entities decoded
  int parent = -1;
  std::vector<int> children;

  std::string attr(const std::string &key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  }
  bool has(const std::string &key) const { return attrs.count(key) != 0; }
  uint64_t num(const std::string &key) const {
    return std::strtoull(attr(key).c_str(), nullptr, 10);
  }
  double real(const std::string &key) const { return std::strtod(attr(key).c_str(), nullptr); }
  // The words of the class attribute include `word`.
  bool is(const std::string &word) const {
    std::string c = " " + attr("class") + " ";
    return c.find(" " + word + " ") != std::string::npos;
  }
};

struct XmlDoc {
  std::vector<XmlElement> elements;  // in document order; 0 is the root

  std::vector<const XmlElement *> all(const std::string &name, const std::string &cls = "") const {
    std::vector<const XmlElement *> out;
    for (const XmlElement &e : elements)
      if (e.name == name && (cls.empty() || e.is(cls))) out.push_back(&e);
    return out;
  }
  // The text of the first <title> child of `e` ("" without one).
  std::string title_of(const XmlElement &e) const {
    for (int c : e.children)
      if (elements[c].name == "title") return elements[c].text;
    return std::string();
  }
  // The element (by index) `e` lies in, or -1.
  const XmlElement *parent_of(const XmlElement &e) const {
    return e.parent >= 0 ? &elements[e.parent] : nullptr;
  }
};

namespace detail {

inline bool valid_utf8(const std::string &s, std::string *why) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) {
      *why = "invalid UTF-8 at byte " + std::to_string(i);
      return false;
    }
    for (size_t k = 1; k < n; k++)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) {
        *why = "invalid UTF-8 at byte " + std::to_string(i);
        return false;
      }
    if (n == 1 && c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
      *why = "control character at byte " + std::to_string(i);
      return false;
    }
    i += n;
  }
  return true;
}

inline bool decode(const std::string &raw, std::string *out, std::string *why) {
  out->clear();
  for (size_t i = 0; i < raw.size(); i++) {
    if (raw[i] == '<') {
      *why = "'<' in text or an attribute";
      return false;
    }
    if (raw[i] != '&') {
      out->push_back(raw[i]);
      continue;
    }
    size_t semi = raw.find(';', i);
    if (semi == std::string::npos) {
      *why = "'&' without ';'";
      return false;
    }
    std::string ent = raw.substr(i + 1, semi - i - 1);
    if (ent == "amp") out->push_back('&');
    else if (ent == "lt") out->push_back('<');
    else if (ent == "gt") out->push_back('>');
    else if (ent == "quot") out->push_back('"');
    else if (ent == "apos") out->push_back('\'');
    else if (ent.size() > 1 && ent[0] == '#') out->append("?");
    else {
      *why = "unknown entity &" + ent + ";";
      return false;
    }
    i = semi;
  }
  return true;
}

inline bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '_' || c == ':' || c == '.';
}

}  // namespace detail

// Parses `text`; false with *why on the first fault.
inline bool parse_xml(const std::string &text, XmlDoc *doc, std::string *why) {
  doc->elements.clear();
  if (!detail::valid_utf8(text, why)) return false;
  size_t i = 0;
  if (text.compare(0, 5, "<?xml") == 0) {
    i = text.find("?>");
    if (i == std::string::npos) {
      *why = "unterminated XML declaration";
      return false;
    }
    i += 2;
  }
  std::vector<int> open;
  bool root_done = false;
  while (i < text.size()) {
    size_t lt = text.find('<', i);
    std::string chunk = text.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    std::string decoded;
    if (!detail::decode(chunk, &decoded, why)) return false;
    if (open.empty()) {
      if (decoded.find_first_not_of(" \t\r\n") != std::string::npos) {
        *why = "text outside the root element";
        return false;
      }
    } else {
      doc->elements[open.back()].text += decoded;
    }
    if (lt == std::string::npos) break;
    i = lt + 1;
    if (i < text.size() && text[i] == '/') {  // a closing tag
      size_t gt = text.find('>', i);
      if (gt == std::string::npos) {
        *why = "unterminated closing tag";
        return false;
      }
      std::string name = text.substr(i + 1, gt - i - 1);
      if (open.empty() || doc->elements[open.back()].name != name) {
        *why = "</" + name + "> closes nothing open";
        return false;
      }
      open.pop_back();
      if (open.empty()) root_done = true;
      i = gt + 1;
      continue;
    }
    if (root_done) {
      *why = "a second root element";
      return false;
    }
    XmlElement e;
    size_t k = i;
    while (k < text.size() && detail::name_char(text[k])) k++;
    e.name = text.substr(i, k - i);
    if (e.name.empty()) {
      *why = "an element without a name at byte " + std::to_string(i);
      return false;
    }
    bool closed = false;
    for (;;) {
      while (k < text.size() && (text[k] == ' ' || text[k] == '\n' || text[k] == '\t')) k++;
      if (k >= text.size()) {
        *why = "unterminated tag <" + e.name;
        return false;
      }
      if (text[k] == '>') {
        k++;
        break;
      }
      if (text.compare(k, 2, "/>") == 0) {
        k += 2;
        closed = true;
        break;
      }
      size_t a = k;
      while (k < text.size() && detail::name_char(text[k])) k++;
      std::string key = text.substr(a, k - a);
      if (key.empty() || k + 1 >= text.size() || text[k] != '=' || text[k + 1] != '"') {
        *why = "a malformed attribute in <" + e.name + ">";
        return false;
      }
      size_t end = text.find('"', k + 2);
      if (end == std::string::npos) {
        *why = "an unterminated attribute in <" + e.name + ">";
        return false;
      }
      std::string value;
      if (!detail::decode(text.substr(k + 2, end - k - 2), &value, why)) return false;
      if (e.attrs.count(key)) {
        *why = "attribute " + key + " twice in <" + e.name + ">";
        return false;
      }
      e.attrs[key] = value;
      k = end + 1;
    }
    int index = static_cast<int>(doc->elements.size());
    e.parent = open.empty() ? -1 : open.back();
    if (e.parent >= 0) doc->elements[e.parent].children.push_back(index);
    doc->elements.push_back(e);
    if (!closed) open.push_back(index);
    else if (open.empty()) root_done = true;
    i = k;
  }
  if (!open.empty()) {
    *why = "<" + doc->elements[open.back()].name + "> is never closed";
    return false;
  }
  if (doc->elements.empty()) {
    *why = "no element";
    return false;
  }
  return true;
}

}  // namespace sgtest
