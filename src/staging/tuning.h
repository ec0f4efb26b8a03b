/* Internal: what a staged copy gets when its options leave a number at zero
 * - chunk size, copy threads, store kind. The measurements behind each
 * choice are in docs/staging.md ("Defaults, and why") and bench/RESULTS.md.
 *
 * The chunk size adapts to the copy. Each chunk costs a fixed time o: the
 * host callbacks that gate its DMA (host->device) or drain its slot
 * (device->host) run one after the other, and even with the protocol's lag
 * (stage_run.h), which keeps them off the DMA's path, they bound the chunk
 * rate. Meanwhile the first chunk's host copy (host->device) or the last
 * one's (device->host) is not overlapped with anything. A copy of S bytes
 * in chunks of C then takes about S/B + (S/C)*o + C/r (B the DMA rate, r
 * the host copy rate), least at C = sqrt(S*o*r): big copies get big chunks,
 * and small ones few chunks, each large enough to pay for its callback.
 * Chunks are at most 16 MiB under callbacks (the best at 1 GiB in both
 * directions; a ring of four then fills one default 64 MiB pool slab), and
 * 4 MiB under the memop protocol (long copies, below). */
#ifndef SG_STAGING_TUNING_H
#define SG_STAGING_TUNING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SG__STAGE_MIN_AUTO_CHUNK ((size_t)1 << 20) /* DMA from pinned is near its peak there */
#define SG__STAGE_MAX_AUTO_CHUNK ((size_t)16 << 20)

/* The chunk size for a staged copy of `bytes` (`to_device`: host->device,
 * else device->host) when chunk_bytes is 0: `bytes` itself when one chunk
 * is best, else an even split into whole pages, between the bounds above. */
size_t sg__stage_auto_chunk(int to_device, size_t bytes);
/* The same under the memop protocol, whose per-chunk cost is a few
 * microseconds instead of a host callback's ~100 (tuning.c): smaller
 * chunks, so the pipeline fills and drains sooner, at most
 * SG__STAGE_MEMOPS_LONG_CHUNK. */
size_t sg__stage_auto_chunk_memops(int to_device, size_t bytes);

/* Under the memop protocol a copy is long when the rule above would give it
 * chunks larger than SG__STAGE_MEMOPS_LONG_CHUNK: it goes in chunks of
 * that size, in a ring of SG__STAGE_MEMOPS_LONG_RING slots, with
 * sg__stage_memops_long_threads copy threads (each where its option is 0;
 * tuning.c has the measurements; a chunk the caller chose keeps the
 * default ring). Other copies keep a ring of SG__STAGE_DEFAULT_RING and
 * sg__stage_default_threads. */
#define SG__STAGE_MEMOPS_LONG_CHUNK ((size_t)4 << 20)
#define SG__STAGE_MEMOPS_LONG_RING 8u
#define SG__STAGE_DEFAULT_RING 4u
int sg__stage_memops_long(int to_device, size_t bytes);
unsigned sg__stage_memops_long_threads(unsigned cpus);

/* auto_min_bytes when the option is 0: below it SG_STAGING_AUTO takes the
 * driver's pageable path in streams mode. Under the callback protocol a
 * small copy costs about as much through the driver as through the
 * callbacks (1 MiB). Under the memop protocol both directions stage faster
 * from about 1 MiB on: at 256 KiB the driver's path wins device->host too
 * when every route starts from a destination the application has read (the
 * benchmark's size sweep measures both; docs/staging.md, "Defaults, and
 * why"). The two stay separate constants: the crossovers are measured per
 * direction. */
#define SG__STAGE_AUTO_MIN_CALLBACKS ((size_t)1 << 20)
#define SG__STAGE_AUTO_MIN_MEMOPS_H2D ((size_t)1 << 20)
#define SG__STAGE_AUTO_MIN_MEMOPS_D2H ((size_t)1 << 20)

/* The default auto_min_bytes of a protocol (`memops`: 1 for the memop
 * protocol) and direction (`to_device`: host->device, else device->host). */
size_t sg__stage_auto_min_bytes(int memops, int to_device);

/* Copy threads (the parts each chunk's host copy is split into) when
 * copy_threads is 0, for a copy of `bytes` on a machine of `cpus` CPUs:
 * three quarters of them, at most 12, in both directions; from
 * SG__STAGE_ALL_THREADS_BYTES on, every CPU, at most 16. */
#define SG__STAGE_ALL_THREADS_BYTES ((size_t)128 << 20)
unsigned sg__stage_default_threads(int to_device, size_t bytes, unsigned cpus);

/* Host->device copies up to this size fill their slots with non-temporal
 * stores by default; larger ones, and device->host copies, with memcpy. */
#define SG__STAGE_NONTEMPORAL_MAX_BYTES ((size_t)128 << 20)

/* 1 if the copy threads write the chunks of a staged copy of `bytes` with
 * non-temporal stores by default (tuning.c has the measurements).
 * SG_STAGING_NONTEMPORAL=1 (or 0) forces them on (or off) for a pool made
 * while it is set. */
int sg__stage_nontemporal_default(int to_device, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
