/* NVRTC for run-time modules (module/module_port.h): the target
 * architecture, and compiling a source to a cubin (or PTX when the target is
 * virtual). Built with CUDA when the toolkit has NVRTC. Every NVRTC call is
 * a fault-injection point of kind SG_FAULT_CUDA, like the runtime's. */
#include <nvrtc.h>
#include <stdio.h>
#include <string.h>

#include "cuda/cuda_call.h"
#include "module/module_port.h"

#define SG_NVRTC(call) \
  (sg__fault_point(SG_FAULT_CUDA, #call) ? NVRTC_ERROR_INTERNAL_ERROR : (call))

static sg_status nvrtc_fail(nvrtcResult r, const char *call, const char *fn) {
  return sg__fail(r == NVRTC_ERROR_OUT_OF_MEMORY ? SG_ERR_OUT_OF_MEMORY : SG_ERR_CUDA,
                  "%s: %s failed: %s", fn, call, nvrtcGetErrorString(r));
}

sg_status sg__nvrtc_version(int *major, int *minor, const char *fn) {
  nvrtcResult r = SG_NVRTC(nvrtcVersion(major, minor));
  return r == NVRTC_SUCCESS ? SG_OK : nvrtc_fail(r, "nvrtcVersion", fn);
}

sg_status sg__nvrtc_arch(int device, char *arch, size_t cap, const char *fn) {
  int dev;
  sg_status st = sg__module_device(device, &dev, fn);
  if (st) return st;
  int major = 0, minor = 0;
  cudaError_t err = SG_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  if (err == cudaSuccess)
    err = SG_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaDeviceGetAttribute", fn);
  int cc = major * 10 + minor, count = 0;
  nvrtcResult r = SG_NVRTC(nvrtcGetNumSupportedArchs(&count));
  if (r != NVRTC_SUCCESS) return nvrtc_fail(r, "nvrtcGetNumSupportedArchs", fn);
  int *archs = count > 0 ? sg__calloc((size_t)count, sizeof *archs) : NULL;
  if (!archs) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  r = SG_NVRTC(nvrtcGetSupportedArchs(archs));
  if (r != NVRTC_SUCCESS) {
    sg__free(archs);
    return nvrtc_fail(r, "nvrtcGetSupportedArchs", fn);
  }
  /* Machine code when NVRTC knows the device; else PTX of the newest
   * architecture below it, which the driver compiles for the device. */
  int exact = 0, below = 0;
  for (int i = 0; i < count; i++) {
    if (archs[i] == cc) exact = 1;
    if (archs[i] < cc && archs[i] > below) below = archs[i];
  }
  sg__free(archs);
  if (exact) snprintf(arch, cap, "sm_%d", cc);
  else if (below) snprintf(arch, cap, "compute_%d", below);
  else
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: this NVRTC cannot compile for device %d (compute capability %d.%d)", fn,
                    dev, major, minor);
  return SG_OK;
}

/* The program's log, owned ("" when NVRTC has none or it cannot be read). */
static char *program_log(nvrtcProgram prog) {
  size_t size = 0;
  char *log = NULL;
  if (SG_NVRTC(nvrtcGetProgramLogSize(prog, &size)) == NVRTC_SUCCESS && size > 0 &&
      (log = sg__malloc(size + 1))) {
    if (SG_NVRTC(nvrtcGetProgramLog(prog, log)) != NVRTC_SUCCESS) log[0] = '\0';
    log[size] = '\0';
    return log;
  }
  sg__free(log);
  return sg__strdup("");
}

/* The image: the cubin, or the PTX (with its NUL) for a virtual target. */
static sg_status take_image(nvrtcProgram prog, sg__compiled *out, const char *fn) {
  size_t size = 0;
  nvrtcResult r = SG_NVRTC(nvrtcGetCUBINSize(prog, &size));
  if (r != NVRTC_SUCCESS) return nvrtc_fail(r, "nvrtcGetCUBINSize", fn);
  out->is_ptx = size == 0;
  if (out->is_ptx) {
    r = SG_NVRTC(nvrtcGetPTXSize(prog, &size));
    if (r != NVRTC_SUCCESS) return nvrtc_fail(r, "nvrtcGetPTXSize", fn);
  }
  if (size == 0) return sg__fail(SG_ERR_CUDA, "%s: NVRTC produced no code", fn);
  out->image = sg__malloc(size);
  if (!out->image) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for the image", fn);
  out->image_bytes = size;
  r = out->is_ptx ? SG_NVRTC(nvrtcGetPTX(prog, (char *)out->image))
                  : SG_NVRTC(nvrtcGetCUBIN(prog, (char *)out->image));
  if (r != NVRTC_SUCCESS) return nvrtc_fail(r, out->is_ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN", fn);
  return SG_OK;
}

static sg_status take_lowered(nvrtcProgram prog, const sg__compile_request *req,
                              sg__compiled *out, const char *fn) {
  unsigned n = req->name_expression_count;
  if (!n) return SG_OK;
  out->lowered = sg__calloc(n, sizeof *out->lowered);
  if (!out->lowered) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  out->lowered_count = n;
  for (unsigned i = 0; i < n; i++) {
    const char *lowered = NULL;
    nvrtcResult r = SG_NVRTC(nvrtcGetLoweredName(prog, req->name_expressions[i], &lowered));
    if (r != NVRTC_SUCCESS)
      return sg__fail(SG_ERR_COMPILE, "%s: '%s': name expression '%s' names no kernel (%s)", fn,
                      req->name, req->name_expressions[i], nvrtcGetErrorString(r));
    if (!(out->lowered[i] = sg__strdup(lowered)))
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  return SG_OK;
}

static sg_status compile_program(nvrtcProgram prog, const sg__compile_request *req,
                                 sg__compiled *out, const char *fn) {
  for (unsigned i = 0; i < req->name_expression_count; i++) {
    nvrtcResult r = SG_NVRTC(nvrtcAddNameExpression(prog, req->name_expressions[i]));
    if (r != NVRTC_SUCCESS) return nvrtc_fail(r, "nvrtcAddNameExpression", fn);
  }
  size_t n = (size_t)req->option_count + 1;
  const char **options = sg__calloc(n, sizeof *options);
  if (!options) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  unsigned count = 0;
  for (unsigned i = 0; i < req->option_count; i++) options[count++] = req->options[i];
  if (req->arch_option) options[count++] = req->arch_option;
  nvrtcResult r = SG_NVRTC(nvrtcCompileProgram(prog, (int)count, options));
  sg__free(options);
  out->log = program_log(prog);
  if (!out->log) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for the log", fn);
  if (r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION)
    return sg__fail(SG_ERR_COMPILE, "%s: '%s' did not compile (%s): %s", fn, req->name,
                    nvrtcGetErrorString(r), out->log[0] ? out->log : "(no log)");
  if (r != NVRTC_SUCCESS) return nvrtc_fail(r, "nvrtcCompileProgram", fn);
  sg_status st = take_image(prog, out, fn);
  if (!st) st = take_lowered(prog, req, out, fn);
  return st;
}

sg_status sg__nvrtc_compile(const sg__compile_request *req, sg__compiled *out, const char *fn) {
  memset(out, 0, sizeof *out);
  unsigned h = req->header_count;
  const char **sources = NULL, **names = NULL;
  if (h) {
    sources = sg__calloc(h, sizeof *sources);
    names = sg__calloc(h, sizeof *names);
    if (!sources || !names) {
      sg__free(sources);
      sg__free(names);
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    for (unsigned i = 0; i < h; i++) {
      sources[i] = req->headers[i].source;
      names[i] = req->headers[i].name;
    }
  }
  nvrtcProgram prog;
  nvrtcResult r = SG_NVRTC(nvrtcCreateProgram(&prog, req->source, req->name, (int)h, sources, names));
  sg__free(sources);
  sg__free(names);
  if (r != NVRTC_SUCCESS) return nvrtc_fail(r, "nvrtcCreateProgram", fn);
  sg_status st = compile_program(prog, req, out, fn);
  nvrtcDestroyProgram(&prog);
  if (st && st != SG_ERR_COMPILE) sg__compiled_free(out);
  return st;
}
