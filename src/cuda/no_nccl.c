/* A build without NCCL (or without CUDA): NCCL nodes can be built and
 * checked, but no executable runs them, and sg_nccl_version says NCCL is
 * not built in (see cuda/nccl_node.h). */
#include <stdio.h>

#include "core/error.h"
#include "cuda/nccl_node.h"
#include "streamgraph/nccl.h"

static const char why[] =
    "the library was built without NCCL (CMake found no nccl.h and libnccl in the CUDA toolkit "
    "or the system; set NCCL_ROOT to point at one)";

int sg__nccl_built(void) { return 0; }

sg_status sg_nccl_version(int *version) {
  if (version) *version = 0;
  return sg__fail(SG_ERR_UNSUPPORTED, "%s: %s", __func__, why);
}

sg_status sg__nccl_check(const sg__nccl *n, int *devices, const char *where) {
  (void)n;
  (void)devices;
  return sg__fail(SG_ERR_UNSUPPORTED, "%s: NCCL nodes cannot run: %s", where, why);
}

sg_status sg__nccl_enqueue(const sg__nccl *n, void *const *streams, const char *where, char *msg,
                           size_t cap) {
  (void)n;
  (void)streams;
  snprintf(msg, cap, "%s: NCCL nodes cannot run: %s", where, why);
  return SG_ERR_UNSUPPORTED;
}
