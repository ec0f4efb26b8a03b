// Text the library writes: names made safe for JSON and DOT (UTF-8
// repaired, escapes), graph names, the graph's DOT, the version.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

extern "C" {
#include "core/text.h"
}
#include "json_check.h"
#include "sg_test_util.h"

namespace {

std::string json_of(const char *name) {
  sg__text t = {};
  sg__text_json(&t, name);
  char *s = sg__text_take(&t);
  std::string out = s ? s : "<failed>";
  sg_free(s);
  return out;
}

std::string dot_of(const char *name) {
  sg__text t = {};
  sg__text_dot(&t, name);
  char *s = sg__text_take(&t);
  std::string out = s ? s : "<failed>";
  sg_free(s);
  return out;
}

size_t seq(const char *bytes) {
  return sg__utf8_sequence(reinterpret_cast<const unsigned char *>(bytes), strlen(bytes));
}

TEST(Utf8, WellFormedSequencesAreKept) {
  EXPECT_EQ(seq("a"), 1u);
  EXPECT_EQ(seq("\xc3\xa9"), 2u);          // é
  EXPECT_EQ(seq("\xe2\x82\xac"), 3u);      // €
  EXPECT_EQ(seq("\xf0\x9f\x98\x80"), 4u);  // U+1F600
  EXPECT_EQ(seq("\xf4\x8f\xbf\xbf"), 4u);  // U+10FFFF
  EXPECT_EQ(seq("\xed\x9f\xbf"), 3u);      // U+D7FF, just below the surrogates
}

TEST(Utf8, MalformedSequencesAreRefused) {
  EXPECT_EQ(seq("\x80"), 0u);              // a continuation byte alone
  EXPECT_EQ(seq("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(seq("\xc1\xbf"), 0u);          // overlong
  EXPECT_EQ(seq("\xe0\x80\xaf"), 0u);      // overlong, three bytes
  EXPECT_EQ(seq("\xf0\x80\x80\xaf"), 0u);  // overlong, four bytes
  EXPECT_EQ(seq("\xed\xa0\x80"), 0u);      // U+D800, a surrogate
  EXPECT_EQ(seq("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(seq("\xf5\x80\x80\x80"), 0u);
  EXPECT_EQ(seq("\xff"), 0u);
  EXPECT_EQ(seq("\xc3"), 0u);              // truncated
  EXPECT_EQ(seq("\xe2\x82"), 0u);          // truncated
  EXPECT_EQ(seq("\xe2(\xac"), 0u);         // a non-continuation inside
}

TEST(TextJson, EscapesAndRepairs) {
  EXPECT_EQ(json_of("plain"), "plain");
  EXPECT_EQ(json_of("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(json_of("tab\tnl\n"), "tab\\u0009nl\\u000a");
  EXPECT_EQ(json_of("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(json_of("bad\xff!"), "bad\xef\xbf\xbd!");
  EXPECT_EQ(json_of("\xc3"), "\xef\xbf\xbd");
  EXPECT_EQ(json_of("\xed\xa0\x80x"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx");
}

TEST(TextDot, EscapesAndRepairs) {
  EXPECT_EQ(dot_of("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(dot_of("two\nlines\x7f"), "two lines ");
  EXPECT_EQ(dot_of("\xfe\xc3\xa9"), "\xef\xbf\xbd\xc3\xa9");
}

TEST(TextBuffer, GrowsPastItsFirstBlock) {
  sg__text t = {};
  std::string want;
  for (int i = 0; i < 2000; i++) {
    sg__text_printf(&t, "%d,", i);
    want += std::to_string(i) + ",";
  }
  ASSERT_FALSE(t.failed);
  EXPECT_EQ(std::string(t.data, t.len), want);
  sg__text_free(&t);
}

TEST(GraphName, SetGetAndLimits) {
  sgtest::Graph g;
  const char *name = "x";
  SG_ASSERT_OK(sg_graph_get_name(g, &name));
  EXPECT_EQ(name, nullptr);
  SG_ASSERT_OK(sg_graph_set_name(g, "resnet block"));
  SG_ASSERT_OK(sg_graph_get_name(g, &name));
  EXPECT_STREQ(name, "resnet block");
  std::string long_name(SG_MAX_NAME_BYTES + 1, 'n');
  EXPECT_EQ(sg_graph_set_name(g, long_name.c_str()), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("sg_graph_set_name"), std::string::npos);
  SG_ASSERT_OK(sg_graph_get_name(g, &name));
  EXPECT_STREQ(name, "resnet block");  // a refused name leaves the old one
  SG_ASSERT_OK(sg_graph_set_name(g, nullptr));
  SG_ASSERT_OK(sg_graph_get_name(g, &name));
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(sg_graph_set_name(nullptr, "x"), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_graph_get_name(g, nullptr), SG_ERR_INVALID_ARGUMENT);
}

int nothing(void *) { return 0; }

TEST(GraphDot, EveryNodeAndEdgeAppears) {
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_set_name(g, "my \"graph\""));
  static char a[64], b[64];
  sg_copy_desc c = {b, a, sizeof a, SG_COPY_HOST_TO_HOST, "copy"};
  sg_host_desc h = {nothing, nullptr, "host"};
  sg_node n0, n1, n2;
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &n0));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &n0, 1, &n1));
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, &n0, 1, &n2));
  SG_ASSERT_OK(sg_graph_add_edge(g, n1, n2));
  char *dot = nullptr;
  SG_ASSERT_OK(sg_graph_to_dot(g, &dot));
  std::string text = dot;
  sg_free(dot);
  std::string why;
  EXPECT_TRUE(sgtest::check_dot(text, &why)) << why << "\n" << text;
  EXPECT_NE(text.find("label=\"my \\\"graph\\\"\""), std::string::npos) << text;
  EXPECT_NE(text.find("n0 [shape=cds, label=\"copy\\ncopy #0\\nhost->host 64 B\"]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("n1 [shape=hexagon"), std::string::npos);
  EXPECT_NE(text.find("n2 [shape=ellipse, label=\"#2\\nempty #2\""), std::string::npos) << text;
  EXPECT_NE(text.find("n0 -> n1;"), std::string::npos);
  EXPECT_NE(text.find("n0 -> n2;"), std::string::npos);
  EXPECT_NE(text.find("n1 -> n2;"), std::string::npos);
  EXPECT_EQ(sg_graph_to_dot(g, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_graph_to_dot(nullptr, &dot), SG_ERR_INVALID_ARGUMENT);
}

TEST(GraphDot, OutOfMemoryIsAStatus) {
  sgtest::Graph g;
  sg_host_desc h = {nothing, nullptr, "host"};
  for (int i = 0; i < 50; i++) SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  long before = sg_live_allocations();
  for (unsigned long nth = 1;; nth++) {
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    char *dot = nullptr;
    sg_status st = sg_graph_to_dot(g, &dot);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    if (!fired) {
      ASSERT_EQ(st, SG_OK);
      sg_free(dot);
      break;
    }
    ASSERT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "fault " << nth;
    EXPECT_EQ(dot, nullptr);
    EXPECT_EQ(sg_live_allocations(), before) << "fault " << nth;
  }
}

TEST(Version, MacrosAndLibraryAgree) {
  EXPECT_EQ(sg_version(), static_cast<unsigned>(SG_VERSION));
  EXPECT_STREQ(sg_version_string(), SG_VERSION_STRING);
  EXPECT_EQ(SG_VERSION, SG_VERSION_MAJOR * 10000 + SG_VERSION_MINOR * 100 + SG_VERSION_PATCH);
  std::string parts = std::to_string(SG_VERSION_MAJOR) + "." + std::to_string(SG_VERSION_MINOR) +
                      "." + std::to_string(SG_VERSION_PATCH);
  EXPECT_EQ(parts, SG_VERSION_STRING);
}

}  // namespace
