// Fuzz target: the environment and the text outputs.
//
// Environment: CUDA_DEVICE_MAX_CONNECTIONS and SG_BACKEND set to arbitrary
// bytes; the default stream limit must be the number when the text is a
// plain positive decimal number and 8 otherwise; SG_BACKEND must never pick
// a backend that is not there.
// Text: graphs whose node names are arbitrary bytes (quotes, backslashes,
// control characters, invalid UTF-8, up to the length limit), planned and
// traced on the host backend: the plan's DOT must be well-formed DOT, the
// trace must be one valid JSON document with one slice per node.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "eq_model.h"
#include "fuzz_expectations.h"
#include "streamgraph/streamgraph.h"
#include "streamgraph/testing.h"
#include "text_check.h"

namespace {

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "fuzz_text: check failed: %s: ", #cond);   \
      std::fprintf(stderr, __VA_ARGS__);                              \
      std::fprintf(stderr, "\n  last error: %s\n", sg_last_error());  \
      std::abort();                                                   \
    }                                                                 \
  } while (0)

std::string take_text(sgeq::BytesChooser &in, size_t most) {
  std::string s;
  size_t len = in.below(most + 1);
  for (size_t i = 0; i < len; i++) {
    char c = static_cast<char>(in.below(256));
    if (!c) break;
    s.push_back(c);
  }
  return s;
}

// The limit a strict reading of the variable gives: digits only, 1..UINT_MAX.
unsigned strict_limit(const std::string &text) {
  if (text.empty()) return 8;
  unsigned long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 8;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > UINT_MAX) return 8;  // leading zeros are fine; a value past UINT_MAX is not
  }
  return v >= 1 && v <= UINT_MAX ? static_cast<unsigned>(v) : 8;
}

unsigned planned_limit() {
  sg_graph *g = nullptr;
  CHECK(sg_graph_create(&g) == SG_OK, "sg_graph_create");
  CHECK(sg_graph_add_empty(g, nullptr, nullptr, 0, nullptr) == SG_OK, "add");
  sg_plan *p = nullptr;
  CHECK(sg_plan_create(g, 0, &p) == SG_OK, "sg_plan_create");
  sg_plan_summary s;
  CHECK(sg_plan_get_summary(p, &s) == SG_OK, "summary");
  sg_plan_destroy(p);
  sg_graph_destroy(g);
  return s.max_streams;
}

void environment(sgeq::BytesChooser &in) {
  std::string text = take_text(in, 24);
  if (in.below(4) == 0) text = std::string(" \t+-0"[in.below(5)], 1) + text;
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", text.c_str(), 1);
  unsigned got = planned_limit();
  CHECK(got >= 1, "a stream limit of 0 from \"%s\"", text.c_str());
  if (SG_FUZZ_CHECK_ENV)
    CHECK(got == strict_limit(text), "CUDA_DEVICE_MAX_CONNECTIONS=\"%s\" gave %u, expected %u",
          text.c_str(), got, strict_limit(text));
  unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");

  std::string backend = in.below(3) ? take_text(in, 8) : "host";
  setenv("SG_BACKEND", backend.c_str(), 1);
  sg_backend b = sg_backend_resolve(SG_BACKEND_AUTO);
  // Without CUDA: "host", "auto" and "" are the host backend; anything else
  // ("cuda" included) cannot be honoured and answers AUTO, to be refused.
  std::string set = backend.c_str();  // what setenv saw (up to a NUL)
  bool honoured = set == "host" || set == "auto" || set.empty();
  CHECK(b == (honoured ? SG_BACKEND_HOST : SG_BACKEND_AUTO),
        "SG_BACKEND=\"%s\" resolved to %d without CUDA", backend.c_str(), (int)b);
  CHECK(sg_backend_resolve(SG_BACKEND_HOST) == SG_BACKEND_HOST, "explicit host");
  unsetenv("SG_BACKEND");
}

int nothing(void *) { return 0; }

