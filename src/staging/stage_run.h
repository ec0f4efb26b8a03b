/* Internal: one staged copy, as a ring of pinned chunks, and the protocol
 * that moves it. The protocol is the same on every backend; only the DMA
 * differs (cudaMemcpyAsync on a stream, a memcpy on the host backend).
 *
 * Host -> device, chunk k of n, ring of R slots (slot k % R), lag L:
 *     gate(k); DMA(k): slot -> device
 *   gate(0) queues the fills (pageable -> slot) of chunks 0..R-1; gate(k),
 *   k >= L, runs after DMA(k-L), so slot (k-L) % R is free and it queues
 *   the fill of chunk k-L+R into it; then every gate waits for its own
 *   chunk's fill. The copy threads keep up to R-L fills ahead, so the host
 *   copy of chunk k+1 overlaps the DMA of chunk k.
 * Device -> host, the mirror image:
 *     DMA(k): device -> slot; post(k)
 *   post(k) queues the drain (slot -> pageable) of chunk k, then, before
 *   DMA(k+L) may reuse slot (k+L) % R, waits for the drain of chunk k+L-R;
 *   post(n-1) waits for every drain, so the destination is complete when the
 *   copy is. DMA(k), k >= R, runs after post(k-L).
 *
 * The lag keeps the callbacks off the DMAs' path: with L = 1 every DMA
 * waits for a callback that could only start once the DMA before it ended
 * (a fixed ~57 us host->device, ~102 us device->host per chunk on the H200
 * host); with L = 2 the callback a DMA needs started one whole DMA earlier
 * (on a helper stream in streams mode, cuda_staging.c), and its latency
 * hides behind that DMA. Gates (and posts) run one after the other.
 *
 * gate and post run in CUDA host callbacks (or graph host nodes). They make
 * no CUDA call and wait only for fills/drains already queued, which the copy
 * threads (or the waiter itself) finish without waiting for anything: no
 * callback ever waits for another callback, so none can deadlock, however
 * the driver schedules callbacks across streams. */
#ifndef SG_STAGING_STAGE_RUN_H
#define SG_STAGING_STAGE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "staging/pool.h"
#include "staging/workers.h"

/* Chunks per copy at most: larger copies get larger chunks (bounds the work
 * per launch and the nodes of a graph-mode copy). */
#define SG__STAGE_MAX_CHUNKS 1024u
/* The lag L of the protocol above (at most the ring). */
#define SG__STAGE_LAG 2u

typedef enum sg__stage_dir {
  SG__STAGE_NONE = 0,
  SG__STAGE_H2D,  /* pageable host -> device */
  SG__STAGE_D2H   /* device -> pageable host */
} sg__stage_dir;

typedef struct sg__stage_geometry {
  size_t bytes;
  size_t chunk;     /* bytes per chunk (the last may be shorter) */
  uint32_t chunks;
  unsigned ring;    /* slots, <= chunks */
  size_t stride;    /* bytes between slots (page multiple) */
  unsigned parts;   /* copy threads per chunk */
  unsigned lag;     /* L of the protocol, 1..min(ring, SG__STAGE_LAG) */
} sg__stage_geometry;

void sg__stage_geometry_make(size_t bytes, size_t chunk, unsigned ring, unsigned parts,
                             sg__stage_geometry *g);

struct sg__stage_run;
/* What a callback is handed: its run and chunk. */
typedef struct sg__stage_step {
  struct sg__stage_run *run;
  uint32_t chunk;
} sg__stage_step;

typedef struct sg__stage_run {
  sg__stage_dir dir;
  sg__stage_geometry g;
  char *host;              /* the pageable side */
  char *device;            /* the device side */
  sg_pinned_pool *pool;
  sg__pool_block block;    /* the ring */
  sg__workers *workers;
  sg__copy_job *jobs;      /* one per slot */
  sg__stage_step *steps;   /* one per chunk */
} sg__stage_run;

/* A run with its ring from `pool` (persistent: held until freed; else
 * transient, and the acquisition may wait, checking `broken`; see pool.h).
 * Not in a callback. */
sg_status sg__stage_run_new(sg_pinned_pool *pool, sg__stage_dir dir, void *host, void *device,
                            const sg__stage_geometry *g, int persistent,
                            sg__pool_broken_fn broken, void *broken_ctx, const char *where,
                            sg__stage_run **out);
/* Waits for its fills and drains, gives the ring back and frees the run;
 * no callback may use it any more. Callback-safe. */
void sg__stage_run_free(sg__stage_run *run);

static inline char *sg__stage_slot(const sg__stage_run *run, uint32_t k) {
  return (char *)run->block.ptr + (size_t)(k % run->g.ring) * run->g.stride;
}
static inline size_t sg__stage_offset(const sg__stage_run *run, uint32_t k) {
  return (size_t)k * run->g.chunk;
}
static inline size_t sg__stage_len(const sg__stage_run *run, uint32_t k) {
  size_t off = sg__stage_offset(run, k);
  return run->g.bytes - off < run->g.chunk ? run->g.bytes - off : run->g.chunk;
}

/* The protocol (callback-safe). */
void sg__stage_h2d_gate(sg__stage_run *run, uint32_t k);
void sg__stage_d2h_post(sg__stage_run *run, uint32_t k);
/* Waits for every fill or drain still running (after a partial enqueue). */
void sg__stage_quiesce(sg__stage_run *run);

/* The whole copy on the calling thread, the DMA emulated by memcpy (the
 * host backend). */
void sg__stage_run_host(sg__stage_run *run);

#endif
