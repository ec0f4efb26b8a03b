/* Filling an sg_kernel_call's descriptor. */
#include "call.h"

#include <string.h>

#define BLOCK 256u     /* the row kernels' reductions assume a power of two */
#define MAX_GRID 4096u /* a few waves on a big GPU; grid-stride loops do the rest */

static void begin(sg_kernel_call *c, const void *func, sg_host_twin_fn twin, size_t blocks,
                  unsigned threads) {
  memset(c, 0, sizeof *c);
  if (blocks == 0) blocks = 1;
  if (blocks > MAX_GRID) blocks = MAX_GRID;
  c->desc.func = func;
  c->desc.func_kind = SG_KERNEL_FUNCTION;
  c->desc.grid = (sg_dim3){(unsigned)blocks, 1, 1};
  c->desc.block = (sg_dim3){threads, 1, 1};
  c->desc.args = c->arg_ptrs;
  c->desc.arg_sizes = c->arg_sizes;
  c->desc.host_twin = twin;
  /* Every kernel of kernels/ opens with SG_PDL_BEGIN (pdl.cuh): it may run
   * as the dependent of a programmatic edge. */
  c->desc.flags = SG_KERNEL_PROGRAMMATIC;
}

void sg__call_begin(sg_kernel_call *c, const void *func, sg_host_twin_fn twin, size_t n) {
  begin(c, func, twin, n / BLOCK + (n % BLOCK != 0), n ? BLOCK : 1);
}

void sg__call_begin_rows(sg_kernel_call *c, const void *func, sg_host_twin_fn twin,
                         size_t rows) {
  begin(c, func, twin, rows, BLOCK);
}

void sg__call_push(sg_kernel_call *c, const void *value, size_t size) {
  unsigned i = c->desc.arg_count++;
  memcpy(&c->arg_values[i], value, size);
  c->arg_ptrs[i] = &c->arg_values[i];
  c->arg_sizes[i] = size;
}
