/* Staging as a backend uses it (staging.h): which copy nodes are
 * candidates, which route each takes, and their prepared states in graph
 * mode. */
#include "staging/staging.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "staging/pool.h"
#include "staging/stage_conductor.h"
#include "staging/tuning.h"

#define DEFAULT_REGISTER_AFTER 2u
#define MAX_RING_DEPTH 64u
#define MAX_COPY_THREADS 64u

/* Pageable as classified, or pinned (in whole or in part) only because
 * this backend's registration cache pinned it: such a copy must stay under
 * the cache's in-flight rules, and the driver refuses a range that is only
 * partly registered. */
static int pageable_side(const sg__stage_mem *mem, sg_memory_kind kind, const void *p, size_t n) {
  if (kind == SG_MEMORY_HOST_PAGEABLE) return 1;
  return kind == SG_MEMORY_HOST_PINNED && sg__reg_touches(mem, p, n);
}

/* By the memory on each side, not by the copy kind: a copy between pageable
 * and managed memory may be of either kind. The device side is what the
 * backend's DMA reaches from a pinned slot; managed memory counts on CUDA,
 * since a pageable <-> managed memcpy node has the same ordering problem in
 * a graph (policy.h). Whether a candidate is then staged is the route's
 * business (policy.h), so that a small AUTO copy in streams mode still
 * passes through staging's checks. */
sg__stage_dir sg__staging_classify(const sg__stage_mem *mem, const sg__copy *c) {
  if (sg__stage_mem_device_side(mem, c->dst_memory) &&
      pageable_side(mem, c->src_memory, c->src, c->bytes))
    return SG__STAGE_H2D;
  if (sg__stage_mem_device_side(mem, c->src_memory) &&
      pageable_side(mem, c->dst_memory, c->dst, c->bytes))
    return SG__STAGE_D2H;
  return SG__STAGE_NONE;
}

/* The size from which AUTO stages copies of direction `dir`: the option
 * when given, else the default of the protocol (tuning.h). Until the pool,
 * and with it the protocol, is chosen: the memop default, the lower one,
 * so that a copy the memop protocol would stage takes the pool. */
static size_t auto_min(const sg__staging *st, sg__stage_dir dir) {
  if (st->min_bytes) return st->min_bytes;
  int memops = !st->pool || st->protocol == SG__STAGE_MEMOPS;
  return sg__stage_auto_min_bytes(memops, dir == SG__STAGE_H2D);
}

/* The facts the route of candidate `c` (direction `dir`) is chosen from
 * (policy.h); `streak` and `no_register` as the node's bookkeeping says
 * (0 in the persistent regime, which counts no launches). */
static sg__route_facts facts_of(const sg__staging *st, const sg__copy *c, sg__stage_dir dir,
                                unsigned streak, int no_register) {
  sg__route_facts f = {st->policy, st->mem->dma, st->persistent, c->bytes, auto_min(st, dir),
                       streak, st->register_after, no_register, 0};
  return f;
}

/* 1 if candidate `c` (direction `dir`) may be staged (and so needs the
 * pool's rings). */
static int may_stage(const sg__staging *st, const sg__copy *c, sg__stage_dir dir) {
  const sg__route_facts f = facts_of(st, c, dir, 0, 0);
  return sg__route_choose(&f).otherwise == SG__ROUTE_STAGE;
}

void sg__staging_sides(const sg__copy *c, sg__stage_dir dir, void **host, void **device) {
  if (dir == SG__STAGE_H2D) {
    *host = (void *)c->src;
    *device = c->dst;
  } else {
    *host = c->dst;
    *device = (void *)c->src;
  }
}

const char *sg__staging_label(const sg__node *node, uint32_t index,
                              char buf[SG__STAGING_LABEL_BYTES]) {
  char label[SG__LABEL_BYTES];
  sg__format(buf, SG__STAGING_LABEL_BYTES, "copy node %s", sg__node_label(node, index, label));
  return buf;
}

void sg__staging_geometry(const sg__staging *st, sg__stage_dir dir, size_t bytes,
                          sg__stage_geometry *g) {
  sg__route_geometry(st->chunk_bytes, st->ring_depth, st->copy_threads,
                     st->protocol == SG__STAGE_MEMOPS, dir == SG__STAGE_H2D, bytes,
                     sg__cpu_count(), g);
}

