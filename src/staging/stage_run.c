/* One staged copy: its geometry, ring and protocol (stage_run.h). */
#include "staging/stage_run.h"

#include <stdio.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/sys.h"
#include "staging/stage_conductor.h"
#include "staging/tuning.h"

#define PAGE ((size_t)4096)

void sg__stage_geometry_make(size_t bytes, size_t chunk, unsigned ring, unsigned parts,
                             sg__stage_geometry *g) {
  /* Checked arithmetic throughout: `bytes` may be anything a node allows. */
  if (chunk == 0) chunk = 1;
  size_t least = sg__ceil_div(bytes, SG__STAGE_MAX_CHUNKS);
  if (chunk < least) chunk = least;
  if (chunk > bytes) chunk = bytes ? bytes : 1;
  g->bytes = bytes;
  g->chunk = chunk;
  g->chunks = (uint32_t)sg__ceil_div(bytes, chunk); /* at most SG__STAGE_MAX_CHUNKS */
  if (g->chunks == 0) g->chunks = 1;
  g->ring = ring ? ring : 1;
  if (g->ring > g->chunks) g->ring = g->chunks;
  /* A stride that does not fit is one no pool can serve: sg__stage_run_new
   * then refuses the ring. */
  if (sg__round_up_overflows(chunk, PAGE, &g->stride)) g->stride = SIZE_MAX;
  g->parts = parts ? parts : 1;
  g->lag = g->ring < SG__STAGE_LAG ? g->ring : SG__STAGE_LAG;
}

sg_status sg__stage_run_new(sg_pinned_pool *pool, sg__stage_dir dir, void *host, void *device,
                            const sg__stage_geometry *g, int persistent,
                            sg__pool_broken_fn broken, void *broken_ctx, const char *where,
                            sg__stage_run **out) {
  size_t ring_bytes;
  if (sg__mul_overflows(g->ring, g->stride, &ring_bytes))
    return sg__fail(SG_ERR_POOL_EXHAUSTED,
                    "%s: a ring of %u chunks of %zu bytes is more than any pool can hold", where,
                    g->ring, g->chunk);
  /* One allocation: the run, its slot jobs, its chunk steps (ring and
   * chunks are at most SG__STAGE_MAX_CHUNKS, so these sums are small). */
  size_t jobs_at = (sizeof(sg__stage_run) + 15) / 16 * 16;
  size_t steps_at = jobs_at + (((size_t)g->ring * sizeof(sg__copy_job) + 15) / 16 * 16);
  size_t total = steps_at + (size_t)g->chunks * sizeof(sg__stage_step);
  char *mem = sg__calloc(1, total);
  if (!mem) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  sg__stage_run *run = (sg__stage_run *)mem;
  run->dir = dir;
  run->protocol = SG__STAGE_CALLBACKS;
  run->persistent = persistent != 0;
  run->g = *g;
  run->host = host;
  run->device = device;
  run->pool = pool;
  run->workers = sg__pool_workers(pool);
  run->jobs = (sg__copy_job *)(mem + jobs_at);
  run->steps = (sg__stage_step *)(mem + steps_at);
  for (uint32_t k = 0; k < g->chunks; k++) run->steps[k] = (sg__stage_step){run, k};
  const int nontemporal = sg__stage_nontemporal_default(dir == SG__STAGE_H2D, g->bytes);
  for (unsigned s = 0; s < g->ring; s++) run->jobs[s].nontemporal = nontemporal;
  if (persistent && sg__mutex_init(&run->launches.lock)) {
    sg__free(mem);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a mutex for a staging ring", where);
  }
  /* A persistent run's queue of launches gets its first room here, so that
   * launches allocate nothing unless more are queued at once than it holds. */
  sg_status st = persistent ? sg__stage_launch_reserve(run, where) : SG_OK;
  if (!st)
    st = sg__pool_acquire(pool, ring_bytes, persistent, broken, broken_ctx, where, &run->block);
  if (st) {
    if (persistent) {
      sg__free(run->launches.host);
      sg__mutex_destroy(&run->launches.lock);
    }
    sg__free(mem);
    return st;
  }
  *out = run;
  return SG_OK;
}

sg_status sg__stage_run_use_memops(sg__stage_run *run, const char *where) {
  /* The flags of a ring of R slots fit the record (R <= 64). */
  if (sizeof(sg__stage_flags) + run->g.ring * sizeof(uint32_t) > SG__POOL_FLAG_BYTES)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: a ring of %u slots is too deep for the memop "
                    "protocol's flags", where, run->g.ring);
  void *flags;
  sg_status st = sg__pool_flags_take(run->pool, where, &flags);
  if (st) return st;
  run->flags = flags;
  run->protocol = SG__STAGE_MEMOPS;
  return SG_OK;
}

void sg__stage_run_free(sg__stage_run *run) {
  if (!run) return;
  if (run->protocol == SG__STAGE_MEMOPS) sg__stage_forget(run);
  /* Normally every fill and drain has been waited for; after a launch cut
   * short (a broken context stops the callbacks) copy threads may still be
   * finishing one, and would write into freed memory. */
  sg__stage_quiesce(run);
  sg__pool_flags_give(run->pool, run->flags);
  sg__pool_release(run->pool, &run->block);
  if (run->persistent) {
    sg__free(run->launches.host);
    sg__mutex_destroy(&run->launches.lock);
  }
  sg__free(run);
}

