// The pictures the library draws itself, read back and checked against what
// they show: the trace timeline (sg_exec_write_trace_svg,
// sg_pipeline_write_trace_svg) against the trace's records - its lanes, one
// bar per node run with the node's name, launch and exact times, copies
// again on their direction's lane, launches told apart, overlaps stacked -
// and the plan (sg_plan_to_svg, sg_plan_write_svg) against sg_plan_get_*.
// Both must be well-formed XML whatever the node names are.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"
#include "svg_check.h"
#include "trace_check.h"

namespace {

int busy(void *ns) {
  auto until = std::chrono::steady_clock::now() +
               std::chrono::nanoseconds(*static_cast<const uint64_t *>(ns));
  while (std::chrono::steady_clock::now() < until) {
  }
  return 0;
}

std::string temp_path(const std::string &stem) {
  return std::string(::testing::TempDir()) + stem + "-" + std::to_string(getpid()) + ".svg";
}

sgtest::XmlDoc load(const std::string &path) {
  sgtest::XmlDoc doc;
  std::string why;
  EXPECT_TRUE(sgtest::parse_xml(sgtest::read_file(path), &doc, &why)) << path << ": " << why;
  return doc;
}

// Names a test can find in a title once entities are decoded; one has
// markup characters, one a byte that is not UTF-8 (drawn as U+FFFD).
const char *const kNames[] = {"upload <a> & \"b\"", "upload b", "work 'a'", "work b",
                              "mix", "download \xff"};
const char *const kShown[] = {"upload <a> & \"b\"", "upload b", "work 'a'", "work b",
                              "mix", "download \xef\xbf\xbd"};

// The demo's shape: two uploads, a kernel on each, a host node joining
// them, a download. Host-backend memory, pageable host buffers.
struct Diamond {
  std::vector<uint32_t> in_a, in_b, out;
  void *dev = nullptr;
  std::vector<sg_node> nodes;
  uint64_t ns = 300000;

  explicit Diamond(sg_graph *g, size_t n = 1 << 14) : in_a(n, 1), in_b(n, 2), out(n) {
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 2 * n * 4, &dev), SG_OK);
    uint32_t *a = static_cast<uint32_t *>(dev), *b = a + n;
    nodes.resize(6);
    sg_copy_desc c = {a, in_a.data(), n * 4, SG_COPY_AUTO, kNames[0]};
    EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, &nodes[0]), SG_OK) << sg_last_error();
    c = {b, in_b.data(), n * 4, SG_COPY_AUTO, kNames[1]};
    EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, &nodes[1]), SG_OK) << sg_last_error();
    sg_kernel_call k;
    sg_kernels_work_u32(&k, a, n, 64);
    k.desc.name = kNames[2];
    EXPECT_EQ(sg_graph_add_kernel(g, &k.desc, &nodes[0], 1, &nodes[2]), SG_OK);
    sg_kernels_work_u32(&k, b, n, 64);
    k.desc.name = kNames[3];
    EXPECT_EQ(sg_graph_add_kernel(g, &k.desc, &nodes[1], 1, &nodes[3]), SG_OK);
    sg_host_desc h = {busy, &ns, kNames[4]};
    EXPECT_EQ(sg_graph_add_host(g, &h, &nodes[2], 2, &nodes[4]), SG_OK);
    c = {out.data(), a, n * 4, SG_COPY_AUTO, kNames[5]};
    EXPECT_EQ(sg_graph_add_copy(g, &c, &nodes[4], 1, &nodes[5]), SG_OK) << sg_last_error();
  }
  ~Diamond() { sg_mem_free(dev); }
};

class TraceSvg : public ::testing::TestWithParam<sg_exec_mode> {};

INSTANTIATE_TEST_SUITE_P(Modes, TraceSvg, ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                         [](const ::testing::TestParamInfo<sg_exec_mode> &i) {
                           return std::string(i.param == SG_MODE_GRAPH ? "graph" : "streams");
                         });

