// Checkers for the library's text outputs, strict enough to be oracles in
// fuzz targets: JSON as RFC 8259 defines it (optionally requiring valid
// UTF-8, as the RFC does for text exchanged between systems), and Graphviz
// DOT as its grammar defines it. Each returns "" when the text is well
// formed, else what is wrong and where.
#ifndef SG_FUZZ_TEXT_CHECK_H
#define SG_FUZZ_TEXT_CHECK_H

#include <cstddef>
#include <string>

namespace sgfuzz {

// The offset of the first byte that does not belong to valid UTF-8 (no
// overlong forms, no surrogates, nothing above U+10FFFF), or `size`.
size_t utf8_invalid_at(const char *text, size_t size);

// One JSON value, with white space around it and nothing else.
std::string json_check(const char *text, size_t size, bool require_utf8);

// One DOT graph ([strict] graph|digraph [ID] { stmt_list }), comments allowed.
// Directed graphs may only use "->", undirected ones only "--".
std::string dot_check(const char *text, size_t size, bool require_utf8);

}  // namespace sgfuzz

#endif
