/* The CUDA side of the memop protocol (staged_memops.h): driver entry
 * points, the device probe, and the program on a stream or in a graph. */
#define _POSIX_C_SOURCE 200809L
#include "cuda/staged_memops.h"

#include <cuda.h> /* types only: the functions come from the entry-point query */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h" /* sg__cuda_current_context */
#include "cuda/stage_mem.h"
#include "staging/stage_conductor.h"
#include "staging/stage_program.h"

typedef CUresult (*batch_fn)(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int);
typedef CUresult (*graph_batch_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                   const CUDA_BATCH_MEM_OP_NODE_PARAMS *);

static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;
static batch_fn stream_batch;
static graph_batch_fn graph_batch;

/* One driver function of the CUDA 12 API, or NULL. Not a fault point: the
 * answer is kept for the process. */
static void *entry(const char *name) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return p;
}

static void lookup(void) {
  void *p = entry("cuStreamBatchMemOp");
  memcpy(&stream_batch, &p, sizeof stream_batch); /* object to function pointer */
  p = entry("cuGraphAddBatchMemOpNode");
  memcpy(&graph_batch, &p, sizeof graph_batch);
}

/* A driver call through the fault-injection point, its result as a runtime
 * error (see staged_memops.h). */
#define SG_CU(call) (sg__fault_hit(SG_FAULT_CUDA) ? cudaErrorUnknown : (cudaError_t)(call))

/* One operation of the program as a driver memory operation. The flags are
 * pinned memory from cudaHostAlloc: with unified addressing (checked by the
 * probe) their host address is their device address. Writes keep the
 * default memory barrier: the stream's earlier writes (a DMA into a slot)
 * are visible before the flag. */
static void memop(const sg__stage_op *op, CUstreamBatchMemOpParams *p) {
  memset(p, 0, sizeof *p);
  if (op->kind == SG__OP_WRITE) {
    p->writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    p->writeValue.address = (CUdeviceptr)(uintptr_t)op->flag;
    p->writeValue.value = op->value;
    p->writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  } else {
    p->waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    p->waitValue.address = (CUdeviceptr)(uintptr_t)op->flag;
    p->waitValue.value = op->value;
    p->waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  }
}

/* ---- the probe ------------------------------------------------------------- */

#define MAX_DEVICES 64
/* Per device: 0 not known yet, 1 supported, 2 not supported. */
static atomic_int support[MAX_DEVICES];

/* A write, a wait on the value written and a second write, on a fresh
 * stream: *answer 1 if they completed within a second and left the second
 * value; 0 otherwise (then remembered). A failed call returns its error and
 * leaves *answer unset (not remembered). Device `device` is current. */
