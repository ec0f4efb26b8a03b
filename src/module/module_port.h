/* Internal: what the module front end (src/module) asks of the CUDA folder:
 * NVRTC and the runtime's library API. Implemented in src/cuda
 * (module_nvrtc.c, module_library.c), and by stubs that answer
 * SG_ERR_UNSUPPORTED in a build without CUDA (cuda/no_cuda_module.c) or
 * without NVRTC (cuda/no_nvrtc.c). Every function sets the thread's message
 * on failure, starting with `fn`. */
#ifndef SG_MODULE_MODULE_PORT_H
#define SG_MODULE_MODULE_PORT_H

#include <stddef.h>

#include "streamgraph/module.h"

/* One source to compile, as the front end resolved it. */
typedef struct sg__compile_request {
  const char *source;
  const char *name;                    /* the program's name */
  const char *const *options;          /* the caller's options, as given */
  unsigned option_count;
  const char *arch_option;             /* "--gpu-architecture=sm_90", or NULL when the
                                          caller's options name an architecture */
  const char *const *name_expressions;
  unsigned name_expression_count;
  const sg_module_header *headers;
  unsigned header_count;
} sg__compile_request;

/* What a compile produced (or the cache kept). Every pointer is owned
 * (sg__malloc'ed); sg__compiled_free frees them. */
typedef struct sg__compiled {
  unsigned char *image;     /* a cubin, or PTX text with its NUL */
  size_t image_bytes;
  int is_ptx;
  char *log;                /* never NULL once filled: "" when empty */
  char **lowered;           /* name_expression_count mangled names, in request order */
  unsigned lowered_count;
} sg__compiled;

void sg__compiled_free(sg__compiled *c);

/* NVRTC's version. SG_ERR_UNSUPPORTED without NVRTC. */
sg_status sg__nvrtc_version(int *major, int *minor, const char *fn);

/* The architecture to compile for on `device` (-1: the current one):
 * "sm_XY" when NVRTC can make its machine code, else the newest
 * "compute_XY" NVRTC supports below it. SG_ERR_BACKEND_UNAVAILABLE
 * without a device. */
sg_status sg__nvrtc_arch(int device, char *arch, size_t cap, const char *fn);

/* Compiles. SG_ERR_COMPILE when NVRTC rejects the source, with the log in
 * out->log (and its beginning in the message); `out` is filled (and must
 * be freed) on SG_OK and on SG_ERR_COMPILE. */
sg_status sg__nvrtc_compile(const sg__compile_request *req, sg__compiled *out, const char *fn);

/* The device that is current on this thread (`device` itself when >= 0). */
sg_status sg__module_device(int device, int *out, const char *fn);

/* Loads an image (cubin, fatbin, or NUL-terminated PTX) as a cudaLibrary_t. */
sg_status sg__library_load(const void *image, void **library, const char *fn);

/* The kernel `symbol` of a library as a cudaKernel_t; SG_ERR_INVALID_ARGUMENT
 * when the library has none by that name. */
sg_status sg__library_get_kernel(void *library, const char *symbol, const void **kernel,
                                 const char *fn);

/* Waits for `device`'s work, then unloads (failures cannot be acted on). */
void sg__library_unload(void *library, int device);

#endif
