/* Internal: the NCCL calls of an NCCL node (core/node.h: sg__nccl), as the
 * CUDA backend runs them. nccl_node.c fills these with NCCL; no_nccl.c, in
 * a build without it, answers that NCCL is not built in. Streams are passed
 * as void * so that no_nccl.c needs no CUDA header (it is built without
 * CUDA too). The orchestration around the calls (streams, devices, capture)
 * is the backend's: cuda_nccl.c. */
#ifndef SG_CUDA_NCCL_NODE_H
#define SG_CUDA_NCCL_NODE_H

#include <stddef.h>

#include "core/node.h"

/* 1 when the library was built with NCCL. */
int sg__nccl_built(void);

/* Checks a node's calls before any runs: each communicator answers, the
 * peer of a send or receive is a rank of it, and each buffer is device (or
 * managed) memory of the communicator's device. Sets devices[i] to the
 * device of call i. SG_ERR_UNSUPPORTED without NCCL; otherwise
 * SG_ERR_INVALID_ARGUMENT or SG_ERR_CUDA, the message starting with `where`
 * and naming the call. */
sg_status sg__nccl_check(const sg__nccl *n, int *devices, const char *where);

/* Issues the calls as one group (ncclGroupStart ... ncclGroupEnd), call i on
 * streams[i] (a cudaStream_t of call i's device). On failure returns
 * SG_ERR_CUDA (or SG_ERR_UNSUPPORTED) and writes the message, starting with
 * `where`, into `msg`. */
sg_status sg__nccl_enqueue(const sg__nccl *n, void *const *streams, const char *where, char *msg,
                           size_t cap);

#endif
