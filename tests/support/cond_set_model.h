// A random graph with nested conditional nodes (IF, IF/ELSE, WHILE, SWITCH)
// whose body nodes are changed at random with sg_exec_set_*, and a CPU
// reference that interprets the same description serially (the
// cond_set tests: tests/host/conditional_set_test.cpp on the host backend,
// tests/gpu/gpu_conditional_set_test.cpp on the GPU).
//
// Every graph and every body is a chain, so that the result does not depend
// on which of two independent nodes runs first. Each conditional node is
// preceded in its chain by the kernel that sets its condition (a DECIDE
// before IF and SWITCH, a LOOP before WHILE; a WHILE body ends with a STEP
// that counts the loop down), so that changing that kernel's value through
// sg_exec_set_kernel picks another body or another number of iterations.
#ifndef SG_TEST_COND_SET_MODEL_H
#define SG_TEST_COND_SET_MODEL_H

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cond_set_ops.h"
#include "streamgraph/cond_device.h"
#include "streamgraph/conditional.h"
#include "streamgraph/exec.h"
#include "streamgraph/graph.h"

namespace condset {

// The kernel's host twin: kernel(uint32_t *mem, cs_args a, sg_cond_ref ref).
inline void twin(const sg_kernel_launch *, void *const *args) {
  uint32_t *mem = *static_cast<uint32_t *const *>(args[0]);
  cs_args a;
  std::memcpy(&a, args[1], sizeof a);
  sg_cond_ref ref;
  std::memcpy(&ref, args[2], sizeof ref);
  const int64_t r = cs_run(mem, a);
  if (r >= 0) sg_cond_set(ref, static_cast<unsigned>(r));
}

// A host node's work (a MIX; host nodes set no condition here).
struct HostOp {
  uint32_t *mem;
  cs_args a;
};
inline int host_fn(void *p) {
  const HostOp *h = static_cast<const HostOp *>(p);
  cs_run(h->mem, h->a);
  return 0;
}

struct Body;
struct Node {
  enum Kind { KERNEL, COPY, MEMSET, HOST, COND } kind = KERNEL;
  cs_args a{};       // KERNEL
  int cond = -1;     // KERNEL: the condition it sets (-1: none); COND: the one it reads
  uint32_t dst = 0, src = 0, count = 0, value = 0;  // COPY (words), MEMSET (words, value)
  HostOp *host = nullptr;                            // HOST (owned by the model)
  sg_cond_kind ck = SG_COND_IF;
  std::vector<Body> bodies;  // COND
  unsigned depth = 0;        // 0: top level
  std::string name;
  sg_node handle{};
  sg_graph *graph = nullptr;  // the graph (top level or body) that holds it
};
struct Body {
  std::vector<Node> nodes;
};

struct Options {
  bool host_nodes = true;  // the CUDA backend refuses host nodes in bodies
  unsigned max_depth = 3;
  uint32_t data_words = 24;
};

class Model {
 public:
  Model(uint32_t seed, Options o) : rng_(seed), o_(o) {}

  // The description, before any memory exists.
  void generate() {
    chain(root_, 0, 3 + rng_() % 3);
    if (!cond_count_) add_cond(root_, 0);  // at least one body to change
  }
  // Words of memory the graph uses (data, then one counter per WHILE).
  uint32_t words() const { return o_.data_words + counters_; }
  uint32_t cond_count() const { return cond_count_; }

  // Builds the description into `g` on `mem` (words() words); `func` is the
  // CUDA kernel (NULL for the host backend only). `first` (may be NULL) is
  // a host node put before everything (a gate).
  sg_status build(sg_graph *g, uint32_t *mem, const void *func, const sg_host_desc *first) {
    mem_ = mem;
    func_ = func;
    for (auto &h : hosts_) h->mem = mem;
    conds_.assign(cond_count_, sg_cond{0});
    for (auto &c : conds_) {
      sg_status st = sg_graph_cond_create(g, 0, SG_COND_ASSIGN_DEFAULT, &c);
      if (st) return st;
    }
    sg_node gate;
    if (first) {
      sg_status st = sg_graph_add_host(g, first, nullptr, 0, &gate);
      if (st) return st;
    }
    return build_chain(g, root_, first ? &gate : nullptr);
  }

  // The CPU reference: one launch on `mem`.
  void reference(std::vector<uint32_t> &mem) const {
    std::vector<unsigned> conds(cond_count_, 0u);  // SG_COND_ASSIGN_DEFAULT, default 0
    run(root_, mem, conds);
  }

