#define _POSIX_C_SOURCE 200809L /* nanosleep */
/* The host backend's memory for staging (stage_mem.h): the pool and the
 * registration cache run the same code as on CUDA, over plain memory. */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "core/error.h"
#include "core/sys.h"
#include "exec/staging_api.h"
#include "host/host_stage_mem.h"

/* Page alignment: a plain slab behaves like cudaHostAlloc'ed memory, and
 * chunk copies start on page boundaries. */
#define PAGE 4096u

static sg_status slab_alloc(int device, size_t bytes, const char *where, void **out) {
  *out = sg__aligned_alloc(PAGE, bytes);
  if (!*out)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for a %zu-byte staging slab", where,
                    bytes);
  return SG_OK;
}

static void slab_free(void *ptr) { sg__free(ptr); }

static atomic_uint_least64_t pin_ns_per_mib;

void sg__host_pin_slow(uint64_t ns_per_mib) { atomic_store(&pin_ns_per_mib, ns_per_mib); }

/* Nothing to pin: registration is bookkeeping only (the cache still runs
 * its LRU, limits and in-flight rules). It can fail, as cudaHostRegister
 * can (a fault point), and take time (a test hook), so that the cache's
 * handling of both runs on CI. */
static sg_status pin(int device, void *ptr, size_t bytes, const char *where) {
  if (sg__fault_point(SG_FAULT_SYSTEM, "pin"))
    return sg__fail(SG_ERR_SYSTEM, "%s: the emulated registration of %zu bytes failed (injected "
                    "fault)", where, bytes);
  const uint64_t per_mib = atomic_load(&pin_ns_per_mib);
  if (per_mib) {
    const uint64_t ns = per_mib * (uint64_t)bytes / ((uint64_t)1 << 20);
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) {}
  }
  return SG_OK;
}

static void unpin(void *ptr) {}

/* The host backend copies synchronously: it has no fence to keep. */
static sg_status fence_new(const char *where, void **out) {
  *out = NULL;
  return SG_OK;
}

/* The worker thread plays the device's stream (host_staging.c): the memop
 * protocol is always there. */
static int memops_supported(int device) { return 1; }

const sg__stage_mem sg__host_stage_mem = {
    .name = "host",
    .dma = 0,
    .device_kinds = 1u << SG_MEMORY_HOST_DEVICE,
    .slab_alloc = slab_alloc,
    .slab_free = slab_free,
    .pin = pin,
    .unpin = unpin,
    .fence_new = fence_new,
    /* never called: fence_new gives no fence */
    .fence_free = NULL,
    .fence_record = NULL,
    .fence_busy = NULL,
    .fence_wait = NULL,
    .memops_supported = memops_supported,
    .default_pool = sg__pinned_pool_default,
};
