/* A caller's stream linked to a host-backend launch (core/device.h).
 *
 * No thread the driver owns ever blocks here: the host function queued on
 * the stream only marks the launch runnable, and the stream waits for the
 * launch's end on the GPU, polling a flag in mapped pinned memory
 * (cuStreamWaitValue32). A blocking host function would be simpler but
 * could deadlock: the driver may run the host functions of all streams on
 * one thread, so a host function waiting for a launch whose own gate is
 * queued behind it would wait forever.
 *
 * Flags live in pages of portable, mapped pinned memory that are never
 * freed, one 32-bit slot per link. A slot is reused by a later link, which
 * continues counting from the value the slot holds: a stream that still
 * waits on an old value (cyclic "greater or equal") stays satisfied, so a
 * slot is never freed under a pending wait.
 *
 * The driver's cuStreamWaitValue32 is reached through the runtime's entry
 * points, so that the library links the runtime only (as cuda_memset.c). */
#include <cuda.h> /* types only */
#include <pthread.h>
#include <string.h>

#include "core/device.h"
#include "core/sys.h"
#include "cuda/cuda_call.h"

#define SLOTS_PER_PAGE 1024u /* 4 KiB of 32-bit flags */
#define MAX_PAGES 64u        /* 65536 links at once */

typedef struct flag_page {
  uint32_t *host;
  CUdeviceptr device;
  uint64_t used[SLOTS_PER_PAGE / 64];
} flag_page;

static pthread_mutex_t pages_lock = PTHREAD_MUTEX_INITIALIZER;
static flag_page pages[MAX_PAGES];
static unsigned page_count;

struct sg__device_link {
  unsigned page, slot;
  uint32_t *flag;
  CUdeviceptr flag_device;
  cudaEvent_t reached;  /* recorded just before the gate; NULL until the first enqueue */
  int reached_device;   /* the device the event belongs to */
};

typedef CUresult (*wait_value_fn)(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                  unsigned int flags);
static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;
static wait_value_fn wait_value;

/* Looked up once per process. Not a fault point: a fault here would stick
 * for the life of the process; the calls through the pointer are. */
static void lookup(void) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &p, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return;
  }
  memcpy(&wait_value, &p, sizeof wait_value); /* object to function pointer */
}

/* A free slot, taking a new page when every page is full (pages_lock held). */
static sg_status take_slot(const char *fn, unsigned *page, unsigned *slot) {
  for (unsigned p = 0; p < page_count; p++)
    for (unsigned w = 0; w < SLOTS_PER_PAGE / 64; w++)
      if (~pages[p].used[w]) {
        unsigned bit = (unsigned)__builtin_ctzll(~pages[p].used[w]);
        pages[p].used[w] |= 1ull << bit;
        *page = p;
        *slot = w * 64 + bit;
        return SG_OK;
      }
  if (page_count == MAX_PAGES)
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: more than %u host-backend executables are linked to CUDA streams at "
                    "once", fn, MAX_PAGES * SLOTS_PER_PAGE);
  flag_page *pg = &pages[page_count];
  void *host = NULL;
  cudaError_t err = SG_CUDA(cudaHostAlloc(&host, SLOTS_PER_PAGE * sizeof(uint32_t),
                                          cudaHostAllocPortable | cudaHostAllocMapped));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaHostAlloc", fn);
  void *device = NULL;
  err = SG_CUDA(cudaHostGetDevicePointer(&device, host, 0));
  if (err != cudaSuccess) {
    cudaFreeHost(host);
    return sg__cuda_fail(err, "cudaHostGetDevicePointer", fn);
  }
  memset(host, 0, SLOTS_PER_PAGE * sizeof(uint32_t));
  pg->host = host;
  pg->device = (CUdeviceptr)(uintptr_t)device;
  memset(pg->used, 0, sizeof pg->used);
  pg->used[0] = 1;
  *page = page_count++;
  *slot = 0;
  return SG_OK;
}

