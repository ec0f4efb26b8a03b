// The benchmarks stop at the first failed CUDA or streamgraph call, naming
// the call, its file and line, and the error: a figure measured after a
// failure would mean nothing.
#ifndef SG_BENCH_CHECK_H
#define SG_BENCH_CHECK_H

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

#include "streamgraph/status.h"

inline void bench_check_cuda(cudaError_t e, const char *call, const char *file, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s -> %s (%s)\n", file, line, call, cudaGetErrorName(e),
               cudaGetErrorString(e));
  std::exit(2);
}

inline void bench_check_sg(sg_status s, const char *call, const char *file, int line) {
  if (s == SG_OK) return;
  std::fprintf(stderr, "%s:%d: %s -> %s: %s\n", file, line, call, sg_status_name(s),
               sg_last_error());
  std::exit(2);
}

#define CK(x) bench_check_cuda((x), #x, __FILE__, __LINE__)
#define SGK(x) bench_check_sg((x), #x, __FILE__, __LINE__)

#endif
