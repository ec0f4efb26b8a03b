/* A build without NCCL (or without CUDA): NCCL nodes can be built and
 * checked, but no executable runs them (cuda/nccl_node.h), and
 * sg_nccl_version says NCCL is not built in. */
#include "core/error.h"
#include "cuda/nccl_node.h"
#include "streamgraph/nccl.h"

int sg__nccl_built(void) { return 0; }

sg_status sg_nccl_version(int *version) {
  if (version) *version = 0;
  return sg__fail(SG_ERR_UNSUPPORTED,
                  "%s: the library was built without NCCL (CMake found no nccl.h and libnccl in "
                  "the CUDA toolkit or the system; set NCCL_ROOT to point at one)", __func__);
}
