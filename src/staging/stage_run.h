/* Internal: one staged copy, as a ring of pinned chunks, and the two
 * protocols that move it (docs/staging.md, "The staged copy"). The same on
 * every backend; only the DMA differs (cudaMemcpyAsync on a stream, a
 * memcpy on the host backend).
 *
 * The memop protocol: flags after the ring (stage_flags.h) that the device
 * waits on and writes, a program of stream operations for the device
 * (stage_program.h), and the pool's conductor (stage_conductor.h) on the
 * host side. A run is *armed* once per launch that enqueues its program;
 * the conductor serves it until the device is past its last flag.
 *
 * The callback protocol:
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
 * (a fixed cost per chunk, docs/staging.md); with L = 2 the callback a DMA
 * needs started one whole DMA earlier (on a helper stream in streams mode,
 * src/cuda/staged_copy.c), and its latency hides behind that DMA. Gates
 * (and posts) run one after the other.
 *
 * gate and post run in CUDA host callbacks (or graph host nodes). They make
 * no CUDA call and wait only for fills/drains already queued, which the copy
 * threads (or the waiter itself) finish without waiting for anything: no
 * callback ever waits for another callback, so none can deadlock, however
 * the driver schedules callbacks across streams. */
#ifndef SG_STAGING_STAGE_RUN_H
#define SG_STAGING_STAGE_RUN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "staging/pool.h"
#include "staging/stage_flags.h"
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

typedef enum sg__stage_protocol {
  SG__STAGE_CALLBACKS = 0, /* a host callback per chunk */
  SG__STAGE_MEMOPS         /* flags and stream memory operations */
} sg__stage_protocol;

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

/* Memop protocol: how a failure of a copy is reported (to the executable
 * that launched it: `sg_exec_wait` returns it), and how the conductor tells
 * whether the device has stopped for good (see pool.h). Given at each arm;
 * called by the conductor with its lock held: neither may take a staging
 * lock or wait. */
typedef void (*sg__stage_report_fn)(void *ctx, sg_status status, const char *message);
typedef struct sg__stage_watch {
  sg__stage_report_fn report;
  void *report_ctx;
  sg__pool_broken_fn broken; /* may be NULL (the host backend) */
  void *broken_ctx;
} sg__stage_watch;

/* "sg_exec_launch: copy node 'name' (#3)", as a run's messages start. */
#define SG__STAGE_WHERE_BYTES 384

/* How a run armed for the memop protocol ends (stage_conductor.h). */
typedef enum sg__stage_end {
  SG__END_PROGRAM = 0, /* the program's last write of `done` */
  SG__END_UNKNOWN,     /* a cut-short enqueue, until the backend says */
  SG__END_ABANDONED,   /* done == SG__FLAG_ABANDONED */
  SG__END_NOW,         /* the device is idle already */
  SG__END_LEAK         /* the device is broken: retire without freeing */
} sg__stage_end;

/* The conductor's bookkeeping of a memop run (guarded by its lock). */
typedef struct sg__stage_activation {
  struct sg__stage_run *next;  /* the conductor's list of armed runs */
  unsigned armed;              /* launches to serve, this one included */
  int listed;
  int started;                 /* `go` seen for this launch */
  uint32_t issued;             /* chunks whose host copy is queued */
  int released;                /* failed: every `ready` released */
  sg__stage_end end;
  uint64_t quiet_since_ns;     /* no progress since (broken-context check) */
  sg__stage_watch watch;
  char where[SG__STAGE_WHERE_BYTES]; /* how messages name the copy */
} sg__stage_activation;

/* A persistent run's launches, queued and not yet over, oldest first: the
 * pageable address each was launched with. A graph's launches run one after
 * the other, so the host side of the oldest is the one being served; the
 * graph itself names no pageable address, and a new one changes no node. */
typedef struct sg__stage_launches {
  pthread_mutex_t lock;    /* taken briefly, by callbacks too; nothing is waited for under it */
  char **host;             /* a circular queue of `cap` */
  unsigned cap, head, count;
} sg__stage_launches;

typedef struct sg__stage_run {
  sg__stage_dir dir;
  sg__stage_protocol protocol;
  int persistent;          /* the ring serves every launch of a graph */
  sg__stage_geometry g;
  char *host;              /* the pageable side of the launch being served (persistent: taken
                              from `launches` when the launch begins) */
  char *device;            /* the device side (transient; persistent: the host backend's
                              emulated DMA of the launch being served) */
  sg__stage_launches launches; /* persistent runs only */
  sg_pinned_pool *pool;
  sg__pool_block block;    /* the ring */
  sg__workers *workers;
  sg__copy_job *jobs;      /* one per slot */
  sg__stage_step *steps;   /* one per chunk */
  sg__stage_flags *flags;  /* memops: its flags (from the pool, stage_flags.h) */
  sg__stage_activation act;
  sg__copy_spans spans;    /* where its copy threads' spans go (sg__stage_run_trace) */
  uint32_t node;           /* the copy node it serves */
  char label[72];          /* that node, for NVTX ranges: "'name' (#3)" */
} sg__stage_run;

/* Its copy threads' work goes to `spans` (workers.h) as spans of node
 * `node` (named `name`, or NULL, in NVTX ranges). Set before the run is
 * used. */
void sg__stage_run_trace(sg__stage_run *run, const sg__copy_spans *spans, uint32_t node,
                         const char *name);
/* The job of chunk k's slot, labelled for traces and NVTX ranges (`drain`:
 * slot -> pageable), ready to submit. */
sg__copy_job *sg__stage_job(sg__stage_run *run, uint32_t k, int drain);

/* A run with its ring from `pool` (persistent: held until freed; else
 * transient, and the acquisition may wait, checking `broken`; see pool.h),
 * for the callback protocol. Not in a callback. */
sg_status sg__stage_run_new(sg_pinned_pool *pool, sg__stage_dir dir, void *host, void *device,
                            const sg__stage_geometry *g, int persistent,
                            sg__pool_broken_fn broken, void *broken_ctx, const char *where,
                            sg__stage_run **out);
/* Turns a new run over to the memop protocol: takes its flag page (zeroed)
 * from the pool. On failure (with its message) the run stays as it was. */
sg_status sg__stage_run_use_memops(sg__stage_run *run, const char *where);
/* Persistent runs, at every launch of the graph that names the run, on the
 * launching thread, in launch order: room for one more launch (the only
 * step that can fail, SG_ERR_OUT_OF_MEMORY with its message), then, before
 * the launch is enqueued, the pageable address `host` it copies from or to;
 * if the launch then cannot be enqueued, unqueue takes that address back
 * (the launch queued last). Nothing of a launch is baked into the graph but
 * the device side, so a new pageable address changes no graph node. */
sg_status sg__stage_launch_reserve(sg__stage_run *run, const char *where);
void sg__stage_launch_queue(sg__stage_run *run, void *host);
void sg__stage_launch_unqueue(sg__stage_run *run);
/* The host side of a launch begins (run->host becomes the pageable address
 * it was queued with) and ends (the next queued launch is the oldest). The
 * protocols call them: the first and last callback of a launch, the
 * conductor when it sees `go` and when it retires the launch. Nothing for a
 * transient run, whose address is fixed. Callback-safe. */
void sg__stage_launch_begin(sg__stage_run *run);
void sg__stage_launch_end(sg__stage_run *run);

/* Waits for its fills and drains, gives the ring back and frees the run;
 * no callback may use it any more. A memop run is first taken off the
 * conductor (released, if the device might still wait on it). Callback-safe
 * for the callback protocol. */
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