/* The copy threads the pool must run for this executable: the most any of
 * its staged copies may split a chunk into (a large copy's default). */
static unsigned threads_wanted(const sg__staging *st) {
  if (st->copy_threads) return st->copy_threads;
  unsigned cpus = sg__cpu_count(), h = sg__stage_default_threads(1, SIZE_MAX, cpus);
  unsigned d = sg__stage_default_threads(0, SIZE_MAX, cpus);
  return h > d ? h : d;
}

sg__stage_dir sg__staging_candidate(const sg__staging *st, uint32_t index) {
  return st && index < st->node_count ? st->nodes[index].dir : SG__STAGE_NONE;
}

/* Takes the pool: at creation when the options name one (so that the pool
 * cannot be destroyed under the executable), else on first need (creation
 * or an update that makes a node a candidate), so that executables without
 * pageable copies cost nothing. */
static sg_status attach_pool(sg__staging *st, const char *where) {
  if (st->pool) return SG_OK;
  sg_pinned_pool *pool;
  sg_status s = sg__pool_resolve(st->requested, st->mem, where, &pool);
  if (s) return s;
  /* A host executable may copy through pinned memory like any other; DMA
   * needs the pinned memory of its own backend. */
  if (st->mem->dma && sg__pool_mem(pool) != st->mem)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: staging.pool holds plain host memory (made for the host backend); a CUDA "
                    "executable needs a pool of pinned memory", where);
  if ((s = sg__pool_attach(pool, threads_wanted(st), where))) return s;
  st->pool = pool;
  /* Chosen with the pool, so that an executable that stages nothing never
   * probes the device. Nobody waits for a memop copy's host copies, so a
   * copy thread must run (the callbacks copy what no thread takes
   * themselves). */
  st->protocol = sg__staging_protocol_for(st->mem, st->device);
  if (st->protocol == SG__STAGE_MEMOPS && sg__workers_count(sg__pool_workers(pool)) == 0)
    st->protocol = SG__STAGE_CALLBACKS;
  if (st->protocol == SG__STAGE_MEMOPS &&
      (s = sg__conductor_start(sg__pool_conductor(pool), where))) {
    sg__pool_detach(pool);
    st->pool = NULL;
    return s;
  }
  return SG_OK;
}

sg__stage_protocol sg__staging_protocol_for(const sg__stage_mem *mem, int device) {
  const char *env = getenv("SG_STAGING_PROTOCOL");
  if (env && strcmp(env, "callbacks") == 0) return SG__STAGE_CALLBACKS;
  return mem->memops_supported && mem->memops_supported(device) ? SG__STAGE_MEMOPS
                                                                : SG__STAGE_CALLBACKS;
}

/* 1 if candidate `c` is staged at its first launch in the per-launch
 * regime, whatever happens then: STAGE, and AUTO's copies large enough to be
 * staged until they are registered. (REGISTER stages only a buffer it could
 * not register.) */
static int stages_first(const sg__staging *st, const sg__copy *c, sg__stage_dir dir) {
  return st->policy != SG_STAGING_REGISTER && may_stage(st, c, dir);
}

/* A ring that can never fit the pool is refused when the copy is made or
 * changed, as graph mode does, rather than at a launch that would fail the
 * executable for good. */
static sg_status check_ring(const sg__staging *st, sg__stage_dir dir, const sg__copy *c,
                            const char *where) {
  sg__stage_geometry g;
  sg__staging_geometry(st, dir, c->bytes, &g);
  size_t need = g.stride && g.ring > SIZE_MAX / g.stride ? SIZE_MAX : (size_t)g.ring * g.stride;
  size_t cap = sg__pool_cap(st->pool);
  if (need <= cap) return SG_OK;
  return sg__fail(SG_ERR_POOL_EXHAUSTED,
                  "%s: a staging ring of %zu bytes is larger than the pinned pool's cap of %zu "
                  "bytes (lower chunk_bytes or ring_depth, or raise the pool's max_bytes)",
                  where, need, cap);
}

/* ---- persistent regime: prepared states ------------------------------- */