// Every node run of every kept launch is one bar on its stream's lane, with
// the node's name and the record's exact times; copies appear again on
// their direction's lane; launch bars span their runs.
TEST_P(TraceSvg, BarsMatchTheRecordsOfEveryLaunch) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  Diamond d(g);
  sg_exec_options o = sgtest::host_options();
  o.mode = GetParam();
  o.trace = 1;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const int launches = 3;
  for (int i = 0; i < launches; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::string path = temp_path("trace_svg");
  SG_ASSERT_OK(sg_exec_write_trace_svg(e, path.c_str()));
  sgtest::XmlDoc doc = load(path);
  std::remove(path.c_str());
  ASSERT_FALSE(doc.elements.empty());
  EXPECT_EQ(doc.elements[0].name, "svg");

  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(e, &info));
  // Lanes: launches, each stream, the two copy directions used, and only
  // staging threads besides.
  std::map<std::string, const sgtest::XmlElement *> lanes;
  for (const sgtest::XmlElement *l : doc.all("g", "lane")) {
    std::string name = l->attr("data-name");
    EXPECT_EQ(lanes.count(name), 0u) << "lane " << name << " twice";
    lanes[name] = l;
    bool known = name == "launches" || name.rfind("stream ", 0) == 0 ||
                 name == "copies host to device" || name == "copies device to host" ||
                 name.rfind("copy thread ", 0) == 0 || name.rfind("waiting thread ", 0) == 0;
    EXPECT_TRUE(known) << "unexpected lane " << name;
  }
  ASSERT_EQ(lanes.count("launches"), 1u);
  for (unsigned s = 0; s < info.stream_count; s++)
    EXPECT_EQ(lanes.count("stream " + std::to_string(s)), 1u) << "stream " << s;
  EXPECT_EQ(lanes.count("stream " + std::to_string(info.stream_count)), 0u);
  EXPECT_EQ(lanes.count("copies host to device"), 1u);
  EXPECT_EQ(lanes.count("copies device to host"), 1u);

  // Bars by lane, each keyed by (node or -1, launch).
  auto lane_of = [&](const sgtest::XmlElement &r) {
    return doc.parent_of(r)->attr("data-name");
  };
  std::map<std::string, std::map<std::pair<long, uint64_t>, const sgtest::XmlElement *>> bars;
  size_t span_count = 0;
  for (const sgtest::XmlElement *r : doc.all("rect", "span")) {
    span_count++;
    long node = r->has("data-node") ? static_cast<long>(r->num("data-node")) : -1;
    auto key = std::make_pair(node, r->num("data-launch"));
    std::string lane = lane_of(*r);
    EXPECT_EQ(bars[lane].count(key), 0u) << lane << ": node " << node << " twice in a launch";
    bars[lane][key] = r;
    // Drawn inside the time axis.
    EXPECT_GE(r->real("x"), 189.9);
    EXPECT_LE(r->real("x") + r->real("width"), 1191.0);
  }
  size_t copies = 3, nodes = d.nodes.size();
  size_t staging = 0;
  for (auto &lane : bars)
    if (lane.first.find("thread") != std::string::npos) staging += lane.second.size();
  EXPECT_EQ(span_count, launches * (1 + nodes + copies) + staging);

  for (uint64_t l = 1; l <= launches; l++) {
    std::vector<sg_trace_record> rec = sgtest::records_of(e, l, nodes);
    uint64_t first = UINT64_MAX, last = 0;
    for (const sg_trace_record &r : rec) {
      uint32_t n = sg_node_index(r.node);
      uint64_t start = r.launch_start_ns + r.start_ns;
      uint64_t end = r.launch_start_ns + std::max(r.end_ns, r.start_ns);
      first = std::min(first, start);
      last = std::max(last, end);
      std::string lane = "stream " + std::to_string(r.stream);
      auto it = bars[lane].find({long(n), l});
      ASSERT_NE(it, bars[lane].end()) << "no bar for node " << n << " launch " << l;
      const sgtest::XmlElement &bar = *it->second;
      EXPECT_EQ(bar.num("data-start-ns"), start) << "node " << n << " launch " << l;
      EXPECT_EQ(bar.num("data-end-ns"), end) << "node " << n << " launch " << l;
      EXPECT_EQ(bar.num("data-stream"), r.stream);
      std::string title = doc.title_of(bar);
      EXPECT_NE(title.find(kShown[n]), std::string::npos) << title;
      EXPECT_NE(title.find("launch " + std::to_string(l)), std::string::npos) << title;
      if (n == 0 || n == 1 || n == 5) {
        std::string dir = n == 5 ? "copies device to host" : "copies host to device";
        auto c = bars[dir].find({long(n), l});
        ASSERT_NE(c, bars[dir].end()) << "copy " << n << " not on " << dir;
        EXPECT_EQ(c->second->num("data-start-ns"), start);
        EXPECT_EQ(c->second->attr("fill"), bar.attr("fill"));
        EXPECT_TRUE(bar.is(n == 5 ? "copy-d2h" : "copy-h2d"));
      } else {
        EXPECT_TRUE(bar.is(n == 4 ? "host" : "kernel")) << bar.attr("class");
      }
      // A run and its launch's bar share an outline colour.
      auto launch_bar = bars["launches"].find({-1L, l});
      ASSERT_NE(launch_bar, bars["launches"].end());
      EXPECT_EQ(bar.attr("stroke"), launch_bar->second->attr("stroke"));
    }
    const sgtest::XmlElement &lb = *bars["launches"][{-1L, l}];
    EXPECT_EQ(lb.num("data-start-ns"), first);
    EXPECT_EQ(lb.num("data-end-ns"), last);
    EXPECT_NE(doc.title_of(lb).find("launch " + std::to_string(l)), std::string::npos);
  }
  // Consecutive launches are told apart by their outline.
  std::string stroke1 = bars["launches"][std::make_pair(-1L, uint64_t(1))]->attr("stroke");
  std::string stroke2 = bars["launches"][std::make_pair(-1L, uint64_t(2))]->attr("stroke");
  EXPECT_NE(stroke1, stroke2);
  // Kinds are told apart by their fill.
  const auto &s0 = bars["copies host to device"];
  ASSERT_FALSE(s0.empty());
  for (auto &lane : bars)
    for (auto &b : lane.second)
      if (b.second->is("kernel"))
        EXPECT_NE(b.second->attr("fill"), s0.begin()->second->attr("fill"));

  // The axis is linear: a later start is never left of an earlier one, and
  // bars overlapping in time on one lane are on different rows.
  std::vector<const sgtest::XmlElement *> all = doc.all("rect", "span");
  std::sort(all.begin(), all.end(), [](auto *a, auto *b) {
    return a->num("data-start-ns") < b->num("data-start-ns");
  });
  for (size_t k = 1; k < all.size(); k++)
    EXPECT_LE(all[k - 1]->real("x"), all[k]->real("x") + 0.01);
  for (auto &lane : bars) {
    std::vector<const sgtest::XmlElement *> v;
    for (auto &b : lane.second) v.push_back(b.second);
    for (size_t i = 0; i < v.size(); i++)
      for (size_t j = i + 1; j < v.size(); j++) {
        bool overlap = v[i]->num("data-start-ns") < v[j]->num("data-end-ns") &&
                       v[j]->num("data-start-ns") < v[i]->num("data-end-ns");
        if (overlap && doc.parent_of(*v[i])->num("data-rows") <= 32)
          EXPECT_NE(v[i]->real("y"), v[j]->real("y"))
              << lane.first << ": overlapping bars drawn on one row";
      }
  }
}

