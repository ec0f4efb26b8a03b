/* Internal: NCCL nodes as the CUDA backend runs them. nccl_node.c fills
 * these with NCCL; no_nccl.c, in a build without it, answers that NCCL is
 * not built in (and needs no CUDA header: streams are passed as void *). */
#ifndef SG_CUDA_NCCL_NODE_H
#define SG_CUDA_NCCL_NODE_H

#include "core/node.h"

/* 1 when the library was built with NCCL. */
int sg__nccl_built(void);

#endif
