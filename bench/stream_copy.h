// The staging benchmarks' host copy, shared by their baselines (the
// host-copy ceiling, the staged copy by hand): n bytes with non-temporal
// stores where asked and the destination is 16-byte aligned (x86-64), else
// memcpy. Non-temporal stores are fenced before it returns, so a flag or
// count written after them is seen after the bytes. It is the benchmarks'
// own code: a baseline must not run the library's copy loop.
#ifndef SG_BENCH_STREAM_COPY_H
#define SG_BENCH_STREAM_COPY_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {

inline void stream_copy(uint8_t *dst, const uint8_t *src, size_t n, bool nontemporal) {
#if defined(__x86_64__)
  if (nontemporal && (reinterpret_cast<uintptr_t>(dst) % 16) == 0) {
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 16));
      __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 32));
      __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 48), d);
    }
    std::memcpy(dst + i, src + i, n - i);
    _mm_sfence();
    return;
  }
#endif
  (void)nontemporal;
  std::memcpy(dst, src, n);
}

}  // namespace bench

#endif