// A pipeline's picture: one section per instance, every batch there with
// its number, and its copies beside the other instances' on the direction
// lanes.
// Each instance works on device memory of its own (batches in flight must
// not share it): bound into the Diamond's nodes at setup.
int instance_setup(sg_pipeline_instance *inst, void *user) {
  const Diamond *d = static_cast<const Diamond *>(user);
  size_t n = d->in_a.size();
  void *mem = nullptr;
  if (sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 2 * n * 4, &mem) != SG_OK) return 1;
  uint32_t *a = static_cast<uint32_t *>(mem), *b = a + n;
  sg_pipeline_bind binds[] = {sg_bind_copy_dst(d->nodes[0], a), sg_bind_copy_dst(d->nodes[1], b),
                              sg_bind_kernel_arg(d->nodes[2], 0, &a, sizeof a),
                              sg_bind_kernel_arg(d->nodes[3], 0, &b, sizeof b),
                              sg_bind_copy_src(d->nodes[5], a)};
  inst->data = mem;
  return sg_pipeline_instance_bind(inst, binds, 5) != SG_OK;
}

void instance_teardown(sg_pipeline_instance *inst, void *) { sg_mem_free(inst->data); }

TEST(TraceSvgPipeline, EveryBatchIsDrawnAndLabelled) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  Diamond d(g, 1 << 12);
  d.ns = 100000;
  sg_pipeline_options po;
  sg_pipeline_options_init(&po);
  po.depth = 2;
  po.exec.backend = SG_BACKEND_HOST;
  po.exec.trace = 1;
  po.setup = instance_setup;
  po.teardown = instance_teardown;
  po.user_data = &d;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
  const int batches = 5;
  std::vector<std::vector<uint32_t>> outs(batches, std::vector<uint32_t>(d.in_a.size()));
  for (int b = 0; b < batches; b++) {
    sg_pipeline_bind bind = sg_bind_copy_dst(d.nodes[5], outs[b].data());  // its own output
    sg_pipeline_batch batch = {&bind, 1, nullptr};
    SG_ASSERT_OK(sg_pipeline_submit(p, &batch, nullptr));
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));
  std::string path = temp_path("pipeline_svg");
  SG_ASSERT_OK(sg_pipeline_write_trace_svg(p, path.c_str()));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  sgtest::XmlDoc doc = load(path);
  std::remove(path.c_str());
  std::set<std::string> batch_lanes;
  for (const sgtest::XmlElement *l : doc.all("g", "lane"))
    if (l->attr("data-name") == "batches") batch_lanes.insert(l->attr("data-source"));
  EXPECT_EQ(batch_lanes.size(), 2u) << "a batch lane per instance";
  std::set<uint64_t> seen;
  std::map<uint64_t, std::set<std::string>> strokes;
  for (const sgtest::XmlElement *r : doc.all("rect", "launch")) {
    ASSERT_TRUE(r->has("data-batch"));
    uint64_t b = r->num("data-batch");
    seen.insert(b);
    EXPECT_NE(doc.title_of(*r).find("batch " + std::to_string(b)), std::string::npos)
        << doc.title_of(*r);
  }
  EXPECT_EQ(seen.size(), size_t(batches));
  for (int b = 0; b < batches; b++) EXPECT_EQ(seen.count(b), 1u) << "batch " << b;
  // Every run carries its batch.
  size_t runs = 0;
  for (const sgtest::XmlElement *r : doc.all("rect", "span"))
    if (r->has("data-node") && r->has("data-launch")) {
      EXPECT_TRUE(r->has("data-batch"));
      runs++;
    }
  EXPECT_EQ(runs, batches * (d.nodes.size() + 3));
}

