/* Formatting CUDA errors. */
#include "cuda/cuda_call.h"

void sg__cuda_format(char *buf, size_t cap, cudaError_t err, const char *call,
                     const char *context) {
  sg__format(buf, cap, "%s: %s failed: %s (%s)", context, call, cudaGetErrorName(err),
             cudaGetErrorString(err));
}

sg_status sg__cuda_fail(cudaError_t err, const char *call, const char *context) {
  char msg[SG_ERROR_MESSAGE_BYTES];
  sg__cuda_format(msg, sizeof msg, err, call, context);
  return sg__fail(SG_ERR_CUDA, "%s", msg);
}
