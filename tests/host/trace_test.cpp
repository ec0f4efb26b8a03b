// Traces on the host backend (both modes): every launch kept, records for
// every node in the plan's order with positive durations and the graph's
// order respected, Chrome trace JSON that a strict parser accepts (whatever
// the node names are), staging copy threads on their own rows, pipelines
// labelled by batch, SG_TRACE_DIR, and failures that come back as statuses.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "json_check.h"
#include "sg_test_util.h"
#include "svg_check.h"
#include "trace_check.h"

namespace {

using sgtest::TracedGraph;

int nothing(void *) { return 0; }

// Busy for about `*(uint64_t *)ns` nanoseconds: every node takes time.
int busy(void *ns) {
  auto until = std::chrono::steady_clock::now() +
               std::chrono::nanoseconds(*static_cast<const uint64_t *>(ns));
  while (std::chrono::steady_clock::now() < until) {
  }
  return 0;
}

std::string temp_path(const std::string &stem) {
  return std::string(::testing::TempDir()) + stem + "-" + std::to_string(getpid()) + ".json";
}

// Two diamonds in a row, 1 -> {2 wide} -> 1 -> {3 wide} -> 1: 8 host nodes.
TracedGraph diamonds(sg_graph *g, const uint64_t *ns) {
  TracedGraph t;
  auto add = [&](const char *name, std::vector<uint32_t> deps) {
    std::vector<sg_node> d;
    for (uint32_t i : deps) {
      d.push_back(t.nodes[i]);
      t.edges.emplace_back(i, uint32_t(t.nodes.size()));
    }
    sg_host_desc h = {busy, const_cast<uint64_t *>(ns), name};
    sg_node n{};
    EXPECT_EQ(sg_graph_add_host(g, &h, d.data(), d.size(), &n), SG_OK) << sg_last_error();
    t.nodes.push_back(n);
    t.timed.push_back(true);
  };
  add("top", {});
  add("left", {0});
  add("right", {0});
  add("join", {1, 2});
  add("a", {3});
  add("b", {3});
  add("c", {3});
  add("bottom", {4, 5, 6});
  return t;
}

class Trace : public ::testing::TestWithParam<sg_exec_mode> {
 protected:
  sg_exec_options options(unsigned keep = 0) const {
    sg_exec_options o = sgtest::host_options();
    o.mode = GetParam();
    o.trace = 1;
    o.trace_launches = keep;
    return o;
  }
};

INSTANTIATE_TEST_SUITE_P(Modes, Trace, ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                         [](const ::testing::TestParamInfo<sg_exec_mode> &i) {
                           return std::string(i.param == SG_MODE_GRAPH ? "graph" : "streams");
                         });

// Several launches queued at once: each launch is kept with its own times.
TEST_P(Trace, EveryLaunchQueuedAheadIsKeptInOrder) {
  sgtest::LeakCheck leaks;
  const uint64_t ns = 200000;
  sgtest::Graph g;
  TracedGraph t = diamonds(g, &ns);
  sg_exec_options o = options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  const int launches = 5;
  for (int i = 0; i < launches; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  uint64_t previous_end = 0;
  for (uint64_t l = 1; l <= launches; l++) {
    std::vector<sg_trace_record> rec = sgtest::records_of(e, l, t.nodes.size());
    sgtest::check_launch(plan, t, l, rec, 0, "launch " + std::to_string(l));
    uint64_t first = UINT64_MAX, last = 0;
    for (auto &r : rec) {
      first = std::min(first, r.launch_start_ns + r.start_ns);
      last = std::max(last, r.launch_start_ns + r.end_ns);
      EXPECT_EQ(r.launch_start_ns, rec[0].launch_start_ns);
    }
    // Launches of one executable run one after the other.
    EXPECT_GE(first, previous_end) << "launch " << l << " overlaps the one before";
    previous_end = last;
  }
  // The latest launch is the default.
  std::vector<sg_trace_record> latest = sgtest::records_of(e, 0, t.nodes.size());
  ASSERT_FALSE(latest.empty());
  EXPECT_EQ(latest[0].launch, uint64_t(launches));
}

// Only the last trace_launches launches are kept; others are refused with a
// message saying which are.
TEST_P(Trace, OlderLaunchesAreDroppedAndSaySo) {
  sgtest::LeakCheck leaks;
  const uint64_t ns = 1000;
  sgtest::Graph g;
  TracedGraph t = diamonds(g, &ns);
  sg_exec_options o = options(3);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  std::vector<sg_trace_record> rec(t.nodes.size());
  size_t count = 0;
  EXPECT_EQ(sg_exec_get_trace(e, rec.data(), rec.size(), &count), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("not been launched"), std::string::npos)
      << sg_last_error();
  for (int i = 0; i < 6; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  for (uint64_t l = 1; l <= 3; l++) {
    EXPECT_EQ(sg_exec_get_launch_trace(e, l, rec.data(), rec.size(), &count),
              SG_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(sg_last_error()).find("launches 4 to 6"), std::string::npos)
        << sg_last_error();
  }
  for (uint64_t l = 4; l <= 6; l++)
    SG_EXPECT_OK(sg_exec_get_launch_trace(e, l, rec.data(), rec.size(), &count));
  EXPECT_EQ(sg_exec_get_launch_trace(e, 7, rec.data(), rec.size(), &count),
            SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_exec_get_launch_trace(e, 0, rec.data(), rec.size(), &count),
            SG_ERR_INVALID_ARGUMENT);
  // Capacity: fewer records than nodes fills what fits, and counts them all.
  SG_EXPECT_OK(sg_exec_get_trace(e, rec.data(), 2, &count));
  EXPECT_EQ(count, t.nodes.size());
  SG_EXPECT_OK(sg_exec_get_trace(e, nullptr, 0, &count));
  EXPECT_EQ(sg_exec_get_trace(e, nullptr, 2, &count), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_exec_get_trace(e, rec.data(), 2, nullptr), SG_ERR_INVALID_ARGUMENT);
}

TEST_P(Trace, NeedsTheOption) {
  sgtest::Graph g;
  sg_host_desc h = {nothing, nullptr, "n"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o = options();
  o.trace = 0;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  sg_trace_record r;
  size_t count = 0;
  EXPECT_EQ(sg_exec_get_trace(e, &r, 1, &count), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("without `trace`"), std::string::npos);
  EXPECT_EQ(sg_exec_write_trace(e, temp_path("none").c_str()), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_exec_write_trace(e, nullptr), SG_ERR_INVALID_ARGUMENT);
}

// The JSON file: one slice per node per kept launch, one per launch, rows
// named after the streams, slices of a launch inside its launch slice.
TEST_P(Trace, ChromeJsonHasEveryLaunchAndNode) {
  sgtest::LeakCheck leaks;
  const uint64_t ns = 50000;
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_set_name(g, "diamonds"));
  TracedGraph t = diamonds(g, &ns);
  sg_exec_options o = options(4);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 6; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  std::string path = temp_path("chrome");
  SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
  sgtest::TraceFile f;
  std::string why;
  ASSERT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
  std::remove(path.c_str());
  EXPECT_EQ(f.nodes.size(), 4 * t.nodes.size());
  ASSERT_EQ(f.launches.size(), 4u);
  EXPECT_TRUE(f.spans.empty());
  EXPECT_EQ(f.names.count("'diamonds'"), 1u);
  EXPECT_EQ(f.names.count("launches"), 1u);
  EXPECT_EQ(f.names.count("stream 0"), 1u);
  std::set<double> kept;
  for (const sgtest::Json *l : f.launches) {
    double launch = (*l)["args"]["launch"].num;
    kept.insert(launch);
    EXPECT_EQ((*l)["name"].str, "launch " + std::to_string(int(launch)));
    double from = (*l)["ts"].num, to = from + (*l)["dur"].num;
    int inside = 0;
    for (const sgtest::Json *n : f.nodes) {
      if ((*n)["args"]["launch"].num != launch) continue;
      inside++;
      EXPECT_GE((*n)["ts"].num + 0.001, from);
      EXPECT_LE((*n)["ts"].num + (*n)["dur"].num, to + 0.001);
      EXPECT_GT((*n)["dur"].num, 0);
    }
    EXPECT_EQ(inside, int(t.nodes.size())) << "launch " << launch;
  }
  EXPECT_EQ(kept, (std::set<double>{3, 4, 5, 6}));
}

// Defect 6 (issue 17): names were copied byte for byte, so a name that is not
// UTF-8 (or holds control characters) made the trace invalid JSON and the
// DOT ill-formed. Now every name is escaped and repaired (U+FFFD).
TEST(TraceJson, Defect6_NonUtf8NamesKeepTraceJsonAndDotValid) {
  const char *names[] = {"bad\xff\xfe", "trunc\xc3", "surrogate\xed\xa0\x80",
                         "quote\"back\\slash", "ctl\x01\n\t", "ok \xc3\xa9"};
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_set_name(g, "graph\xc0\xaf"));
  sg_node prev{};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    sg_host_desc h = {nothing, nullptr, names[i]};
    SG_ASSERT_OK(sg_graph_add_host(g, &h, i ? &prev : nullptr, i ? 1 : 0, &prev));
  }
  sg_exec_options o = sgtest::host_options();
  o.trace = 1;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::string path = temp_path("defect6");
  SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
  std::string text = sgtest::read_file(path);
  std::remove(path.c_str());
  sgtest::Json doc;
  std::string why;
  ASSERT_TRUE(sgtest::parse_json(text, &doc, &why)) << why << "\n" << text;
  std::string all_names;
  for (const sgtest::Json &ev : doc["traceEvents"].items) all_names += ev["name"].str + "|";
  EXPECT_NE(all_names.find("bad\xef\xbf\xbd\xef\xbf\xbd"), std::string::npos) << all_names;
  EXPECT_NE(all_names.find("quote\"back\\slash"), std::string::npos) << all_names;
  EXPECT_NE(all_names.find("ctl\x01\n\t"), std::string::npos) << all_names;
  EXPECT_NE(all_names.find("ok \xc3\xa9"), std::string::npos) << all_names;

  char *dot = nullptr;
  SG_ASSERT_OK(sg_graph_to_dot(g, &dot));
  std::string graph_dot = dot;
  sg_free(dot);
  EXPECT_TRUE(sgtest::check_dot(graph_dot, &why)) << why << "\n" << graph_dot;
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
  std::string plan_dot = dot;
  sg_free(dot);
  EXPECT_TRUE(sgtest::check_dot(plan_dot, &why)) << why << "\n" << plan_dot;
}

// A staged copy's host-side work (the copy threads filling pinned chunks)
// is on rows of its own, one slice per part of a chunk, inside the copy
// node's own time.
TEST_P(Trace, StagingCopyThreadsHaveTheirOwnRows) {
  const size_t bytes = 8u << 20;
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_HOST;
  po.max_bytes = 64u << 20;
  sg_pinned_pool *pool = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
  std::vector<uint8_t> host(bytes);
  for (size_t i = 0; i < bytes; i++) host[i] = uint8_t(i * 13 + 1);
  void *dev = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, bytes, &dev));
  {
    sgtest::Graph g;
    sg_copy_desc c = {dev, host.data(), bytes, SG_COPY_HOST_TO_DEVICE, "upload"};
    sg_node up;
    SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &up));
    sg_exec_options o = options();
    o.staging.policy = SG_STAGING_STAGE;
    o.staging.pool = pool;
    o.staging.chunk_bytes = 1u << 20;
    o.staging.copy_threads = 2;
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(std::memcmp(dev, host.data(), bytes), 0);
    std::vector<sg_trace_record> rec = sgtest::records_of(e, 0, 1);
    ASSERT_EQ(rec.size(), 1u);
    std::string path = temp_path("staging");
    SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
    sgtest::TraceFile f;
    std::string why;
    ASSERT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
    std::remove(path.c_str());
    ASSERT_EQ(f.nodes.size(), 1u);
    EXPECT_EQ(f.names.count("host: staging copies"), 1u);
    std::set<double> chunks;
    uint64_t copied = 0;
    const double node_from = (*f.nodes[0])["ts"].num;
    const double node_to = node_from + (*f.nodes[0])["dur"].num;
    for (const sgtest::Json *s : f.spans) {
      chunks.insert((*s)["args"]["chunk"].num);
      copied += uint64_t((*s)["args"]["bytes"].num);
      EXPECT_EQ((*s)["name"].str.rfind("fill upload chunk ", 0), 0u) << (*s)["name"].str;
      EXPECT_GE((*s)["ts"].num + 0.001, node_from);
      EXPECT_LE((*s)["ts"].num + (*s)["dur"].num, node_to + 0.001);
    }
    EXPECT_EQ(chunks.size(), 8u) << "8 chunks of 1 MiB";
    EXPECT_EQ(copied, bytes) << "the spans cover every byte once";
    bool named = false;
    for (auto &n : f.names)
      named |= n.first.find("copy thread") == 0 || n.first.find("waiting thread") == 0;
    EXPECT_TRUE(named);
  }
  SG_EXPECT_OK(sg_mem_free(dev));
  SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
}

