/* Internal: overflow-checked arithmetic for sizes and addresses.
 *
 * Wherever a size meets a pointer the sum is computed on integers with a
 * check, never as `ptr + bytes`: that is undefined behaviour once it leaves
 * the object, and with a huge size it wraps and makes ranges look short. */
#ifndef SG_CORE_CHECKED_H
#define SG_CORE_CHECKED_H

#include <stddef.h>
#include <stdint.h>

/* a + b into *sum; 1 if it overflowed (then *sum is unspecified). */
static inline int sg__add_overflows(size_t a, size_t b, size_t *sum) {
  return __builtin_add_overflow(a, b, sum);
}

/* a * b into *product; 1 if it overflowed. */
static inline int sg__mul_overflows(size_t a, size_t b, size_t *product) {
  return __builtin_mul_overflow(a, b, product);
}

/* ceil(a / b) for b > 0, without the a + b - 1 that overflows. */
static inline size_t sg__ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

/* a rounded up to a multiple of b (b > 0) into *out; 1 if it overflowed. */
static inline int sg__round_up_overflows(size_t a, size_t b, size_t *out) {
  return sg__mul_overflows(sg__ceil_div(a, b), b, out);
}

/* The address one past [ptr, ptr + bytes) into *end; 1 if the range wraps
 * around the end of the address space (no object can). */
static inline int sg__range_end(const void *ptr, size_t bytes, uintptr_t *end) {
  return __builtin_add_overflow((uintptr_t)ptr, bytes, end);
}

/* 1 if [a, a + a_bytes) and [b, b + b_bytes) share a byte; both ranges must
 * be known not to wrap (sg__range_end). */
static inline int sg__ranges_overlap(const void *a, size_t a_bytes, const void *b,
                                     size_t b_bytes) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x < y ? y - x < a_bytes : x - y < b_bytes;
}

#endif