/* The direction of candidate `c` by its device side (its host side was
 * found pageable when it was classified). */
static sg__stage_dir direction(const sg__staging *st, const sg__copy *c) {
  return sg__stage_mem_device_side(st->mem, c->dst_memory) ? SG__STAGE_H2D : SG__STAGE_D2H;
}

/* A registered state serves its own buffer (the host range it pinned); a
 * staged one serves every copy of its size and direction, whatever the
 * addresses: its ring holds no address, the pageable side is given per
 * launch (sg__stage_launch_queue) and the device side per build. */
static int serves_registered(const sg__pstate *p, sg__stage_dir dir, const sg__copy *c) {
  void *host, *device;
  sg__staging_sides(c, dir, &host, &device);
  return p->route == SG__ROUTE_REGISTERED && p->dir == dir && p->bytes == c->bytes &&
         p->host == host;
}

static int serves_staged(const sg__pstate *p, sg__stage_dir dir, const sg__copy *c) {
  return p->route != SG__ROUTE_REGISTERED && p->dir == dir && p->bytes == c->bytes;
}

static void state_free(sg__pstate *p) {
  sg__stage_run_free(p->run);
  if (p->reg) sg__reg_unbind(p->reg);
  sg__free(p);
}

sg__pstate *sg__staging_find(const sg__staging *st, uint32_t index, const sg__copy *c) {
  if (!st || index >= st->node_count) return NULL;
  const sg__stage_dir dir = direction(st, c);
  sg__pstate *staged = NULL;
  for (sg__pstate *p = st->nodes[index].states; p; p = p->next) {
    if (serves_registered(p, dir, c)) return p;
    if (!staged && serves_staged(p, dir, c)) staged = p;
  }
  return staged;
}

/* A registered state for `c` when the route's choice looks for one
 * (REGISTER registers, AUTO uses one that exists: a graph built once cannot
 * count launches); *out NULL when there is none. */
static sg_status registered_make(sg__staging *st, const sg__copy *c, sg__stage_dir dir,
                                 const char *where, sg__pstate **out) {
  *out = NULL;
  const sg__route_facts f = facts_of(st, c, dir, 0, 0);
  const sg__reg_action action = sg__route_choose(&f).reg;
  if (action == SG__REG_SKIP) return SG_OK;
  void *host, *device;
  sg__staging_sides(c, dir, &host, &device);
  sg__reg_binding *b = NULL;
  sg_status s = sg__reg_bind(st->mem, host, c->bytes, action != SG__REG_EXISTING, where, &b);
  if (s || !b) return s;
  sg__pstate *p = sg__calloc(1, sizeof *p);
  if (!p) {
    sg__reg_unbind(b);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  }
  *p = (sg__pstate){NULL, dir, host, c->bytes, SG__ROUTE_REGISTERED, NULL, b};
  sg__reg_hold(b);
  *out = p;
  return SG_OK;
}

/* A staged state for copies of `c`'s size and direction: its ring, held
 * until the state is freed. On CUDA nothing falls back to DIRECT
 * (policy.h): NONE, and AUTO below auto_min_bytes, are staged too. */
static sg_status staged_make(sg__staging *st, const sg__copy *c, sg__stage_dir dir,
                             const char *where, sg__pstate **out) {
  const sg__route_facts f = facts_of(st, c, dir, 0, 0);
  const sg__copy_route route = sg__route_choose(&f).otherwise;
  sg__pstate *p = sg__calloc(1, sizeof *p);
  if (!p) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  *p = (sg__pstate){NULL, dir, NULL, c->bytes, route, NULL, NULL};
  sg_status s = SG_OK;
  if (route == SG__ROUTE_STAGE) {
    void *host, *device;
    sg__staging_sides(c, dir, &host, &device);
    sg__stage_geometry g;
    sg__staging_geometry(st, dir, c->bytes, &g);
    s = sg__stage_run_new(st->pool, dir, host, device, &g, 1, NULL, NULL, where, &p->run);
    if (!s && st->protocol == SG__STAGE_MEMOPS) s = sg__stage_run_use_memops(p->run, where);
  }
  if (s) {
    state_free(p);
    return s;
  }
  *out = p;
  return SG_OK;
}