// A new topology starts the trace again: the kept launches named the old
// nodes.
TEST_P(Trace, UpdateWithANewTopologyStartsAgain) {
  sgtest::LeakCheck leaks;
  const uint64_t ns = 1000;
  sgtest::Graph g;
  TracedGraph t = diamonds(g, &ns);
  sg_exec_options o = options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  sg_host_desc h = {busy, const_cast<uint64_t *>(&ns), "extra"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &t.nodes.back(), 1, nullptr));
  SG_ASSERT_OK(sg_exec_update(e, g));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  std::vector<sg_trace_record> rec(t.nodes.size() + 1);
  size_t count = 0;
  EXPECT_EQ(sg_exec_get_launch_trace(e, 2, rec.data(), rec.size(), &count),
            SG_ERR_INVALID_ARGUMENT);
  SG_ASSERT_OK(sg_exec_get_launch_trace(e, 3, rec.data(), rec.size(), &count));
  EXPECT_EQ(count, t.nodes.size() + 1);
  EXPECT_EQ(rec[0].launch, 3u);
}

// An empty graph traces as a launch with no nodes.
TEST_P(Trace, EmptyGraph) {
  sgtest::Graph g;
  sg_exec_options o = options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  size_t count = 1;
  SG_ASSERT_OK(sg_exec_get_trace(e, nullptr, 0, &count));
  EXPECT_EQ(count, 0u);
  std::string path = temp_path("empty");
  SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
  sgtest::TraceFile f;
  std::string why;
  EXPECT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
  std::remove(path.c_str());
}

