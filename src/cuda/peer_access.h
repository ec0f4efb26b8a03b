/* Internal: peer access between GPUs, for copies between their memory.
 *
 * Access is enabled once per pair of devices and process, both ways
 * (cudaDeviceEnablePeerAccess, in each device's primary context), and
 * remembered: later executables find it done. It is never disabled: other
 * code of the process (the application's kernels) may rely on it too. A
 * pair the hardware cannot join answers "no", and so does every pair when
 * the environment variable SG_PEER_ACCESS is "off" (or "0"): copies between
 * GPUs then go through pinned host memory (peer_copy.c). */
#ifndef SG_CUDA_PEER_ACCESS_H
#define SG_CUDA_PEER_ACCESS_H

#include "streamgraph/status.h"

/* Sets *direct to 1 when devices a and b reach each other's memory directly
 * (enabled now, or before), 0 when the pair cannot (or peer access is
 * turned off). a == b is direct. Returns an error status, the message
 * starting with `where`, when a CUDA call fails (nothing is remembered
 * then). Thread-safe. */
sg_status sg__cuda_peer_pair(int a, int b, int *direct, const char *where);

/* 1 when SG_PEER_ACCESS turns peer access off (read at every call, so a
 * program or test may change it between executables). */
int sg__cuda_peer_access_off(void);

#endif
