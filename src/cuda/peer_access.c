/* Peer access between GPUs, enabled once per pair and remembered (see
 * peer_access.h). */
#include "cuda/peer_access.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/sys.h"
#include "cuda/cuda_call.h"

/* Pairs of ordinals below this are remembered; others are asked each time. */
#define REMEMBERED 64

enum { UNKNOWN = 0, DIRECT, NONE };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char pair_state[REMEMBERED][REMEMBERED]; /* [low][high] */

int sg__cuda_peer_access_off(void) {
  const char *v = getenv("SG_PEER_ACCESS");
  return v && (!strcmp(v, "off") || !strcmp(v, "0"));
}

/* Lets `from` reach `to`'s memory. *enabled = 0 when the hardware or the
 * driver says the pair cannot be joined (not an error). */
static cudaError_t enable_one(int from, int to, int *enabled, const char **call) {
  int can = 0;
  *call = "cudaDeviceCanAccessPeer";
  cudaError_t err = SG_CUDA(cudaDeviceCanAccessPeer(&can, from, to));
  if (err != cudaSuccess || !can) {
    *enabled = 0;
    return err;
  }
  int previous;
  *call = "cudaGetDevice";
  if ((err = SG_CUDA(cudaGetDevice(&previous))) != cudaSuccess) return err;
  *call = "cudaSetDevice";
  if (previous != from && (err = SG_CUDA(cudaSetDevice(from))) != cudaSuccess) return err;
  *call = "cudaDeviceEnablePeerAccess";
  err = SG_CUDA(cudaDeviceEnablePeerAccess(to, 0));
  *enabled = 1;
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError(); /* enabled before (by us or the application): fine */
    err = cudaSuccess;
  } else if (err == cudaErrorPeerAccessUnsupported || err == cudaErrorTooManyPeers) {
    cudaGetLastError(); /* not an error of the copy: it goes through host memory */
    err = cudaSuccess;
    *enabled = 0;
  }
  if (previous != from) cudaSetDevice(previous); /* release: restoring cannot be skipped */
  return err;
}

sg_status sg__cuda_peer_pair(int a, int b, int *direct, const char *where) {
  *direct = 0;
  if (a == b) {
    *direct = 1;
    return SG_OK;
  }
  if (sg__cuda_peer_access_off()) return SG_OK;
  int low = a < b ? a : b, high = a < b ? b : a;
  int remembered = low >= 0 && high < REMEMBERED;
  sg__mutex_lock(&lock);
  if (remembered && pair_state[low][high] != UNKNOWN) {
    *direct = pair_state[low][high] == DIRECT;
    sg__mutex_unlock(&lock);
    return SG_OK;
  }
  /* Both ways: a copy may run on either device's stream, and a kernel on
   * either side may then read the other's memory. */
  int ab = 0, ba = 0;
  const char *call = "";
  cudaError_t err = enable_one(a, b, &ab, &call);
  if (err == cudaSuccess && ab) err = enable_one(b, a, &ba, &call);
  if (err == cudaSuccess && remembered) pair_state[low][high] = ab && ba ? DIRECT : NONE;
  sg__mutex_unlock(&lock);
  if (err != cudaSuccess) return sg__cuda_fail(err, call, where);
  *direct = ab && ba;
  return SG_OK;
}
