/* A build without CUDA: the host twin only. */
#include "fft.h"

int fft_have_cufft(void) { return 0; }
int fft_plans_create(size_t len, size_t forward_count, size_t inverse_count, unsigned refs,
                     fft_plans **out) {
  (void)len, (void)forward_count, (void)inverse_count, (void)refs;
  *out = NULL;
  return -1;
}
void fft_plans_unref(fft_plans *plans) { (void)plans; }
int fft_cuda(void *stream, void *call) {
  (void)stream, (void)call;
  return -1;
}
int fft_warm_up(fft_call *call) {
  (void)call;
  return -1;
}
