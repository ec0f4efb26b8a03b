/* Waiting for a flag on the host (stage_flags.h). */
#define _POSIX_C_SOURCE 200809L
#include "staging/stage_flags.h"

#include <time.h>

#include "core/sys.h"

void sg__flag_spin(void) {
  for (int i = 0; i < 64; i++) {
#if defined(__x86_64__)
    _mm_pause();
#else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
  }
}

void sg__flag_wait_geq(const uint32_t *flag, uint32_t value) {
  const uint64_t start = sg__now_ns();
  uint64_t pause = SG__FLAG_SLEEP_MIN_NS;
  while (!sg__flag_geq(sg__flag_load(flag), value)) {
    if (sg__now_ns() - start < SG__FLAG_SPIN_NS) {
      sg__flag_spin();
      continue;
    }
    struct timespec ts = {0, (long)pause};
    nanosleep(&ts, NULL);
    pause = pause * 2 > SG__FLAG_SLEEP_MAX_NS ? SG__FLAG_SLEEP_MAX_NS : pause * 2;
  }
}
