/* The runtime's library API for run-time modules (module/module_port.h):
 * a library is loaded once, into no context of its own, and its kernels
 * run in whatever context launches them, the application's included. */
#include <stdio.h>
#include <string.h>

#include "cuda/cuda_call.h"
#include "module/module_port.h"

#if CUDART_VERSION >= 12050
#define HAVE_LIBRARY_API 1
#else
#define HAVE_LIBRARY_API 0
#endif

sg_status sg__module_device(int device, int *out, const char *fn) {
  int count = 0;
  cudaError_t err = SG_CUDA(cudaGetDeviceCount(&count));
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "%s: no CUDA device (%s)", fn,
                    err == cudaSuccess ? "none found" : cudaGetErrorName(err));
  }
  if (device >= count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: device %d does not exist (%d devices)", fn,
                    device, count);
  if (device >= 0) {
    *out = device;
    return SG_OK;
  }
  if (device != -1)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: device %d; give an ordinal or -1 (current)",
                    fn, device);
  err = SG_CUDA(cudaGetDevice(out));
  return err == cudaSuccess ? SG_OK : sg__cuda_fail(err, "cudaGetDevice", fn);
}

sg_status sg__library_load(const void *image, void **library, const char *fn) {
#if HAVE_LIBRARY_API
  cudaLibrary_t lib;
  cudaError_t err = SG_CUDA(cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
  if (err != cudaSuccess) {
    if (!sg__cuda_sticky(err)) cudaGetLastError();
    return sg__cuda_fail(err, "cudaLibraryLoadData", fn);
  }
  *library = lib;
  return SG_OK;
#else
  return sg__fail(SG_ERR_UNSUPPORTED, "%s: modules need the CUDA 12.5 runtime or newer (built "
                  "with %d)", fn, CUDART_VERSION);
#endif
}

sg_status sg__library_get_kernel(void *library, const char *symbol, const void **kernel,
                                 const char *fn) {
#if HAVE_LIBRARY_API
  cudaKernel_t k;
  cudaError_t err = SG_CUDA(cudaLibraryGetKernel(&k, (cudaLibrary_t)library, symbol));
  if (err == cudaErrorSymbolNotFound) {
    cudaGetLastError();
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: no kernel named '%s' (a C++ kernel needs extern \"C\", its mangled "
                    "name, or its name in sg_module_options.name_expressions)", fn, symbol);
  }
  if (err != cudaSuccess) {
    if (!sg__cuda_sticky(err)) cudaGetLastError();
    return sg__cuda_fail(err, "cudaLibraryGetKernel", fn);
  }
  *kernel = (const void *)k;
  return SG_OK;
#else
  return sg__fail(SG_ERR_UNSUPPORTED, "%s: modules need the CUDA 12.5 runtime or newer", fn);
#endif
}

void sg__library_unload(void *library, int device) {
#if HAVE_LIBRARY_API
  /* Launches in flight may still run this library's code (a kernel node
   * replaced while its executable runs): let the device finish first.
   * Release calls are made directly (cuda/cuda_call.h). */
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != device) cudaSetDevice(device);
  cudaDeviceSynchronize();
  cudaLibraryUnload((cudaLibrary_t)library);
  if (current >= 0 && current != device) cudaSetDevice(current);
  cudaGetLastError();
#else
  (void)library;
  (void)device;
#endif
}
