// The kernel of gpu_conditional_set_test: cs_run (tests/support/
// cond_set_ops.h) on one thread, the same code its host twin
// (condset::twin) runs, so that the GPU and the host backend compute bit
// for bit the same.
#include "cond_set_ops.h"
#include "streamgraph/cond_device.h"

namespace {

__global__ void cond_set_kernel(uint32_t *mem, cs_args a, sg_cond_ref ref) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const int64_t r = cs_run(mem, a);
  if (r >= 0) sg_cond_set(ref, static_cast<unsigned>(r));
}

}  // namespace

extern "C" const void *gcs_kernel(void) { return reinterpret_cast<const void *>(cond_set_kernel); }
