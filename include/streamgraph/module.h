/*
 * streamgraph/module.h - kernels at run time: CUDA C source compiled with
 * NVRTC, or PTX, cubin and fatbin images, loaded into the application's
 * CUDA context and used in kernel nodes like any other kernel.
 *
 * A module is loaded with the runtime's library API (cudaLibraryLoadData),
 * so it belongs to no context of its own: its kernels run in the context
 * the application and the library already use (the device's primary
 * context), on any device the code was built for. A kernel is looked up by
 * name (sg_module_get_kernel) as a cudaKernel_t, and a kernel node takes it
 * with func_kind SG_KERNEL_CUDA_KERNEL:
 *
 *     sg_module *m;
 *     sg_module_create_from_source(src, NULL, &m);   // compiled for the current device
 *     const void *vadd;
 *     sg_module_get_kernel(m, "vadd", &vadd);
 *     sg_kernel_desc k = {vadd, SG_KERNEL_CUDA_KERNEL, grid, block, 0, args, sizes, 4,
 *                         vadd_host, "vadd", 0};    // the host twin is optional
 *     sg_graph_add_kernel(g, &k, ...);
 *
 * Such a node is updated in place like any other (sg_exec_set_kernel, also
 * in graph mode), and its host twin, when given, runs on the host backend.
 *
 * Lifetime. A graph or executable whose node names a module's kernel holds
 * a reference on the module: sg_module_destroy gives up the caller's handle
 * at once (later calls with it are SG_ERR_INVALID_HANDLE), but the module's
 * code stays loaded until the last graph, executable or pipeline naming one
 * of its kernels is destroyed (or points the node elsewhere). So an
 * executable never outlives the code it launches, whatever the order of
 * destruction. When the last reference goes, the module waits for its
 * device's work (cudaDeviceSynchronize on the device it was compiled for)
 * before unloading, so a launch in flight keeps its code. A cudaKernel_t
 * kept by the application itself holds nothing: do not use it once the
 * module is destroyed and nothing else holds the module.
 *
 * The compile cache. Compiling takes tens to hundreds of milliseconds, so
 * compiled code is kept on disk, keyed by everything that decides it: the
 * source, the options, the name expressions, the headers, the program
 * name, the target architecture and NVRTC's version. Files that the source
 * #includes from disk (through -I) are not part of the key: pass them as
 * `headers`, or turn the cache off for such a source. The cache is a
 * folder (see `cache_dir`) of one file per entry, written under a
 * temporary name and renamed into place, so that processes compiling the
 * same source at once each get a whole entry and never a torn one; an entry
 * that does not verify (checksum, key) is compiled again and replaced. A
 * cache that cannot be read or written never fails a compile: it only
 * counts in sg_module_stats. Nothing is ever evicted: remove the folder to
 * clear it.
 *
 * Builds. Modules need the CUDA backend: in a build without CUDA every
 * sg_module_create_* returns SG_ERR_UNSUPPORTED. Compiling source also
 * needs NVRTC (found with the CUDA toolkit at build time); a build without
 * it still loads PTX, cubin and fatbin images. The runtime's library API
 * needs CUDA 12.5 or newer. Without a device, creation returns
 * SG_ERR_BACKEND_UNAVAILABLE.
 *
 * Threads. Modules may be created, used and destroyed from any thread.
 */
#ifndef STREAMGRAPH_MODULE_H
#define STREAMGRAPH_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_module sg_module;

/* A source the program may #include by `name`. */
typedef struct sg_module_header {
  const char *name;          /* as written in #include "name" */
  const char *source;
} sg_module_header;

typedef struct sg_module_options {
  /* The program's name in the compiler's messages and the log
   * (NULL: "module.cu"). */
  const char *name;
  /* NVRTC options, passed on as given: "-std=c++17", "--use_fast_math",
   * "-DTILE=16", "-lineinfo"... Without an architecture option
   * ("-arch=...", "--gpu-architecture=..."), the module is compiled to
   * machine code (cubin) for the compute capability of `device`, or to PTX
   * for the newest architecture NVRTC knows when the device is newer. */
  const char *const *compile_options;
  unsigned compile_option_count;
  /* C++ kernels by their C++ names ("scale<float>", "ns::kernel"): each is
   * resolved to its mangled name when compiling (NVRTC name expressions)
   * and sg_module_get_kernel accepts the expression as written. Kernels
   * declared extern "C" need none. */
  const char *const *name_expressions;
  unsigned name_expression_count;
  const sg_module_header *headers;
  unsigned header_count;
  /* The CUDA device whose compute capability the source is compiled for;
   * -1 (the default): the calling thread's current device. */
  int device;
  /* 1 (the default): use the compile cache; 0: compile every time. The
   * environment variable SG_MODULE_CACHE=0 (or "off") turns it off for
   * every module of the process. */
  int cache;
  /* The cache's folder, made if missing (mode 0700). NULL: the environment
   * variable SG_MODULE_CACHE_DIR, else $XDG_CACHE_HOME/streamgraph/modules,
   * else $HOME/.cache/streamgraph/modules. */
  const char *cache_dir;
  /* Optional: a buffer of log_bytes that receives the compiler's whole log,
   * NUL-terminated (and cut to fit), on success and on failure. The error
   * message of SG_ERR_COMPILE carries the log's beginning. */
  char *log;
  size_t log_bytes;
} sg_module_options;