sg_status sg__device_link_new(const char *fn, sg__device_link **out) {
  *out = NULL;
  sg__device_link *link = sg__calloc(1, sizeof *link);
  if (!link) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg__mutex_lock(&pages_lock);
  sg_status st = take_slot(fn, &link->page, &link->slot);
  if (!st) {
    link->flag = pages[link->page].host + link->slot;
    link->flag_device = pages[link->page].device + link->slot * sizeof(uint32_t);
  }
  sg__mutex_unlock(&pages_lock);
  if (st) {
    sg__free(link);
    return st;
  }
  *out = link;
  return SG_OK;
}

void sg__device_link_free(sg__device_link *link) {
  if (!link) return;
  if (link->reached) cudaEventDestroy(link->reached);
  sg__mutex_lock(&pages_lock);
  pages[link->page].used[link->slot / 64] &= ~(1ull << (link->slot % 64));
  sg__mutex_unlock(&pages_lock);
  sg__free(link);
}

uint32_t sg__device_link_value(const sg__device_link *link) {
  return __atomic_load_n(link->flag, __ATOMIC_ACQUIRE);
}

void sg__device_link_raise(sg__device_link *link, uint32_t value) {
  /* Release: everything the launch wrote is visible before the flag. */
  __atomic_store_n(link->flag, value, __ATOMIC_RELEASE);
}

/* The event marking the gate's place in the stream, on the current device
 * (a stream's event must belong to the stream's device: the caller's
 * stream is expected on the current device, as for any CUDA call). */
static sg_status ensure_event(sg__device_link *link, const char *fn) {
  int device = 0;
  cudaError_t err = SG_CUDA(cudaGetDevice(&device));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGetDevice", fn);
  if (link->reached && link->reached_device == device) return SG_OK;
  cudaEvent_t event;
  err = SG_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaEventCreateWithFlags", fn);
  if (link->reached) cudaEventDestroy(link->reached);
  link->reached = event;
  link->reached_device = device;
  return SG_OK;
}

sg_status sg__device_stream_linkable(void *stream, const char *fn) {
  /* First, before any call a capture forbids (allocating the flags, making
   * the event), which would invalidate the caller's capture. */
  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = SG_CUDA(cudaStreamIsCapturing((cudaStream_t)stream, &capture));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaStreamIsCapturing", fn);
  if (capture != cudaStreamCaptureStatusNone)
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: the stream is being captured; a host-backend launch cannot become part "
                    "of a CUDA graph (launch it outside the capture, or use the CUDA backend)",
                    fn);
  return SG_OK;
}

sg_status sg__device_link_enqueue(sg__device_link *link, void *stream, void (*open)(void *),
                                  void *arg, uint32_t value, const char *fn, int *gate_queued) {
  *gate_queued = 0;
  cudaStream_t s = (cudaStream_t)stream;
  cudaError_t err;
  pthread_once(&lookup_once, lookup);
  if (!wait_value)
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: this CUDA driver offers no cuStreamWaitValue32, which the host backend "
                    "needs to order a stream after its launch; pass NULL and synchronise the "
                    "stream yourself", fn);
  sg_status st = ensure_event(link, fn);
  if (st) return st;
  /* The event first: if it cannot be recorded, nothing is queued. */
  if ((err = SG_CUDA(cudaEventRecord(link->reached, s))) != cudaSuccess)
    return sg__cuda_fail(err, "cudaEventRecord", fn);
  if ((err = SG_CUDA(cudaLaunchHostFunc(s, open, arg))) != cudaSuccess)
    return sg__cuda_fail(err, "cudaLaunchHostFunc", fn);
  *gate_queued = 1;
  err = SG_CUDA((cudaError_t)wait_value((CUstream)s, link->flag_device, value,
                                        CU_STREAM_WAIT_VALUE_GEQ));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cuStreamWaitValue32", fn);
  return SG_OK;
}

sg_status sg__device_link_check(sg__device_link *link, const char *fn) {
  if (!link->reached) return SG_OK;
  cudaError_t err = SG_CUDA(cudaEventQuery(link->reached));
  if (err == cudaSuccess || err == cudaErrorNotReady) return SG_OK;
  cudaGetLastError(); /* reported here; do not let it surface elsewhere */
  return sg__cuda_fail(err, "the caller's stream (cudaEventQuery)", fn);
}
