// Checks shared by the trace tests (host backend and GPU): a launch's records
// cover every node, in the plan's issue order, with positive durations and
// times that respect every edge; a trace file is JSON with the slices
// expected.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "json_check.h"
#include "streamgraph/streamgraph.h"

namespace sgtest {

struct TracedGraph {
  std::vector<sg_node> nodes;
  std::vector<std::pair<uint32_t, uint32_t>> edges;  // node indexes, from -> to
  std::vector<bool> timed;                           // nodes whose duration must be > 0
};

// Times below this apart count as equal: CUDA events resolve about half a
// microsecond, and two events on different streams may read that far apart.
constexpr uint64_t kClockSlackNs = 1000;

// Checks the records of one launch. `what` names the launch in failures.
// `zero_ok`: a timed node may show no time. Graph-mode stamps start a node
// at its predecessors' stamps, which run one launch after them: a short node
// whose own stamp ran before a predecessor's is shown ending where it
// starts (docs/observability.md, "From stamps to times").
inline void check_launch(const sg_plan *plan, const TracedGraph &g, uint64_t launch,
                         const std::vector<sg_trace_record> &rec, uint64_t slack_ns,
                         const std::string &what, bool zero_ok = false) {
  ASSERT_EQ(rec.size(), g.nodes.size()) << what;
  std::vector<uint64_t> start(rec.size()), end(rec.size());
  std::vector<bool> seen(rec.size(), false);
  for (size_t k = 0; k < rec.size(); k++) {
    const sg_trace_record &r = rec[k];
    uint32_t i = sg_node_index(r.node);
    ASSERT_LT(i, rec.size()) << what;
    EXPECT_FALSE(seen[i]) << what << ": node " << i << " twice";
    seen[i] = true;
    EXPECT_EQ(r.launch, launch) << what;
    sg_plan_node_info info;
    ASSERT_EQ(sg_plan_get_node(plan, r.node, &info), SG_OK) << sg_last_error();
    EXPECT_EQ(info.order, k) << what << ": records are in the plan's issue order";
    EXPECT_EQ(r.stream, info.stream) << what << ": node " << i;
    EXPECT_LE(r.start_ns, r.end_ns) << what << ": node " << i;
    if (g.timed[i] && !zero_ok) EXPECT_GT(r.end_ns, r.start_ns) << what << ": node " << i << " took no time";
    start[i] = r.start_ns;
    end[i] = r.end_ns;
  }
  for (auto &e : g.edges)
    EXPECT_GE(start[e.second] + slack_ns, end[e.first])
        << what << ": node " << e.second << " started " << (end[e.first] - start[e.second])
        << " ns before its dependency " << e.first << " ended";
}

// Reads launch `launch` (0: the latest).
inline std::vector<sg_trace_record> records_of(sg_exec *e, uint64_t launch, size_t n) {
  std::vector<sg_trace_record> rec(n);
  size_t count = 0;
  sg_status st = launch ? sg_exec_get_launch_trace(e, launch, rec.data(), n, &count)
                        : sg_exec_get_trace(e, rec.data(), n, &count);
  EXPECT_EQ(st, SG_OK) << sg_last_error();
  EXPECT_EQ(count, n);
  rec.resize(st == SG_OK ? count : 0);
  return rec;
}

// What a trace file holds, by kind of slice.
struct TraceFile {
  Json doc;
  std::vector<const Json *> nodes;    // one per node run
  std::vector<const Json *> launches; // one per launch (cat "launch" or "batch")
  std::vector<const Json *> spans;    // staging copy threads (cat "staging")
  std::map<std::string, int> names;   // process and thread names seen
};

// Parses `path` strictly and sorts its complete events; checks every event
// has the fields Chrome's format requires and times are not negative.
inline bool load_trace(const std::string &path, TraceFile *out, std::string *why) {
  std::string text = read_file(path);
  if (!parse_json(text, &out->doc, why)) return false;
  const Json &events = out->doc["traceEvents"];
  if (events.kind != Json::Array) {
    *why = "no traceEvents array";
    return false;
  }
  for (const Json &ev : events.items) {
    if (!ev.has("ph") || !ev.has("pid") || !ev.has("tid") || !ev.has("name")) {
      *why = "an event lacks ph, pid, tid or name";
      return false;
    }
    if (ev["ph"].str == "M") {
      out->names[ev["args"]["name"].str]++;
      continue;
    }
    if (ev["ph"].str != "X" || !ev.has("ts") || !ev.has("dur") || ev["ts"].num < 0 ||
        ev["dur"].num < 0) {
      *why = "a slice that is not a complete event with ts >= 0 and dur >= 0: " + ev["name"].str;
      return false;
    }
    const std::string &cat = ev["cat"].str;
    if (cat == "launch" || cat == "batch") out->launches.push_back(&ev);
    else if (cat == "staging") out->spans.push_back(&ev);
    else out->nodes.push_back(&ev);
  }
  return true;
}

}  // namespace sgtest