// Every allocation of tracing (the trace, the writer's buffer) may fail:
// the failure is a status, nothing leaks, and the executable still works.
TEST_P(Trace, AllocationFailuresAreStatuses) {
  const uint64_t ns = 1000;
  sgtest::Graph g;
  TracedGraph t = diamonds(g, &ns);
  std::string path = temp_path("faults");
  for (unsigned long nth = 1; nth < 2000; nth++) {
    SCOPED_TRACE("fault " + std::to_string(nth));
    sgtest::LeakCheck leaks;
    sg_exec_options o = options(2);
    sg_exec *e = nullptr;
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_status st = sg_exec_create(g, &o, &e);
    if (st == SG_OK) {
      st = sg_exec_launch(e, nullptr);
      if (st == SG_OK) st = sg_exec_wait(e);
      if (st == SG_OK) st = sg_exec_write_trace(e, path.c_str());
    }
    int fired = sg_fault_fired();
    const std::string site = "allocation " + std::to_string(nth);
    sg_fault_arm(0, 0);
    if (e) SG_EXPECT_OK(sg_exec_destroy(e));
    if (!fired) {
      EXPECT_EQ(st, SG_OK) << sg_last_error();
      break;
    }
    EXPECT_NE(st, SG_OK) << "fault at " << site << " fired but the calls succeeded";
    EXPECT_STRNE(sg_last_error(), "") << "fault at " << site;
  }
  std::remove(path.c_str());
}