/* Fills `opts` with the defaults. Always start from this. */
SG_API void sg_module_options_init_sized(sg_module_options *opts, size_t opts_size);
#ifndef SG_BUILDING_LIBRARY
static inline void sg_module_options_init(sg_module_options *opts) {
  sg_module_options_init_sized(opts, sizeof *opts);
}
#else
void sg_module_options_init(sg_module_options *opts);
#endif

/* Compiles CUDA C++ `source` (NUL-terminated) with NVRTC, or takes it from
 * the compile cache, and loads it. `opts` may be NULL (the defaults).
 * SG_ERR_COMPILE when NVRTC rejects the source: the message names the
 * program and carries the compiler's log (the whole log goes to opts->log).
 * SG_ERR_UNSUPPORTED in a build without CUDA or NVRTC. */
SG_API sg_status sg_module_create_from_source_sized(const char *source,
                                                    const sg_module_options *opts,
                                                    size_t opts_size, sg_module **out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_module_create_from_source(const char *source,
                                                     const sg_module_options *opts,
                                                     sg_module **out) {
  return sg_module_create_from_source_sized(source, opts, sizeof *opts, out);
}
#else
sg_status sg_module_create_from_source(const char *source, const sg_module_options *opts,
                                       sg_module **out);
#endif

/* Loads an image in memory: PTX text (NUL-terminated or not: `bytes` long),
 * a cubin (ELF), or a fatbin, as nvcc or NVRTC make them. PTX is compiled
 * for the device by the driver. Of `opts` only `name` is used (the
 * image's name in messages). The image is copied; it may be freed after. */
SG_API sg_status sg_module_create_from_image_sized(const void *image, size_t bytes,
                                                   const sg_module_options *opts, size_t opts_size,
                                                   sg_module **out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_module_create_from_image(const void *image, size_t bytes,
                                                    const sg_module_options *opts,
                                                    sg_module **out) {
  return sg_module_create_from_image_sized(image, bytes, opts, sizeof *opts, out);
}
#else
sg_status sg_module_create_from_image(const void *image, size_t bytes,
                                      const sg_module_options *opts, sg_module **out);
#endif

/* Loads a .ptx, .cubin or .fatbin file (recognised by its contents). */
SG_API sg_status sg_module_create_from_file_sized(const char *path, const sg_module_options *opts,
                                                  size_t opts_size, sg_module **out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_module_create_from_file(const char *path, const sg_module_options *opts,
                                                   sg_module **out) {
  return sg_module_create_from_file_sized(path, opts, sizeof *opts, out);
}
#else
sg_status sg_module_create_from_file(const char *path, const sg_module_options *opts,
                                     sg_module **out);
#endif

/* Gives up the caller's handle. The module's code is unloaded now, or when
 * the last graph or executable naming one of its kernels is gone. */
SG_API sg_status sg_module_destroy(sg_module *module);

/* The kernel `name` as a cudaKernel_t, for sg_kernel_desc.func with
 * func_kind SG_KERNEL_CUDA_KERNEL. `name` is a kernel's C name (extern "C",
 * or a mangled name) or one of the module's name expressions, as written.
 * SG_ERR_INVALID_ARGUMENT when the module has no such kernel. */
SG_API sg_status sg_module_get_kernel(sg_module *module, const char *name, const void **kernel);

/* The compiler's log of the module's source (warnings), "" when it has
 * none or the module was loaded from an image. Valid while the handle is. */
SG_API sg_status sg_module_get_log(const sg_module *module, const char **log);

/* Process-wide counts since the process started. */
typedef struct sg_module_stats {
  uint64_t compiles;         /* sources compiled by NVRTC (successfully or not) */
  uint64_t cache_hits;       /* sources taken from the compile cache */
  uint64_t cache_misses;     /* cache lookups that found no valid entry */
  uint64_t cache_stores;     /* entries written */
  uint64_t cache_errors;     /* cache folders or entries that could not be made, read or
                                written, and entries that did not verify */
  uint64_t loads;            /* modules loaded (sources and images) */
  uint64_t live_modules;     /* modules loaded now (destroyed handles whose kernels
                                graphs or executables still hold included) */
} sg_module_stats;

SG_API sg_status sg_module_get_stats_sized(sg_module_stats *stats, size_t stats_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_module_get_stats(sg_module_stats *stats) {
  return sg_module_get_stats_sized(stats, sizeof *stats);
}
#else
sg_status sg_module_get_stats(sg_module_stats *stats);
#endif

#ifdef __cplusplus
}
#endif
#endif