static cudaError_t probe(int *answer) {
  uint32_t *word = NULL;
  cudaStream_t stream = NULL;
  void *mapped = NULL;
  cudaError_t err = SG_CUDA(cudaHostAlloc((void **)&word, 4096, cudaHostAllocPortable));
  if (err != cudaSuccess) return err;
  *word = 0;
  /* With unified addressing, memory from cudaHostAlloc is reached from the
   * device at its host address, whatever the allocation flags (runtime API,
   * "Unified Addressing"). Should the runtime still map it elsewhere, the
   * flags' host addresses would be wrong: not handled. (The query may fail
   * in a context made without cudaDeviceMapHost; the probe below decides.) */
  if (cudaHostGetDevicePointer(&mapped, word, 0) == cudaSuccess && mapped != (void *)word) {
    *answer = 0;
    cudaFreeHost(word);
    return cudaSuccess;
  }
  cudaGetLastError();
  err = SG_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (err == cudaSuccess) {
    const sg__stage_op ops[3] = {
        {SG__OP_WRITE, word, 1, 0}, {SG__OP_WAIT, word, 1, 0}, {SG__OP_WRITE, word, 2, 0}};
    CUstreamBatchMemOpParams p[3];
    for (int i = 0; i < 3; i++) memop(&ops[i], &p[i]);
    err = SG_CU(stream_batch((CUstream)stream, 3, p, 0));
  }
  if (err == cudaSuccess) {
    const uint64_t start = sg__now_ns();
    cudaError_t q;
    while ((q = cudaStreamQuery(stream)) == cudaErrorNotReady &&
           sg__now_ns() - start < (uint64_t)1000000000) {
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
    if (q == cudaErrorNotReady) {
      /* The wait never saw the write: let it go, and answer no. */
      sg__flag_store(word, 2);
      *answer = 0;
    } else if (q != cudaSuccess) {
      err = q;
    } else {
      *answer = sg__flag_load(word) == 2;
    }
  }
  if (stream) {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
  cudaFreeHost(word);
  cudaGetLastError();
  return err;
}

int sg__staging_cuda_memops_supported(int device) {
  if (device < 0 || device >= MAX_DEVICES) return 0;
  int known = atomic_load(&support[device]);
  if (known) return known == 1;
  pthread_once(&lookup_once, lookup);
  if (!stream_batch || !graph_batch) {
    atomic_store(&support[device], 2);
    return 0;
  }
  int unified = 0;
  if (SG_CUDA(cudaDeviceGetAttribute(&unified, cudaDevAttrUnifiedAddressing, device)) !=
      cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if (!unified) {
    atomic_store(&support[device], 2);
    return 0;
  }
  int previous = device;
  if (cudaGetDevice(&previous) != cudaSuccess || SG_CUDA(cudaSetDevice(device)) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  int answer = 0;
  cudaError_t err = probe(&answer);
  cudaSetDevice(previous);
  if (err != cudaSuccess) return 0; /* ask again next time */
  atomic_store(&support[device], answer ? 1 : 2);
  return answer;
}

/* ---- streams mode ------------------------------------------------------------ */

#define BATCH_MAX 255u /* cuStreamBatchMemOp takes fewer than 256 */

typedef struct stream_emit {
  const sg__stage_run *run;
  cudaStream_t stream;
  CUstreamBatchMemOpParams batch[BATCH_MAX];
  unsigned count;
  cudaError_t err;
  const char *call;
} stream_emit;

static int flush_stream(stream_emit *e) {
  if (!e->count) return 0;
  e->call = "cuStreamBatchMemOp (staging)";
  e->err = SG_CU(stream_batch((CUstream)e->stream, e->count, e->batch, 0));
  e->count = 0;
  return e->err != cudaSuccess;
}

static int to_stream(void *ctx, const sg__stage_op *op) {
  stream_emit *e = ctx;
  if (op->kind != SG__OP_DMA) {
    if (e->count == BATCH_MAX && flush_stream(e)) return 1;
    memop(op, &e->batch[e->count++]);
    return 0;
  }
  if (flush_stream(e)) return 1;
  const sg__stage_run *run = e->run;
  char *dev = run->device + sg__stage_offset(run, op->chunk), *slot = sg__stage_slot(run, op->chunk);
  const int h2d = run->dir == SG__STAGE_H2D;
  e->call = "cudaMemcpyAsync (staging)";
  /* cudaMemcpyDefault: the device side may be device or managed memory. */
  e->err = SG_CUDA(cudaMemcpyAsync(h2d ? dev : slot, h2d ? slot : dev,
                                   sg__stage_len(run, op->chunk), cudaMemcpyDefault, e->stream));
  return e->err != cudaSuccess;
}

cudaError_t sg__cuda_memops_enqueue(sg__stage_run *run, cudaStream_t stream,
                                    const sg__stage_watch *watch, const char *where,
                                    const char **call) {
  pthread_once(&lookup_once, lookup);
  stream_emit *e = sg__malloc(sizeof *e);
  if (!e) {
    *call = "staging (out of host memory for a staged copy's operations)";
    sg__stage_run_free(run); /* not armed yet: nothing of it went in */
    return cudaErrorMemoryAllocation;
  }
  e->run = run;
  e->stream = stream;
  e->count = 0;
  e->err = cudaSuccess;
  e->call = "";
  /* Armed first: the conductor serves whatever part of the program goes in. */
  sg__stage_arm(run, watch, where);
  int cut = sg__stage_program(run, 0, to_stream, e);
  if (!cut) cut = flush_stream(e);
  cudaError_t err = e->err;
  *call = e->call;
  sg__free(e);
  if (!cut) return cudaSuccess;
  /* Release what went in, and find out when the device is past it. */
  cudaGetLastError();
  sg__stage_abandon(run);
  CUstreamBatchMemOpParams mark;
  const sg__stage_op op = {SG__OP_WRITE, &run->flags->done, SG__FLAG_ABANDONED, 0};
  memop(&op, &mark);
  if (SG_CU(stream_batch((CUstream)stream, 1, &mark, 0)) == cudaSuccess) {
    sg__stage_end_at(run, SG__END_ABANDONED);
  } else if (SG_CUDA(cudaStreamSynchronize(stream)) == cudaSuccess) {
    sg__stage_end_at(run, SG__END_NOW);
  } else {
    /* The context is broken: the device may still read the ring. */
    sg__stage_end_at(run, SG__END_LEAK);
  }
  cudaGetLastError();
  return err;
}

/* ---- graph mode ----------------------------------------------------------------- */

typedef struct graph_emit {
  const sg__stage_run *run;
  char *device;         /* the copy's device side */
  cudaGraph_t graph;
  CUcontext ctx;
  cudaGraphNode_t last; /* the chain so far */
  CUstreamBatchMemOpParams batch[BATCH_MAX];
  unsigned count;
  cudaError_t err;
  const char *call;
} graph_emit;

static int flush_graph(graph_emit *e) {
  if (!e->count) return 0;
  CUDA_BATCH_MEM_OP_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.ctx = e->ctx;
  p.count = e->count;
  p.paramArray = e->batch; /* copied by the call */
  p.flags = 0;
  CUgraphNode node = NULL;
  CUgraphNode dep = (CUgraphNode)e->last;
  e->call = "cuGraphAddBatchMemOpNode (staging)";
  e->err = SG_CU(graph_batch(&node, (CUgraph)e->graph, e->last ? &dep : NULL, e->last ? 1 : 0, &p));
  e->count = 0;
  if (e->err == cudaSuccess) e->last = (cudaGraphNode_t)node;
  return e->err != cudaSuccess;
}

static int to_graph(void *ctx, const sg__stage_op *op) {
  graph_emit *e = ctx;
  if (op->kind != SG__OP_DMA) {
    if (e->count == BATCH_MAX && flush_graph(e)) return 1;
    memop(op, &e->batch[e->count++]);
    return 0;
  }
  if (flush_graph(e)) return 1;
  const sg__stage_run *run = e->run;
  char *dev = e->device + sg__stage_offset(run, op->chunk), *slot = sg__stage_slot(run, op->chunk);
  const int h2d = run->dir == SG__STAGE_H2D;
  cudaGraphNode_t node = NULL;
  e->call = "cudaGraphAddMemcpyNode1D (staging)";
  e->err = SG_CUDA(cudaGraphAddMemcpyNode1D(&node, e->graph, e->last ? &e->last : NULL,
                                            e->last ? 1 : 0, h2d ? dev : slot, h2d ? slot : dev,
                                            sg__stage_len(run, op->chunk), cudaMemcpyDefault));
  if (e->err == cudaSuccess) e->last = node;
  return e->err != cudaSuccess;
}

cudaError_t sg__cuda_memops_build(sg__stage_run *run, char *device, cudaGraph_t child,
                                  const char **call) {
  pthread_once(&lookup_once, lookup);
  graph_emit *e = sg__malloc(sizeof *e);
  if (!e) {
    *call = "staging (out of host memory for a graph)";
    return cudaErrorMemoryAllocation;
  }
  memset(e, 0, sizeof *e);
  e->run = run;
  e->device = device;
  e->graph = child;
  /* Batch-memop nodes name their context: the build's, current now. */
  e->ctx = (CUcontext)sg__cuda_current_context();
  e->call = "cuCtxGetCurrent (staging: a batch-memop node needs the context)";
  e->err = e->ctx ? cudaSuccess : cudaErrorDeviceUninitialized;
  if (e->err == cudaSuccess && !sg__stage_program(run, 1, to_graph, e)) flush_graph(e);
  cudaError_t err = e->err;
  *call = e->call;
  sg__free(e);
  return err;
}