sg_status sg__staging_prepare(sg__staging *st, uint32_t index, const char *name,
                              const sg__copy *c, const char *where) {
  sg__stage_dir dir = sg__staging_classify(st->mem, c);
  if (!dir) return SG_OK;
  sg__pstate *found = sg__staging_find(st, index, c);
  /* Its own registration, or staged under a policy that never registers:
   * nothing to take (a new address of a staged copy takes no new ring). */
  if (found && (found->route == SG__ROUTE_REGISTERED ||
                (st->policy != SG_STAGING_REGISTER && st->policy != SG_STAGING_AUTO)))
    return SG_OK;
  sg_status s = attach_pool(st, where);
  sg__pstate *p = NULL;
  if (!s) s = registered_make(st, c, dir, where, &p);
  if (!s && !p && !found) s = staged_make(st, c, dir, where, &p);
  if (s || !p) return s;
  if (p->run) sg__staging_trace_run(st, p->run, index, name);
  p->next = st->nodes[index].states;
  st->nodes[index].states = p;
  return SG_OK;
}

/* Frees node `index`'s states but `keep` and `keep2`. */
static void drop_states_but2(sg__staged_node *sn, const sg__pstate *keep,
                             const sg__pstate *keep2) {
  for (sg__pstate **link = &sn->states; *link;) {
    sg__pstate *p = *link;
    if (p == keep || (keep2 && p == keep2)) {
      link = &p->next;
      continue;
    }
    *link = p->next;
    state_free(p);
  }
}

static void drop_states_but(sg__staged_node *sn, const sg__pstate *keep) {
  drop_states_but2(sn, keep, NULL);
}

void sg__staging_gc(sg__staging *st, uint32_t index, const sg__pstate *keep,
                    const sg__pstate *also_keep) {
  if (!st || index >= st->node_count) return;
  drop_states_but2(&st->nodes[index], keep, also_keep);
}

/* ---- creation, destruction, updates ----------------------------------- */

static void node_release(sg__staged_node *sn) {
  if (sn->reg) sg__reg_unbind(sn->reg);
  drop_states_but(sn, NULL);
  memset(sn, 0, sizeof *sn);
}

void sg__staging_destroy(sg__staging *st) {
  if (!st) return;
  for (uint32_t i = 0; i < st->node_count; i++) node_release(&st->nodes[i]);
  if (st->pool) sg__pool_detach(st->pool);
  sg__free(st->nodes);
  sg__free(st);
}

sg_status sg__staging_create(const sg_staging_options *o, const sg__stage_mem *mem,
                             int device, int persistent, uint32_t node_count,
                             const sg__copy_spans *spans, const char *fn, sg__staging **out) {
  *out = NULL;
  /* Without DMA (the host backend) NONE and AUTO copy directly; a pool
   * named anyway is still held for the executable's life (an object with
   * no node state). */
  int never = !mem->dma && (o->policy == SG_STAGING_NONE || o->policy == SG_STAGING_AUTO);
  if (never && !o->pool) return SG_OK;
  if (o->ring_depth > MAX_RING_DEPTH)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: staging.ring_depth %u is above the limit of %u",
                    fn, o->ring_depth, MAX_RING_DEPTH);
  if (o->copy_threads > MAX_COPY_THREADS)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: staging.copy_threads %u is above the limit of %u", fn, o->copy_threads,
                    MAX_COPY_THREADS);
  if (o->pool) { /* a pool given explicitly is checked now, even if no node needs it yet */
    sg_pinned_pool *unused;
    sg_status s = sg__pool_resolve(o->pool, mem, fn, &unused);
    if (s) return s;
  }
  sg__staging *st = sg__calloc(1, sizeof *st);
  if (!st) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  st->mem = mem;
  st->device = device;
  st->persistent = persistent;
  if (spans) st->spans = *spans;
  st->policy = o->policy;
  st->requested = o->pool;
  st->chunk_bytes = o->chunk_bytes;
  st->ring_depth = o->ring_depth; /* 0: the copy's default (policy.h) */
  st->copy_threads = o->copy_threads;
  st->min_bytes = o->auto_min_bytes;
  st->register_after = o->auto_register_after ? o->auto_register_after : DEFAULT_REGISTER_AFTER;
  st->node_count = never ? 0 : node_count;
  st->nodes = sg__calloc(st->node_count ? st->node_count : 1, sizeof *st->nodes);
  if (!st->nodes) {
    sg__free(st);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  sg_status s = o->pool ? attach_pool(st, fn) : SG_OK;
  if (s) {
    sg__staging_destroy(st);
    return s;
  }
  *out = st;
  return SG_OK;
}

