/* Fault injection: the n-th wrapped call of the armed kinds fails, once. */
#include <stdatomic.h>

#include "core/sys.h"

static atomic_uint armed_kinds;
static atomic_ulong countdown;
static atomic_int fired;

void sg_fault_arm(unsigned kinds, unsigned long nth) {
  atomic_store(&armed_kinds, 0u);
  atomic_store(&fired, 0);
  atomic_store(&countdown, nth);
  atomic_store(&armed_kinds, nth ? kinds : 0u);
}

int sg_fault_fired(void) { return atomic_load(&fired); }

int sg__fault_hit(sg_fault_kind kind) {
  if (!(atomic_load_explicit(&armed_kinds, memory_order_relaxed) & (unsigned)kind)) return 0;
  unsigned long left = atomic_load(&countdown);
  while (left > 0) {
    if (atomic_compare_exchange_weak(&countdown, &left, left - 1)) {
      if (left != 1) return 0;
      atomic_store(&armed_kinds, 0u);
      atomic_store(&fired, 1);
      return 1;
    }
  }
  return 0;
}
