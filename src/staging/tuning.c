/* Default chunk size and copy threads of a staged copy (tuning.h). */
#include "staging/tuning.h"

#include <stdint.h>

#include "core/checked.h"

#define PAGE ((size_t)4096)

/* o * r of tuning.h, in bytes, per direction (us * MB/s), as the staging
 * sweep measured them on the H200 host (docs/staging.md, "The chunk
 * size"). Device->host pays more per chunk, so it gets larger chunks. */
#define H2D_OVERHEAD_TIMES_RATE ((uint64_t)57 * 38800)  /* us * MB/s = bytes */
#define D2H_OVERHEAD_TIMES_RATE ((uint64_t)102 * 41200)

/* The memop protocol has no callback per chunk: what remains per chunk is
 * one DMA's setup, one batch of stream memory operations and the hand-over
 * between the GPU and the conductor (a poll round trip on each side). The
 * benchmark's chunk sweep under this protocol (1 to 16 MiB chunks at 64
 * MiB and 256 MiB, bench/RESULTS.md) fits o at about 14 us host->device
 * and 40 us device->host, where the conductor sees `done` only after the
 * DMA and its drain starts then; r as above. 4 MiB then goes in 3 chunks
 * host->device and 2 device->host. Where the rule would give chunks above
 * SG__STAGE_MEMOPS_LONG_CHUNK (host->device from about 31 MiB,
 * device->host from about 10 MiB) the copy is long: 4 MiB chunks, a deeper
 * ring and fewer threads (tuning.h). */
#define MEMOPS_H2D_OVERHEAD_TIMES_RATE ((uint64_t)14 * 38800)
#define MEMOPS_D2H_OVERHEAD_TIMES_RATE ((uint64_t)40 * 41200)

static uint64_t isqrt(uint64_t n) {
  uint64_t lo = 0, hi = (uint64_t)1 << 32;
  while (lo + 1 < hi) { /* invariant: lo*lo <= n < hi*hi */
    uint64_t mid = lo + (hi - lo) / 2;
    if (mid <= n / mid) lo = mid; else hi = mid;
  }
  return lo;
}

/* sqrt(bytes * k) between the bounds (max the upper one), split evenly
 * (k = o * r). */
static size_t chunk_for(uint64_t k, size_t bytes, uint64_t max) {
  if (bytes <= SG__STAGE_MIN_AUTO_CHUNK) return bytes ? bytes : 1;
  /* sqrt(bytes * k); a product that would overflow is far beyond max. */
  uint64_t best = (uint64_t)bytes > UINT64_MAX / k ? max : isqrt((uint64_t)bytes * k);
  if (best < SG__STAGE_MIN_AUTO_CHUNK) best = SG__STAGE_MIN_AUTO_CHUNK;
  if (best > max) best = max;
  if (best >= bytes) return bytes;
  /* Equal chunks, as many as rounding bytes / best says, none above max. */
  /* (No `bytes + x`: bytes may be near SIZE_MAX.) */
  uint64_t n = bytes / best + (bytes % best >= best - best / 2);
  uint64_t least = sg__ceil_div(bytes, max);
  if (n < least) n = least;
  if (n < 1) n = 1;
  size_t chunk = sg__ceil_div(bytes, (size_t)n); /* <= max: n >= bytes / max */
  if (sg__round_up_overflows(chunk, PAGE, &chunk)) return bytes;
  return chunk < bytes ? chunk : bytes;
}

size_t sg__stage_auto_chunk(int to_device, size_t bytes) {
  return chunk_for(to_device ? H2D_OVERHEAD_TIMES_RATE : D2H_OVERHEAD_TIMES_RATE, bytes,
                   SG__STAGE_MAX_AUTO_CHUNK);
}

static uint64_t memops_k(int to_device) {
  return to_device ? MEMOPS_H2D_OVERHEAD_TIMES_RATE : MEMOPS_D2H_OVERHEAD_TIMES_RATE;
}

size_t sg__stage_auto_chunk_memops(int to_device, size_t bytes) {
  return chunk_for(memops_k(to_device), bytes, SG__STAGE_MEMOPS_LONG_CHUNK);
}

/* Long: sqrt(bytes * k) > the long chunk, the point where chunk_for caps. */
int sg__stage_memops_long(int to_device, size_t bytes) {
  const uint64_t cap = SG__STAGE_MEMOPS_LONG_CHUNK;
  return (uint64_t)bytes > cap * cap / memops_k(to_device);
}

/* Half the CPUs, at most 8. Section 7 of staging_bench sets 4 MiB chunks
 * in a ring of 8 with 8 threads beside the adaptive chunk (up to 16 MiB)
 * in a ring of 4 with 12 or 16 threads in every run: ahead at 1 GiB
 * host->device and at 64 MiB device->host, even elsewhere (docs/staging.md,
 * "Long memop copies", has the runs). Fewer threads also slow the DMA
 * less: a pinned DMA slows the more host threads copy beside it (the same
 * section measures it). */
unsigned sg__stage_memops_long_threads(unsigned cpus) {
  unsigned n = cpus / 2;
  return n < 1 ? 1 : n > 8 ? 8 : n;
}

size_t sg__stage_auto_min_bytes(int memops, int to_device) {
  if (!memops) return SG__STAGE_AUTO_MIN_CALLBACKS;
  return to_device ? SG__STAGE_AUTO_MIN_MEMOPS_H2D : SG__STAGE_AUTO_MIN_MEMOPS_D2H;
}

/* Three quarters of the CPUs, at most 12, in both directions: under the
 * callback protocol 12 threads beat 8 at every size and direction measured,
 * and 16 added nothing (docs/staging.md, `copy_threads`); a quarter of the
 * CPUs stays with the application while a copy runs, and a 2-CPU machine
 * gets one thread (plus the callback thread, which copies the parts nobody
 * has claimed). With chunks of up to 16 MiB a copy of 256 MiB or 1 GiB
 * went faster with 16 threads than with 12 in every sweep of the H200 host,
 * both directions (by 1-14%, bench/RESULTS.md run 17), where 64 MiB gained
 * nothing: large copies take every CPU, at most 16. (Under the memop
 * protocol such copies are long and take sg__stage_memops_long_threads.)
 * The threads work only while a staged copy runs. */
unsigned sg__stage_default_threads(int to_device, size_t bytes, unsigned cpus) {
  (void)to_device; /* the same in both directions, by the measurements */
  if (bytes >= SG__STAGE_ALL_THREADS_BYTES) return cpus < 1 ? 1 : cpus > 16 ? 16 : cpus;
  unsigned n = cpus * 3 / 4;
  return n < 1 ? 1 : n > 12 ? 12 : n;
}

/* Non-temporal stores against plain memcpy, same chunks and threads
 * (docs/staging.md, "Store kind"): host->device they win at 64 MiB, most
 * with a cold source, and lose at 256 MiB and 1 GiB; device->host they win
 * only when the destination is cold and lose when an application writes
 * the same output buffers again and again, so device->host keeps memcpy,
 * which does not push a reused destination out of the caches. Host->device
 * switches at 128 MiB, between the sizes measured (about where its adaptive
 * chunk reaches the 16 MiB cap). */
int sg__stage_nontemporal_default(int to_device, size_t bytes) {
  return to_device && bytes <= SG__STAGE_NONTEMPORAL_MAX_BYTES;
}