// A pipeline's trace: every instance on one timeline, launches labelled by
// batch.
TEST(PipelineTrace, BatchesAreLabelledOnOneTimeline) {
  sgtest::LeakCheck leaks;
  const uint64_t ns = 100000;
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_set_name(g, "batches"));
  TracedGraph t = diamonds(g, &ns);
  sg_pipeline_options po;
  sg_pipeline_options_init(&po);
  po.depth = 2;
  po.exec.backend = SG_BACKEND_HOST;
  po.exec.trace = 1;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
  const int batches = 6;
  for (int b = 0; b < batches; b++) SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr));
  std::string path = temp_path("pipeline");
  SG_ASSERT_OK(sg_pipeline_write_trace(p, path.c_str()));
  SG_ASSERT_OK(sg_pipeline_drain(p));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  sgtest::TraceFile f;
  std::string why;
  ASSERT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
  std::remove(path.c_str());
  EXPECT_EQ(f.nodes.size(), batches * t.nodes.size());
  ASSERT_EQ(f.launches.size(), size_t(batches));
  std::set<double> seen;
  for (const sgtest::Json *l : f.launches) {
    double batch = (*l)["args"]["batch"].num;
    seen.insert(batch);
    EXPECT_EQ((*l)["name"].str, "batch " + std::to_string(int(batch)));
    EXPECT_EQ((*l)["pid"].num, 1 + double(int(batch) % 2)) << "batch b on instance b % depth";
  }
  EXPECT_EQ(seen.size(), size_t(batches));
  EXPECT_EQ(f.names.count("instance 0 of 2 ('batches')"), 1u);
  EXPECT_EQ(f.names.count("instance 1 of 2 ('batches')"), 1u);
  EXPECT_EQ(f.names["batches"], 2);  // the launch row of each instance

  // Without tracing: a clear refusal.
  po.exec.trace = 0;
  SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
  EXPECT_EQ(sg_pipeline_write_trace(p, path.c_str()), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_pipeline_write_trace(nullptr, path.c_str()), SG_ERR_INVALID_ARGUMENT);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// SG_TRACE_DIR: any program's executables and pipelines write their graph,