TEST(TraceSvgErrors, RefusalsSayWhy) {
  sgtest::Graph g;
  Diamond d(g, 256);
  d.ns = 1000;
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec plain;
  SG_ASSERT_OK(sg_exec_create(g, &o, &plain.e));
  std::string path = temp_path("refused");
  EXPECT_EQ(sg_exec_write_trace_svg(plain, path.c_str()), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("without `trace`"), std::string::npos)
      << sg_last_error();
  o.trace = 1;
  sgtest::Exec traced;
  SG_ASSERT_OK(sg_exec_create(g, &o, &traced.e));
  EXPECT_EQ(sg_exec_write_trace_svg(traced, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_exec_write_trace_svg(nullptr, path.c_str()), SG_ERR_INVALID_ARGUMENT);
  // Nothing launched yet: a picture saying so.
  SG_ASSERT_OK(sg_exec_write_trace_svg(traced, path.c_str()));
  sgtest::XmlDoc doc = load(path);
  std::remove(path.c_str());
  EXPECT_TRUE(doc.all("rect", "span").empty());
  bool says = false;
  for (const sgtest::XmlElement *t : doc.all("text"))
    says |= t->text.find("no launch has been traced") != std::string::npos;
  EXPECT_TRUE(says);
  std::string bad = "/nonexistent-dir-sg/x.svg";
  EXPECT_EQ(sg_exec_write_trace_svg(traced, bad.c_str()), SG_ERR_SYSTEM);
  EXPECT_NE(std::string(sg_last_error()).find(bad), std::string::npos) << sg_last_error();
}

// The plan picture against the plan's own accessors, over random DAGs.
TEST(PlanSvg, NodesByStreamAndEveryWaitDrawn) {
  unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int round = 0; round < 6; round++) {
    sgtest::LeakCheck leaks;
    uint32_t n = 2 + rng() % 40;
    auto edges = sgtest::random_dag(rng, n, 0.15);
    auto preds = sgtest::predecessors(n, edges);
    sgtest::Graph g;
    std::vector<sg_node> nodes(n);
    for (uint32_t v = 0; v < n; v++) {
      std::vector<sg_node> d;
      for (uint32_t u : preds[v]) d.push_back(nodes[u]);
      std::string name = "node <" + std::to_string(v) + "> & a rather long name";
      SG_ASSERT_OK(sg_graph_add_empty(g, name.c_str(), d.data(), d.size(), &nodes[v]));
    }
    sg_plan *plan = nullptr;
    SG_ASSERT_OK(sg_plan_create(g, 1 + rng() % 4, &plan));
    char *svg = nullptr;
    SG_ASSERT_OK(sg_plan_to_svg(plan, &svg));
    sgtest::XmlDoc doc;
    std::string why;
    ASSERT_TRUE(sgtest::parse_xml(svg, &doc, &why)) << why;
    std::string path = temp_path("plan_svg");
    SG_ASSERT_OK(sg_plan_write_svg(plan, path.c_str()));
    EXPECT_EQ(sgtest::read_file(path), std::string(svg)) << "the file is what sg_plan_to_svg gives";
    std::remove(path.c_str());
    sg_free(svg);

    sg_plan_summary sum;
    SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
    const sgtest::XmlElement &root = doc.elements[0];
    EXPECT_EQ(root.num("data-nodes"), n);
    EXPECT_EQ(root.num("data-streams"), sum.stream_count);
    EXPECT_EQ(root.num("data-waits"), sum.wait_count);
    std::map<uint32_t, const sgtest::XmlElement *> boxes;
    for (const sgtest::XmlElement *b : doc.all("g", "node")) {
      uint32_t v = static_cast<uint32_t>(b->num("data-node"));
      EXPECT_EQ(boxes.count(v), 0u);
      boxes[v] = b;
    }
    ASSERT_EQ(boxes.size(), n);
    std::set<std::tuple<uint64_t, uint64_t, uint64_t>> drawn, planned;
    for (const sgtest::XmlElement *w : doc.all("path", "wait"))
      drawn.insert({w->num("data-from"), w->num("data-to"), w->num("data-event")});
    EXPECT_EQ(doc.all("path", "wait").size(), sum.wait_count);
    std::map<uint32_t, double> top;
    for (uint32_t v = 0; v < n; v++) {
      sg_plan_node_info info;
      SG_ASSERT_OK(sg_plan_get_node(plan, nodes[v], &info));
      const sgtest::XmlElement &b = *boxes[v];
      EXPECT_EQ(b.num("data-stream"), info.stream) << "node " << v;
      EXPECT_EQ(b.num("data-waits"), info.wait_count) << "node " << v;
      EXPECT_EQ(b.attr("data-kind"), "empty");
      EXPECT_NE(doc.title_of(b).find("node <" + std::to_string(v) + "> & a rather long name"),
                std::string::npos)
          << doc.title_of(b);
      for (int c : b.children)
        if (doc.elements[c].name == "rect") top[v] = doc.elements[c].real("y");
      std::vector<sg_plan_wait> waits(info.wait_count);
      size_t count = 0;
      SG_ASSERT_OK(sg_plan_get_waits(plan, nodes[v], waits.data(), waits.size(), &count));
      for (const sg_plan_wait &w : waits) planned.insert({sg_node_index(w.after), v, w.event});
    }
    EXPECT_EQ(drawn, planned);
    // Every wait and every stream step points down the page.
    for (auto &w : planned)
      EXPECT_LT(top[uint32_t(std::get<0>(w))], top[uint32_t(std::get<1>(w))]);
    size_t order_lines = 0;
    for (const sgtest::XmlElement *l : doc.all("line", "order")) {
      order_lines++;
      EXPECT_LT(top[uint32_t(l->num("data-from"))], top[uint32_t(l->num("data-to"))]);
    }
    EXPECT_EQ(order_lines, n - sum.stream_count);
    SG_ASSERT_OK(sg_plan_destroy(plan));
  }
}