/* ---- a persistent run's launches ------------------------------------------ */

sg_status sg__stage_launch_reserve(sg__stage_run *run, const char *where) {
  sg__stage_launches *q = &run->launches;
  sg__mutex_lock(&q->lock);
  sg_status st = SG_OK;
  if (q->count == q->cap) {
    /* Grown by copying, oldest first, into a fresh array (the old one is
     * circular). Launches queued at once are few: growth is rare. */
    unsigned cap = q->cap ? q->cap * 2 : 4;
    char **grown = cap > q->cap ? sg__calloc(cap, sizeof *grown) : NULL;
    if (!grown) {
      st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for the staged copy's launches",
                    where);
    } else {
      for (unsigned i = 0; i < q->count; i++) grown[i] = q->host[(q->head + i) % q->cap];
      sg__free(q->host);
      q->host = grown;
      q->cap = cap;
      q->head = 0;
    }
  }
  sg__mutex_unlock(&q->lock);
  return st;
}

void sg__stage_launch_queue(sg__stage_run *run, void *host) {
  sg__stage_launches *q = &run->launches;
  sg__mutex_lock(&q->lock);
  if (q->count < q->cap) q->host[(q->head + q->count++) % q->cap] = host; /* reserved */
  sg__mutex_unlock(&q->lock);
}

void sg__stage_launch_unqueue(sg__stage_run *run) {
  sg__stage_launches *q = &run->launches;
  sg__mutex_lock(&q->lock);
  if (q->count) q->count--;
  sg__mutex_unlock(&q->lock);
}

void sg__stage_launch_begin(sg__stage_run *run) {
  if (!run->persistent) return;
  sg__stage_launches *q = &run->launches;
  sg__mutex_lock(&q->lock);
  if (q->count) run->host = q->host[q->head];
  sg__mutex_unlock(&q->lock);
}

void sg__stage_launch_end(sg__stage_run *run) {
  if (!run->persistent) return;
  sg__stage_launches *q = &run->launches;
  sg__mutex_lock(&q->lock);
  if (q->count) {
    q->head = (q->head + 1) % q->cap;
    q->count--;
  }
  sg__mutex_unlock(&q->lock);
}

void sg__stage_run_trace(sg__stage_run *run, const sg__copy_spans *spans, uint32_t node,
                         const char *name) {
  run->spans = *spans;
  run->node = node;
  if (name) snprintf(run->label, sizeof run->label, "'%.48s' (#%u)", name, node);
  else snprintf(run->label, sizeof run->label, "#%u", node);
}

sg__copy_job *sg__stage_job(sg__stage_run *run, uint32_t k, int drain) {
  sg__copy_job *job = &run->jobs[k % run->g.ring];
  job->spans = run->spans;
  job->node = run->node;
  job->chunk = k;
  job->drain = drain;
  job->label = run->label;
  return job;
}

static void fill(sg__stage_run *run, uint32_t k) {
  sg__copy_submit(run->workers, sg__stage_job(run, k, 0), sg__stage_slot(run, k),
                  run->host + sg__stage_offset(run, k), sg__stage_len(run, k), run->g.parts);
}

static void drain(sg__stage_run *run, uint32_t k) {
  sg__copy_submit(run->workers, sg__stage_job(run, k, 1), run->host + sg__stage_offset(run, k),
                  sg__stage_slot(run, k), sg__stage_len(run, k), run->g.parts);
}

void sg__stage_h2d_gate(sg__stage_run *run, uint32_t k) {
  if (k == 0) {
    sg__stage_launch_begin(run);
    for (uint32_t j = 0; j < run->g.ring; j++) fill(run, j);
  } else if (k >= run->g.lag && k - run->g.lag + run->g.ring < run->g.chunks) {
    fill(run, k - run->g.lag + run->g.ring); /* DMA(k-L) is done: its slot is free */
  }
  sg__copy_wait(run->workers, &run->jobs[k % run->g.ring]);
  /* The last gate: every fill of this launch is done (each gate waited for its own). */
  if (k + 1 == run->g.chunks) sg__stage_launch_end(run);
}

void sg__stage_d2h_post(sg__stage_run *run, uint32_t k) {
  if (k == 0) sg__stage_launch_begin(run);
  drain(run, k);
  if (k + 1 == run->g.chunks) {
    sg__stage_quiesce(run);
    sg__stage_launch_end(run);
  } else if (k + run->g.lag >= run->g.ring) {
    /* DMA(k+L) reuses the slot of chunk k+L-R: its drain must be done. */
    sg__copy_wait(run->workers, &run->jobs[(k + run->g.lag) % run->g.ring]);
  }
}

void sg__stage_quiesce(sg__stage_run *run) {
  for (unsigned s = 0; s < run->g.ring; s++) sg__copy_wait(run->workers, &run->jobs[s]);
}

void sg__stage_run_host(sg__stage_run *run) {
  for (uint32_t k = 0; k < run->g.chunks; k++) {
    size_t off = sg__stage_offset(run, k), len = sg__stage_len(run, k);
    if (run->dir == SG__STAGE_H2D) {
      sg__stage_h2d_gate(run, k);
      memcpy(run->device + off, sg__stage_slot(run, k), len);
    } else {
      memcpy(sg__stage_slot(run, k), run->device + off, len);
      sg__stage_d2h_post(run, k);
    }
  }
  sg__stage_quiesce(run);
}