  // Changes one node at random (a node inside a body with probability 4/5
  // when there is one) in the model and in every executable; returns what
  // it did, for failure messages. Any status but SG_OK stops it.
  std::string random_set(const std::vector<sg_exec *> &execs, sg_status *st) {
    std::string what;
    Node *n = random_change(&what);
    *st = SG_OK;
    for (sg_exec *e : execs)
      if (!*st) *st = set(e, *n);
    return what;
  }

  // The same, in the model and in the graph that holds the node (to be
  // given to sg_exec_update).
  std::string random_edit(sg_status *st) {
    std::string what;
    Node *n = random_change(&what);
    *st = edit(*n);
    return what;
  }

  // A node inside a body, at the greatest depth there is (for the tests
  // that need one); NULL when no body holds a node.
  Node *deepest(Node::Kind kind) {
    std::vector<Node *> all, inner;
    collect(root_, all, inner);
    Node *best = nullptr;
    for (Node *n : inner)
      if (n->kind == kind && (!best || n->depth > best->depth)) best = n;
    return best;
  }

  // Picks a node (inside a body with probability 4/5 when there is one)
  // and gives it new random parameters in the model; *what says which.
  Node *random_change(std::string *what) {
    std::vector<Node *> all, inner;
    collect(root_, all, inner);
    Node *n = !inner.empty() && rng_() % 5 ? inner[rng_() % inner.size()] : all[rng_() % all.size()];
    *what = n->name + " (depth " + std::to_string(n->depth) + "): ";
    switch (n->kind) {
      case Node::KERNEL:
        rekey_kernel(*n);
        *what += "kernel op " + std::to_string(n->a.op) + " value " + std::to_string(n->a.value);
        break;
      case Node::COPY:
        random_copy(*n);
        *what += "copy " + std::to_string(n->count) + " words " + std::to_string(n->src) +
                 " -> " + std::to_string(n->dst);
        break;
      case Node::MEMSET:
        random_memset(*n);
        *what += "memset " + std::to_string(n->count) + " words at " + std::to_string(n->dst);
        break;
      case Node::HOST:
        n->host = new_host();
        n->host->mem = mem_;
        *what += "host mix " + std::to_string(n->host->a.dst);
        break;
      default:
        break;
    }
    return n;
  }

  // Node `n`'s parameters as the model has them, into executable `e`.
  sg_status set(sg_exec *e, const Node &n) const {
    switch (n.kind) {
      case Node::KERNEL: return set_kernel(e, n);
      case Node::COPY: return set_copy(e, n);
      case Node::MEMSET: return set_memset(e, n);
      case Node::HOST: {
        sg_host_desc d = {host_fn, n.host, nullptr};
        return sg_exec_set_host(e, n.handle, &d);
      }
      default: return SG_OK;
    }
  }

  // The same, into the graph that holds `n`.
  sg_status edit(const Node &n) const {
    switch (n.kind) {
      case Node::KERNEL: {
        sg_kernel_desc d = kernel_desc(n);
        return sg_graph_set_kernel(n.graph, n.handle, &d);
      }
      case Node::COPY: {
        sg_copy_desc d = {mem_ + n.dst, mem_ + n.src, n.count * sizeof(uint32_t), SG_COPY_AUTO,
                          nullptr};
        return sg_graph_set_copy(n.graph, n.handle, &d);
      }
      case Node::MEMSET: {
        sg_memset_desc d = {mem_ + n.dst, n.value, 4, n.count, nullptr};
        return sg_graph_set_memset(n.graph, n.handle, &d);
      }
      case Node::HOST: {
        sg_host_desc d = {host_fn, n.host, nullptr};
        return sg_graph_set_host(n.graph, n.handle, &d);
      }
      default: return SG_OK;
    }
  }

