/* A build without CUDA: every module call is SG_ERR_UNSUPPORTED, saying
 * why (cuda/sources.cmake builds this file only without CUDA). */
#include "core/error.h"
#include "module/module_port.h"

static sg_status no_cuda(const char *fn) {
  return sg__fail(SG_ERR_UNSUPPORTED,
                  "%s: this build of streamgraph has no CUDA backend; run-time modules need "
                  "CUDA (and NVRTC to compile sources). Use kernels with host twins on the host "
                  "backend", fn);
}

sg_status sg__nvrtc_version(int *major, int *minor, const char *fn) { return no_cuda(fn); }

sg_status sg__nvrtc_arch(int device, char *arch, size_t cap, const char *fn) {
  return no_cuda(fn);
}

sg_status sg__nvrtc_compile(const sg__compile_request *req, sg__compiled *out, const char *fn) {
  return no_cuda(fn);
}

sg_status sg__module_device(int device, int *out, const char *fn) { return no_cuda(fn); }

sg_status sg__library_load(const void *image, void **library, const char *fn) {
  return no_cuda(fn);
}

sg_status sg__library_get_kernel(void *library, const char *symbol, const void **kernel,
                                 const char *fn) {
  return no_cuda(fn);
}

void sg__library_unload(void *library, int device) {}