static void remember(sg__staged_node *sn, const sg__copy *c, sg__stage_dir dir) {
  sn->dir = dir;
  sn->seen_src = c->src;
  sn->seen_dst = c->dst;
  sn->seen_bytes = c->bytes;
}

sg_status sg__staging_add(sg__staging *st, uint32_t index, const char *name, const sg__copy *c,
                          sg__stage_dir dir, const char *where) {
  if (!st || index >= st->node_count) return SG_OK;
  remember(&st->nodes[index], c, dir);
  if (!dir || !may_stage(st, c, dir)) return SG_OK;
  if ((st->policy == SG_STAGING_AUTO || st->policy == SG_STAGING_REGISTER) && st->mem->warm_pin)
    st->mem->warm_pin();
  sg_status s = attach_pool(st, where);
  if (!s && st->persistent) s = sg__staging_prepare(st, index, name, c, where);
  if (!s && !st->persistent && stages_first(st, c, dir)) s = check_ring(st, dir, c, where);
  return s;
}

sg_status sg__staging_update(sg__staging *st, uint32_t index, const char *name,
                             const sg__copy *c, sg__stage_dir dir, int drop_others,
                             const char *where) {
  if (!st || index >= st->node_count) return SG_OK;
  sg__staged_node *sn = &st->nodes[index];
  if (st->persistent) {
    sg_status s = sg__staging_prepare(st, index, name, c, where);
    if (s) return s;
    /* Without drop_others a graph built with the old state may still run:
     * the node keeps it, and its bookkeeping, until sg__staging_gc. */
    if (!drop_others) return SG_OK;
    drop_states_but(sn, sg__staging_find(st, index, c));
  } else {
    if (dir && may_stage(st, c, dir)) {
      sg_status s = attach_pool(st, where);
      if (!s && stages_first(st, c, dir)) s = check_ring(st, dir, c, where);
      if (s) return s;
    }
    /* The route is chosen again from the next launch on. A registration
     * that covers the new host range as well is kept (the same buffer
     * again, or another part of it): letting it go would unpin the buffer
     * only for the next launch to pin it again. */
    void *host = NULL, *device;
    if (dir) sg__staging_sides(c, dir, &host, &device);
    if (sn->reg && !(dir && sg__reg_binding_covers(sn->reg, host, c->bytes))) {
      sg__reg_unbind(sn->reg);
      sn->reg = NULL;
    }
    sn->streak = 0;
    sn->no_register = 0;
  }
  remember(sn, c, dir);
  return SG_OK;
}

/* ---- per-launch regime ------------------------------------------------ */

/* A copy that would go to the driver as pageable memory, with DMA: only
 * when no registration touches its host range (the driver refuses a range
 * that is partly registered), and guarded until sg__staging_direct_end so
 * that none is made meanwhile. Otherwise it goes through a registration
 * that covers it all (under the cache's in-flight rules), or is staged. */
static sg_status direct_or_else(sg__staging *st, uint32_t index, const sg__copy *c, void *host,
                                const char *where, sg__copy_route *route) {
  sg__staged_node *sn = &st->nodes[index];
  if (!st->mem->dma) return SG_OK;
  if (sg__reg_direct_begin(st->mem, host, c->bytes)) {
    sn->direct = 1;
    return SG_OK;
  }
  if (!sn->reg) {
    sg__reg_binding *b = NULL;
    sg_status s = sg__reg_bind_pieces(st->mem, host, c->bytes, 0, where, &b);
    if (s) return s;
    sn->reg = b;
  }
  if (sn->reg && sg__reg_use_begin(sn->reg)) {
    *route = SG__ROUTE_REGISTERED;
    return SG_OK;
  }
  *route = SG__ROUTE_STAGE;
  return attach_pool(st, where);
}