  sg_status set_kernel(sg_exec *e, const Node &n) const {
    sg_kernel_desc d = kernel_desc(n);
    return sg_exec_set_kernel(e, n.handle, &d);
  }
  sg_status set_copy(sg_exec *e, const Node &n) const {
    sg_copy_desc d = {mem_ + n.dst, mem_ + n.src, n.count * sizeof(uint32_t), SG_COPY_AUTO,
                      nullptr};
    return sg_exec_set_copy(e, n.handle, &d);
  }
  sg_status set_memset(sg_exec *e, const Node &n) const {
    sg_memset_desc d = {mem_ + n.dst, n.value, 4, n.count, nullptr};
    return sg_exec_set_memset(e, n.handle, &d);
  }
  // A kernel descriptor of `n` (its arguments point into `n`).
  sg_kernel_desc kernel_desc(const Node &n) const {
    static const size_t sizes[3] = {sizeof(uint32_t *), sizeof(cs_args), sizeof(sg_cond_ref)};
    args_[0] = const_cast<uint32_t **>(&mem_);
    args_[1] = const_cast<cs_args *>(&n.a);
    args_[2] = &no_ref_;
    sg_kernel_desc d{};
    d.func = func_;
    d.grid = d.block = sg_dim3{1, 1, 1};
    d.args = args_;
    d.arg_sizes = sizes;
    d.arg_count = 3;
    d.host_twin = twin;
    return d;
  }
  // New random parameters for `n` (its kind and role kept), in the model
  // only: set_* then gives them to an executable.
  void rekey(Node &n) {
    if (n.kind == Node::KERNEL) rekey_kernel(n);
    else if (n.kind == Node::COPY) random_copy(n);
    else if (n.kind == Node::MEMSET) random_memset(n);
  }
  void rekey_kernel(Node &n) {
    switch (n.a.op) {
      case CS_MIX: n.a = random_mix(); break;
      case CS_DECIDE:
        n.a.dst = rng_() % o_.data_words;
        n.a.salt = rng_();
        n.a.value = rng_() % decide_range(n);
        break;
      case CS_LOOP: n.a.value = rng_() % 4; break;
      default:
        n.a.dst = rng_() % o_.data_words;
        n.a.salt = rng_();
        break;
    }
  }

 private:
  // The number of values a DECIDE picks among: its conditional node's
  // bodies, plus one for "none" (IF: 0 or 1).
  unsigned decide_range(const Node &decider) const { return decider.count; }