std::string read_file(const char *path) {
  std::string s;
  FILE *f = std::fopen(path, "rb");
  if (!f) return s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

void text_outputs(sgeq::BytesChooser &in) {
  sg_graph *g = nullptr;
  CHECK(sg_graph_create(&g) == SG_OK, "sg_graph_create");
  uint32_t n = 1 + in.below(16);
  std::vector<sg_node> nodes(n);
  for (uint32_t v = 0; v < n; v++) {
    std::string name = in.below(8) ? take_text(in, 40) : std::string(255, "\"\\\n\x80"[in.below(4)]);
    const char *nm = in.below(8) ? name.c_str() : nullptr;
    std::vector<sg_node> deps;
    for (uint32_t u = 0; u < v; u++)
      if (in.below(4) == 0) deps.push_back(nodes[u]);
    sg_status st = in.below(2) ? sg_graph_add_empty(g, nm, deps.data(), deps.size(), &nodes[v])
                               : [&] {
                                   sg_host_desc h = {nothing, nullptr, nm};
                                   return sg_graph_add_host(g, &h, deps.data(), deps.size(),
                                                            &nodes[v]);
                                 }();
    CHECK(st == SG_OK, "adding node %u", v);
  }
  unsigned limit = in.below(5);
  sg_plan *p = nullptr;
  CHECK(sg_plan_create(g, limit, &p) == SG_OK, "sg_plan_create");
  char *dot = nullptr;
  CHECK(sg_plan_to_dot(p, &dot) == SG_OK && dot, "sg_plan_to_dot");
  std::string bad = sgfuzz::dot_check(dot, std::strlen(dot), SG_FUZZ_CHECK_UTF8);
  CHECK(bad.empty(), "DOT: %s\n%s", bad.c_str(), dot);
  sg_free(dot);
  sg_plan_destroy(p);

  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.mode = in.below(2) ? SG_MODE_GRAPH : SG_MODE_STREAMS;
  o.max_streams = limit;
  o.trace = 1;
  sg_exec *e = nullptr;
  CHECK(sg_exec_create(g, &o, &e) == SG_OK, "sg_exec_create");
  CHECK(sg_exec_launch(e, nullptr) == SG_OK, "launch");
  CHECK(sg_exec_wait(e) == SG_OK, "wait");
  std::vector<sg_trace_record> rec(n);
  size_t count = 0;
  CHECK(sg_exec_get_trace(e, rec.data(), rec.size(), &count) == SG_OK && count == n, "trace");
  char path[64];
  std::snprintf(path, sizeof path, "/tmp/sg_fuzz_trace_%d.json", static_cast<int>(getpid()));
  CHECK(sg_exec_write_trace(e, path) == SG_OK, "sg_exec_write_trace");
  std::string json = read_file(path);
  std::remove(path);
  bad = sgfuzz::json_check(json.data(), json.size(), SG_FUZZ_CHECK_UTF8);
  CHECK(bad.empty(), "trace JSON: %s\n%s", bad.c_str(), json.c_str());
  size_t slices = 0;
  for (size_t at = json.find("\"ph\":\"X\""); at != std::string::npos;
       at = json.find("\"ph\":\"X\"", at + 1))
    slices++;
  // One slice per node, plus one for the launch as a whole (on its own row).
  size_t launches = 0;
  for (size_t at = json.find("\"cat\":\"launch\""); at != std::string::npos;
       at = json.find("\"cat\":\"launch\"", at + 1))
    launches++;
  CHECK(launches == (n ? 1u : 0u), "%zu launch slices for one launch of %u nodes", launches, n);
  CHECK(slices == n + launches, "%zu slices for %u nodes", slices, n);
  CHECK(sg_exec_destroy(e) == SG_OK, "destroy");
  sg_graph_destroy(g);
}

long baseline = -1;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (baseline < 0) baseline = sg_live_allocations();
  sgeq::BytesChooser in(data, size);
  if (in.below(2)) environment(in);
  else text_outputs(in);
  long live = sg_live_allocations();
  CHECK(live == baseline, "%ld library allocations live, %ld before", live, baseline);
  return 0;
}
