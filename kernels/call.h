/* Filling an sg_kernel_call: the launch shape and the arguments, shared by
 * every kernel family (kernels.c, nn.c, signal.c). */
#ifndef SG_KERNELS_CALL_H
#define SG_KERNELS_CALL_H

#include <stddef.h>

#include "streamgraph/kernels.h"

/* Arguments reach a host twin exactly as they reach the device: one pointer
 * per argument value. */
#define SG__ARG(type, args, i) (*(type const *)(args)[i])

/* Starts a call with no arguments, shaped for n elements: 256-thread blocks,
 * enough of them to cover n, at most a few waves (grid-stride loops do the
 * rest). */
void sg__call_begin(sg_kernel_call *call, const void *func, sg_host_twin_fn twin, size_t n);

/* Starts a call shaped for `rows` rows, one 256-thread block per row (up to
 * the same cap; blocks loop over the remaining rows). */
void sg__call_begin_rows(sg_kernel_call *call, const void *func, sg_host_twin_fn twin,
                         size_t rows);

/* Appends one argument's value (at most 8 bytes). */
void sg__call_push(sg_kernel_call *call, const void *value, size_t size);

#endif
