/* A CUDA build without NVRTC: modules load PTX, cubin and fatbin images,
 * but compiling a source is SG_ERR_UNSUPPORTED (cuda/sources.cmake builds
 * this file instead of module_nvrtc.c). */
#include "core/error.h"
#include "module/module_port.h"

static sg_status no_nvrtc(const char *fn) {
  return sg__fail(SG_ERR_UNSUPPORTED,
                  "%s: this build of streamgraph has no NVRTC (the CUDA toolkit's run-time "
                  "compiler was not found when it was built): load PTX, cubin or fatbin instead",
                  fn);
}

sg_status sg__nvrtc_version(int *major, int *minor, const char *fn) { return no_nvrtc(fn); }

sg_status sg__nvrtc_arch(int device, char *arch, size_t cap, const char *fn) {
  return no_nvrtc(fn);
}

sg_status sg__nvrtc_compile(const sg__compile_request *req, sg__compiled *out, const char *fn) {
  return no_nvrtc(fn);
}