// plan and trace when destroyed, without a change to the program.
TEST(TraceDir, ExecutablesAndPipelinesWriteTheirFiles) {
  std::string dir = std::string(::testing::TempDir()) + "sg_trace_dir_" + std::to_string(getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(setenv("SG_TRACE_DIR", dir.c_str(), 1), 0);
  const uint64_t ns = 1000;
  {
    sgtest::Graph g;
    SG_ASSERT_OK(sg_graph_set_name(g, "dumped graph"));
    diamonds(g, &ns);
    sg_exec_options o = sgtest::host_options();  // trace not asked for
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    sg_pipeline_options po;
    sg_pipeline_options_init(&po);
    po.depth = 2;
    po.exec.backend = SG_BACKEND_HOST;
    sg_pipeline *p = nullptr;
    SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
    for (int b = 0; b < 3; b++) SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr));
    SG_ASSERT_OK(sg_pipeline_drain(p));
    SG_ASSERT_OK(sg_pipeline_destroy(p));
  }
  unsetenv("SG_TRACE_DIR");
  // The executable was the first dump, the pipeline the second.
  std::string stem1 = dir + "/dumped_graph-", stem2 = stem1;
  std::vector<std::string> files;
  FILE *ls = popen(("ls " + dir).c_str(), "r");
  ASSERT_NE(ls, nullptr);
  char line[512];
  while (fgets(line, sizeof line, ls)) {
    std::string s(line);
    s.erase(s.find_last_not_of('\n') + 1);
    files.push_back(s);
  }
  pclose(ls);
  int graph_dots = 0, plan_dots = 0, traces = 0, pipeline_traces = 0;
  int plan_svgs = 0, trace_svgs = 0, pipeline_svgs = 0;
  for (const std::string &name : files) {
    std::string path = dir + "/" + name, why;
    EXPECT_EQ(name.rfind("dumped_graph-", 0), 0u) << name;
    if (name.find(".graph.dot") != std::string::npos ||
        name.find(".plan.dot") != std::string::npos) {
      (name.find(".graph.dot") != std::string::npos ? graph_dots : plan_dots)++;
      EXPECT_TRUE(sgtest::check_dot(sgtest::read_file(path), &why)) << name << ": " << why;
    } else if (name.find(".trace.json") != std::string::npos) {
      (name.find(".pipeline.trace.json") != std::string::npos ? pipeline_traces : traces)++;
      sgtest::TraceFile f;
      EXPECT_TRUE(sgtest::load_trace(path, &f, &why)) << name << ": " << why;
      EXPECT_FALSE(f.nodes.empty()) << name;
    } else if (name.find(".svg") != std::string::npos) {
      bool plan = name.find(".plan.svg") != std::string::npos;
      (plan ? plan_svgs : name.find(".pipeline.trace.svg") != std::string::npos ? pipeline_svgs
                                                                                 : trace_svgs)++;
      sgtest::XmlDoc doc;
      EXPECT_TRUE(sgtest::parse_xml(sgtest::read_file(path), &doc, &why)) << name << ": " << why;
      EXPECT_FALSE(doc.all(plan ? "g" : "rect", plan ? "node" : "span").empty()) << name;
    } else {
      ADD_FAILURE() << "unexpected file " << name;
    }
    std::remove(path.c_str());
  }
  rmdir(dir.c_str());
  EXPECT_EQ(graph_dots, 2);
  EXPECT_EQ(plan_dots, 2);
  EXPECT_EQ(traces, 1) << "the executable's; the pipeline's instances write none of their own";
  EXPECT_EQ(pipeline_traces, 1);
  EXPECT_EQ(plan_svgs, 2);
  EXPECT_EQ(trace_svgs, 1);
  EXPECT_EQ(pipeline_svgs, 1);
}

}  // namespace