sg_status sg__staging_route(sg__staging *st, uint32_t index, const sg__copy *c, const char *where,
                            sg__copy_route *route) {
  sg__staged_node *sn = &st->nodes[index];
  if (sn->seen_src != c->src || sn->seen_dst != c->dst || sn->seen_bytes != c->bytes) {
    /* Per-launch regime: no ring is prepared, so no name is needed. */
    sg_status s =
        sg__staging_update(st, index, NULL, c, sg__staging_classify(st->mem, c), 1, where);
    if (s) return s;
  }
  if (!sn->dir) { /* no candidate any more: the driver's path, or memcpy */
    *route = SG__ROUTE_DIRECT;
    return SG_OK;
  }
  void *host, *device;
  sg__staging_sides(c, sn->dir, &host, &device);
  sg__route_facts facts = facts_of(st, c, sn->dir, sn->streak, sn->no_register);
  if (sn->reg) {
    /* The first decision after a registration is done takes it. */
    if (sg__reg_use_begin(sn->reg)) {
      *route = SG__ROUTE_REGISTERED;
      return SG_OK;
    }
    facts.reg_pending = sg__reg_pending(sn->reg);
    if (facts.reg_pending) { /* staged until it is registered: never waited for */
      *route = sg__route_choose(&facts).otherwise;
      return SG_OK;
    }
    /* Evicted (count the launches again) or refused (stop asking). */
    if (sg__reg_refused(sn->reg)) sn->no_register = 1;
    sg__reg_unbind(sn->reg);
    sn->reg = NULL;
    sn->streak = 0;
  }
  /* This launch counts towards AUTO's streak (a copy AUTO would stage). */
  if (st->policy == SG_STAGING_AUTO && c->bytes >= facts.auto_min_bytes &&
      sn->streak < st->register_after)
    sn->streak++;
  facts.streak = sn->streak;
  facts.no_register = sn->no_register;
  const sg__route_choice choice = sg__route_choose(&facts);
  *route = choice.otherwise;
  if (choice.reg != SG__REG_SKIP) {
    /* The background registration is off the launch path: the copy stages
     * until it is done (docs/staging.md, "Registration"). */
    sg__reg_binding *b = NULL;
    sg_status s = choice.reg == SG__REG_BACKGROUND
                      ? sg__reg_bind_background(st->mem, st->device, host, c->bytes, where, &b)
                      : sg__reg_bind_pieces(st->mem, host, c->bytes, choice.reg == SG__REG_NOW,
                                            where, &b);
    if (s) return s;
    if (b) {
      sn->reg = b;
      if (sg__reg_use_begin(b)) {
        *route = SG__ROUTE_REGISTERED;
        return SG_OK;
      }
    } else if (choice.reg != SG__REG_EXISTING) {
      sn->no_register = 1; /* do not pay for a refused registration at every launch */
    }
  }
  if (*route == SG__ROUTE_DIRECT) return direct_or_else(st, index, c, host, where, route);
  return SG_OK;
}

void sg__staging_enqueue_begin(const sg__staging *st) {
  if (st) sg__reg_enqueue_begin(st->mem);
}

void sg__staging_enqueue_end(const sg__staging *st) {
  if (st) sg__reg_enqueue_end(st->mem);
}

void sg__staging_direct_end(sg__staging *st, uint32_t index, const sg__copy *c) {
  if (!st || index >= st->node_count || !st->nodes[index].direct) return;
  sg__staged_node *sn = &st->nodes[index];
  void *host, *device;
  sg__staging_sides(c, sn->dir, &host, &device);
  sg__reg_direct_end(st->mem, host, c->bytes);
  sn->direct = 0;
}

/* ---- memop protocol ----------------------------------------------------- */

void sg__staging_settle(sg__staging *st) {
  if (st && st->pool && st->protocol == SG__STAGE_MEMOPS) sg__stage_settle(st->pool);
}

void sg__staging_disown(sg__staging *st, void *report_ctx) {
  if (st && st->pool && st->protocol == SG__STAGE_MEMOPS) sg__stage_disown(st->pool, report_ctx);
}

void sg__staging_trace_run(const sg__staging *st, sg__stage_run *run, uint32_t index,
                           const char *name) {
  sg__stage_run_trace(run, &st->spans, index, name);
}