TEST(PlanSvg, RefusalsSayWhy) {
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_empty(g, "only", nullptr, 0, nullptr));
  sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_plan_create(g, 0, &plan));
  char *svg = nullptr;
  EXPECT_EQ(sg_plan_to_svg(plan, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_to_svg(nullptr, &svg), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(svg, nullptr);
  EXPECT_EQ(sg_plan_write_svg(plan, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_write_svg(nullptr, "x.svg"), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("sg_plan_write_svg"), std::string::npos)
      << sg_last_error();
  EXPECT_EQ(sg_plan_write_svg(plan, "/nonexistent-dir-sg/p.svg"), SG_ERR_SYSTEM);
  EXPECT_NE(std::string(sg_last_error()).find("/nonexistent-dir-sg/p.svg"), std::string::npos);
  SG_ASSERT_OK(sg_plan_destroy(plan));
}

// Every allocation the writers make may fail: each failure comes back as
// SG_ERR_OUT_OF_MEMORY naming the call, with nothing leaked and no file
// half-written being taken for a picture.
TEST(SvgFaults, EveryAllocationFailureIsAStatus) {
  sgtest::Graph g;
  Diamond d(g, 512);
  d.ns = 1000;
  sg_exec_options o = sgtest::host_options();
  o.trace = 1;
  o.staging.policy = SG_STAGING_STAGE;  // staging spans too
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 2; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  std::string path = temp_path("faults");
  int fired = 0;
  bool done = false;
  for (unsigned long nth = 1; nth < 2000 && !done; nth++) {
    long live = sg_live_allocations();
    sg_fault_arm_site(SG_FAULT_ALLOC, "", nth);  // every allocation on the way
    sg_status st = sg_exec_write_trace_svg(e, path.c_str());
    bool hit = sg_fault_fired();
    sg_fault_arm(SG_FAULT_ALL, 0);
    EXPECT_EQ(sg_live_allocations(), live) << "allocation " << nth;
    if (!hit) {
      SG_EXPECT_OK(st);
      done = true;
      continue;
    }
    fired++;
    EXPECT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "allocation " << nth;
    EXPECT_NE(std::string(sg_last_error()).find("sg_exec_write_trace_svg"), std::string::npos);
  }
  EXPECT_GT(fired, 0) << "no allocation of the trace writer was reached";
  EXPECT_TRUE(done) << "the sweep did not reach a run without a fault";
  fired = 0;
  done = false;
  for (unsigned long nth = 1; nth < 2000 && !done; nth++) {
    long live = sg_live_allocations();
    char *svg = nullptr;
    sg_fault_arm_site(SG_FAULT_ALLOC, "", nth);
    sg_status st = sg_plan_to_svg(plan, &svg);
    bool hit = sg_fault_fired();
    sg_fault_arm(SG_FAULT_ALL, 0);
    sg_free(svg);
    EXPECT_EQ(sg_live_allocations(), live) << "allocation " << nth;
    if (!hit) {
      SG_EXPECT_OK(st);
      done = true;
      continue;
    }
    fired++;
    EXPECT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "allocation " << nth;
    EXPECT_EQ(svg, nullptr);
  }
  EXPECT_TRUE(done) << "the sweep did not reach a run without a fault";
  EXPECT_GT(fired, 0) << "no allocation of the plan writer was reached";
  std::printf("allocation failures delivered to the plan writer: %d\n", fired);
  std::remove(path.c_str());
}

}  // namespace