  uint32_t r(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  cs_args random_mix() {
    cs_args a{};
    a.op = CS_MIX;
    a.dst = rng_() % o_.data_words;
    a.src = rng_() % o_.data_words;
    a.salt = rng_();
    return a;
  }
  void random_copy(Node &n) {
    n.count = 1 + rng_() % 4;
    n.src = rng_() % (o_.data_words - n.count + 1);
    do n.dst = rng_() % (o_.data_words - n.count + 1);
    while (n.dst + n.count > n.src && n.src + n.count > n.dst);  // no overlap
  }
  void random_memset(Node &n) {
    n.count = 1 + rng_() % 4;
    n.dst = rng_() % (o_.data_words - n.count + 1);
    n.value = rng_();
  }
  HostOp *new_host() {
    hosts_.emplace_back(new HostOp{mem_, random_mix()});
    return hosts_.back().get();
  }
  Node ordinary(unsigned depth) {
    Node n;
    n.depth = depth;
    n.name = "n" + std::to_string(names_++);
    unsigned pick = rng_() % (o_.host_nodes ? 4 : 3);
    if (pick == 0) {
      n.kind = Node::KERNEL;
      n.a = random_mix();
    } else if (pick == 1) {
      n.kind = Node::COPY;
      random_copy(n);
    } else if (pick == 2) {
      n.kind = Node::MEMSET;
      random_memset(n);
    } else {
      n.kind = Node::HOST;
      n.host = new_host();
    }
    return n;
  }
  // A chain of `length` nodes, some of them conditional (with their
  // deciders before them).
  void chain(Body &b, unsigned depth, unsigned length) {
    for (unsigned i = 0; i < length; i++) {
      if (depth < o_.max_depth && cond_count_ < SG_MAX_CONDS && rng_() % 3 == 0) {
        add_cond(b, depth);
      } else {
        b.nodes.push_back(ordinary(depth));
      }
    }
  }
  void add_cond(Body &b, unsigned depth) {
    Node c;
    c.kind = Node::COND;
    c.depth = depth;
    c.cond = static_cast<int>(cond_count_++);
    c.name = "c" + std::to_string(names_++);
    const unsigned kind = rng_() % 4;
    unsigned bodies = 1;
    Node d;
    d.kind = Node::KERNEL;
    d.depth = depth;
    d.cond = c.cond;
    d.name = "d" + std::to_string(names_++);
    uint32_t counter = 0;
    if (kind == 0 || kind == 1) {  // IF, IF/ELSE
      c.ck = SG_COND_IF;
      bodies = kind + 1;
      d.count = 2;
    } else if (kind == 2) {
      c.ck = SG_COND_SWITCH;
      bodies = 2 + rng_() % 2;
      d.count = bodies + 1;
    } else {
      c.ck = SG_COND_WHILE;
      counter = o_.data_words + counters_++;
    }
    if (c.ck == SG_COND_WHILE) {
      d.a = cs_args{CS_LOOP, 0, 0, 0, r(4), counter};
    } else {
      d.a = cs_args{CS_DECIDE, r(o_.data_words), 0, static_cast<uint32_t>(rng_()), 0, 0};
      d.a.value = rng_() % d.count;
    }
    b.nodes.push_back(d);
    c.bodies.resize(bodies);
    for (Body &body : c.bodies) chain(body, depth + 1, 1 + rng_() % 3);
    if (c.ck == SG_COND_WHILE) {
      Node s;
      s.kind = Node::KERNEL;
      s.depth = depth + 1;
      s.cond = c.cond;
      s.name = "s" + std::to_string(names_++);
      s.a = cs_args{CS_STEP, r(o_.data_words), 0, static_cast<uint32_t>(rng_()), 0, counter};
      c.bodies[0].nodes.push_back(s);
    }
    b.nodes.push_back(std::move(c));
  }

  sg_status build_chain(sg_graph *g, Body &b, const sg_node *first_dep) {
    const sg_node *dep = first_dep;
    for (Node &n : b.nodes) {
      sg_status st = add(g, n, dep, dep ? 1 : 0);
      if (st) return st;
      dep = &n.handle;
    }
    return SG_OK;
  }
  sg_status add(sg_graph *g, Node &n, const sg_node *deps, size_t nd) {
    n.graph = g;
    switch (n.kind) {
      case Node::KERNEL: {
        sg_kernel_desc d = kernel_desc(n);
        d.name = n.name.c_str();
        sg_status st = sg_graph_add_kernel(g, &d, deps, nd, &n.handle);
        if (!st && n.cond >= 0) st = sg_graph_kernel_bind_cond(g, n.handle, 2, conds_[n.cond]);
        return st;
      }
      case Node::COPY: {
        sg_copy_desc d = {mem_ + n.dst, mem_ + n.src, n.count * sizeof(uint32_t), SG_COPY_AUTO,
                          n.name.c_str()};
        return sg_graph_add_copy(g, &d, deps, nd, &n.handle);
      }
      case Node::MEMSET: {
        sg_memset_desc d = {mem_ + n.dst, n.value, 4, n.count, n.name.c_str()};
        return sg_graph_add_memset(g, &d, deps, nd, &n.handle);
      }
      case Node::HOST: {
        sg_host_desc d = {host_fn, n.host, n.name.c_str()};
        return sg_graph_add_host(g, &d, deps, nd, &n.handle);
      }
      default: {
        sg_cond_node_desc d = {n.ck, conds_[n.cond], static_cast<unsigned>(n.bodies.size()),
                               n.name.c_str()};
        sg_graph *bodies[SG_MAX_SWITCH_BODIES];
        sg_status st = sg_graph_add_conditional(g, &d, deps, nd, &n.handle, bodies);
        for (size_t k = 0; !st && k < n.bodies.size(); k++)
          st = build_chain(bodies[k], n.bodies[k], nullptr);
        return st;
      }
    }
  }

  void run(const Body &b, std::vector<uint32_t> &mem, std::vector<unsigned> &conds) const {
    for (const Node &n : b.nodes) {
      switch (n.kind) {
        case Node::KERNEL: {
          const int64_t r = cs_run(mem.data(), n.a);
          if (n.cond >= 0 && r >= 0) conds[n.cond] = static_cast<unsigned>(r);
          break;
        }
        case Node::HOST:
          cs_run(mem.data(), n.host->a);
          break;
        case Node::COPY:
          std::memcpy(&mem[n.dst], &mem[n.src], n.count * sizeof(uint32_t));
          break;
        case Node::MEMSET:
          for (uint32_t i = 0; i < n.count; i++) mem[n.dst + i] = n.value;
          break;
        default: {
          const unsigned v = conds[n.cond];
          if (n.ck == SG_COND_IF) {
            if (v) run(n.bodies[0], mem, conds);
            else if (n.bodies.size() == 2) run(n.bodies[1], mem, conds);
          } else if (n.ck == SG_COND_SWITCH) {
            if (v < n.bodies.size()) run(n.bodies[v], mem, conds);
          } else {
            while (conds[n.cond]) run(n.bodies[0], mem, conds);
          }
        }
      }
    }
  }

  void collect(Body &b, std::vector<Node *> &all, std::vector<Node *> &inner) {
    for (Node &n : b.nodes) {
      if (n.kind == Node::COND) {
        for (Body &body : n.bodies) collect(body, all, inner);
        continue;
      }
      all.push_back(&n);
      if (n.depth) inner.push_back(&n);
    }
  }

  std::mt19937 rng_;
  Options o_;
  Body root_;
  uint32_t cond_count_ = 0, counters_ = 0, names_ = 0;
  std::vector<sg_cond> conds_;
  std::vector<std::unique_ptr<HostOp>> hosts_;
  uint32_t *mem_ = nullptr;
  const void *func_ = nullptr;
  mutable void *args_[3];
  mutable sg_cond_ref no_ref_{0, nullptr};
};

}  // namespace condset

#endif
