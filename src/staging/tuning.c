/* Default chunk size and copy threads of a staged copy (tuning.h). */
#include "staging/tuning.h"

#include <stdint.h>

#include "core/checked.h"

#define PAGE ((size_t)4096)

/* o * r of tuning.h, in bytes, per direction, from the 1 GiB sweep of
 * staging_bench on the H200 host (8 copy threads):
 *  - host->device: 2 / 4 MiB chunks took 95 / 134 us each against 38 / 76 us
 *    of DMA at 55 GB/s, so o = 57 us; with 16 MiB chunks the copy threads set
 *    the pace, r = 38.8 GB/s. 57 us * 38.8 GB/s = 2.2 MB.
 *  - device->host: 2 / 4 / 16 MiB chunks took 142 / 177 / 407 us, the DMA
 *    plus o = 102 us every time; r >= 41.2 GB/s (16 MiB chunks).
 *    102 us * 41.2 GB/s = 4.2 MB.
 * Device->host pays more per chunk, so it gets larger chunks: 16 MiB for a
 * 64 MiB copy, where host->device gets 10.7 MiB. */
#define H2D_OVERHEAD_TIMES_RATE ((uint64_t)57 * 38800)  /* us * MB/s = bytes */
#define D2H_OVERHEAD_TIMES_RATE ((uint64_t)102 * 41200)

/* The memop protocol has no callback per chunk: what remains is one DMA's
 * setup (pinned copies lose ~3 us per call: 48.2 GB/s in 1 MiB calls
 * against 55 GB/s, ../shared/h200-limits.md) and one batch of stream
 * memory operations, taken as 5 us in both directions until the
 * benchmark's chunk sweep under this protocol measures it; r as above.
 * 64 MiB then goes in 19 chunks of 3.4 MiB, 1 GiB in 74 of 13.8 MiB,
 * 4 MiB in four of 1 MiB. */
#define MEMOPS_H2D_OVERHEAD_TIMES_RATE ((uint64_t)5 * 38800)
#define MEMOPS_D2H_OVERHEAD_TIMES_RATE ((uint64_t)5 * 41200)

static uint64_t isqrt(uint64_t n) {
  uint64_t lo = 0, hi = (uint64_t)1 << 32;
  while (lo + 1 < hi) { /* invariant: lo*lo <= n < hi*hi */
    uint64_t mid = lo + (hi - lo) / 2;
    if (mid <= n / mid) lo = mid; else hi = mid;
  }
  return lo;
}

/* sqrt(bytes * k) between the bounds, split evenly (k = o * r). */
static size_t chunk_for(uint64_t k, size_t bytes) {
  if (bytes <= SG__STAGE_MIN_AUTO_CHUNK) return bytes ? bytes : 1;
  uint64_t max = SG__STAGE_MAX_AUTO_CHUNK;
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
  return chunk_for(to_device ? H2D_OVERHEAD_TIMES_RATE : D2H_OVERHEAD_TIMES_RATE, bytes);
}

size_t sg__stage_auto_chunk_memops(int to_device, size_t bytes) {
  return chunk_for(to_device ? MEMOPS_H2D_OVERHEAD_TIMES_RATE : MEMOPS_D2H_OVERHEAD_TIMES_RATE,
                   bytes);
}

/* Three quarters of the CPUs, at most 12, in both directions. Run 7 of
 * 2026-11-30 (bench/RESULTS.md), default chunks, GB/s with 4 / 8 / 12 / 16
 * threads: host->device 64 MiB 27.5 / 30.7 / 34.2 / 32.7, 1 GiB 33.1 / 42.1
 * / 51.2 / 50.7; device->host 64 MiB 31.1 / 34.4 / 40.6 / 41.0, 1 GiB 36.8
 * / 41.8 / 51.0 / 51.3: 12 threads beat 8 in every case, by 12-22%, and 16
 * add nothing (runs 8-12 found 12 and 8 closer, 12 ahead at 1 GiB). (Earlier, with 4 MiB chunks, 8 and 12 threads were alike:
 * the per-chunk cost set the pace there.) The threads work only while a
 * staged copy runs; a quarter of the CPUs stays with the application even
 * then, and a 2-CPU machine gets one thread (plus the callback thread,
 * which copies the parts nobody has claimed). */
unsigned sg__stage_default_threads(int to_device, unsigned cpus) {
  (void)to_device; /* the same in both directions, by the figures above */
  unsigned n = cpus * 3 / 4;
  return n < 1 ? 1 : n > 12 ? 12 : n;
}

/* Non-temporal stores against plain memcpy, same chunks, threads and run
 * (H200 host, 12 threads unless said, bench/RESULTS.md, runs of 2026-11-30):
 *  - host->device 64 MiB: non-temporal faster in every run, by 6-19% with
 *    the same source copied again and again, and by 22-30% (e.g. 36.7
 *    against 28.2 GB/s) with a cold source (a different 64 MiB window each
 *    run, runs 11-12); with 8 threads too (runs 5 and 7);
 *  - host->device 256 MiB: memcpy faster (49.2 against 44.4 GB/s, run 12);
 *  - host->device 1 GiB: memcpy faster in every run, by 6-27% (runs 4-12);
 *  - device->host: non-temporal faster when the destination is cold (1 GiB:
 *    +4-16%; 64 MiB windows: +10-23%), slower by 9-25% when the same 64 MiB
 *    destination is written again and again, which an application reusing
 *    its output buffers does; device->host meets its target either way, so
 *    it keeps memcpy, which does not push a reused destination out of the
 *    caches.
 * Host->device switches at 128 MiB, between the sizes measured (which is
 * also about where its adaptive chunk reaches the 16 MiB cap). */
int sg__stage_nontemporal_default(int to_device, size_t bytes) {
  return to_device && bytes <= SG__STAGE_NONTEMPORAL_MAX_BYTES;
}
