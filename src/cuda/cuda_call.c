/* Formatting CUDA errors. */
#include "cuda/cuda_call.h"

int sg__cuda_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return 1;
    default:
      return 0;
  }
}

void sg__cuda_format(char *buf, size_t cap, cudaError_t err, const char *call,
                     const char *context) {
  /* A sticky error is returned by whatever call comes after the fault, so
   * the call and node named are where it was noticed, not where it arose. */
  sg__format(buf, cap, "%s: %s failed: %s (%s)%s", context, call, cudaGetErrorName(err),
             cudaGetErrorString(err),
             sg__cuda_sticky(err) ? "; a kernel faulted (CUDA does not say which). The error "
                                    "is sticky: this process's CUDA context is unusable from "
                                    "now on"
                                  : "");
}

sg_status sg__cuda_fail(cudaError_t err, const char *call, const char *context) {
  char msg[SG_ERROR_MESSAGE_BYTES];
  sg__cuda_format(msg, sizeof msg, err, call, context);
  return sg__fail(SG_ERR_CUDA, "%s", msg);
}
