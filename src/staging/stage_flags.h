/* Internal: the flags of the memop protocol (docs/staging.md, "The memop
 * protocol") - 32-bit words in one pinned page after a staged copy's ring,
 * mapped for the device at the same address. Each word has one writer at a
 * time: `go` and `done` the device (and the host resets `go` to 0 when it
 * starts serving the copy), `ready[s]` the host.
 *
 * The device compares with the driver's cyclic greater-or-equal,
 * (int32_t)(*flag - value) >= 0; values stay far below 2^31, so a released
 * `ready` (SG__FLAG_RELEASE) satisfies every wait a program makes. */
#ifndef SG_STAGING_STAGE_FLAGS_H
#define SG_STAGING_STAGE_FLAGS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* The flag page: `go` and `done` on lines of their own (the device writes
 * them, the host polls them), then the slots' `ready` words. */
#define SG__FLAG_PAGE_BYTES ((size_t)4096)
#define SG__FLAG_LINE 16u /* words per 64-byte line */

typedef struct sg__stage_flags {
  uint32_t go;
  uint32_t pad0[SG__FLAG_LINE - 1];
  uint32_t done;
  uint32_t pad1[SG__FLAG_LINE - 1];
  uint32_t ready[]; /* one per slot */
} sg__stage_flags;

/* Written into every `ready` to release a copy: satisfies every wait. */
#define SG__FLAG_RELEASE 0x40000000u
/* The `done` a backend writes after a program cut short by a failed
 * enqueue: above every value a program writes. */
#define SG__FLAG_ABANDONED 0x7fff0000u

/* The device's comparison. */
static inline int sg__flag_geq(uint32_t now, uint32_t value) {
  return (int32_t)(now - value) >= 0;
}

static inline uint32_t sg__flag_load(const uint32_t *flag) {
  return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* Makes everything this thread stored before - non-temporal stores too -
 * visible to the device before the flag is. */
static inline void sg__flag_store(uint32_t *flag, uint32_t value) {
#if defined(__x86_64__)
  _mm_sfence();
#endif
  __atomic_store_n(flag, value, __ATOMIC_SEQ_CST);
}

/* Raises the flag to `value` unless it is there already (cyclically): a
 * host copy finishing after its copy was released must not take the
 * release back. Fenced as sg__flag_store. */
static inline void sg__flag_raise(uint32_t *flag, uint32_t value) {
#if defined(__x86_64__)
  _mm_sfence();
#endif
  uint32_t now = __atomic_load_n(flag, __ATOMIC_RELAXED);
  while (!sg__flag_geq(now, value) &&
         !__atomic_compare_exchange_n(flag, &now, value, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
  }
}

/* How a host thread waits for a flag (the conductor, the host backend's
 * emulated stream): it spins for SPIN after its last progress, then sleeps
 * SLEEP_MIN, doubling up to SLEEP_MAX. Short enough that a copy's start is
 * noticed within ~0.1 ms of the device reaching it, long enough that a
 * copy queued behind long work costs little CPU (the benchmark reports the
 * CPU time per staged copy). */
#define SG__FLAG_SPIN_NS ((uint64_t)20 * 1000)
#define SG__FLAG_SLEEP_MIN_NS ((uint64_t)10 * 1000)
#define SG__FLAG_SLEEP_MAX_NS ((uint64_t)100 * 1000)

/* Blocks until (int32_t)(*flag - value) >= 0: spins briefly, then sleeps
 * with growing pauses (the host backend's emulated stream waits so). */
void sg__flag_wait_geq(const uint32_t *flag, uint32_t value);

/* A short busy pause (a few hundred nanoseconds). */
void sg__flag_spin(void);

#endif
