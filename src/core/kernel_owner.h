/* Internal: objects that own kernels given as cudaKernel_t (run-time
 * modules, streamgraph/module.h).
 *
 * A kernel node stores only the kernel handle, yet the code behind it lives
 * in its owner. So owners register their kernels here, and every node
 * naming a registered kernel (in a graph or an executable's snapshot) holds
 * a reference on the owner: the owner's code stays loaded as long as
 * anything can still launch it, whatever order the application destroys
 * things in. Nodes with kernels nobody registered hold nothing. */
#ifndef SG_CORE_KERNEL_OWNER_H
#define SG_CORE_KERNEL_OWNER_H

#include "streamgraph/status.h"

typedef struct sg__kernel_owner sg__kernel_owner;
struct sg__kernel_owner {
  long refs; /* guarded by the registry's lock */
  /* Called once, without the lock, when the last reference is gone; the
   * owner's kernels are out of the registry by then. */
  void (*release)(sg__kernel_owner *owner);
};

/* One reference: its creator's. */
void sg__kernel_owner_init(sg__kernel_owner *owner, void (*release)(sg__kernel_owner *));

/* Registers `kernel` as owned by `owner` (adding it again changes nothing).
 * SG_ERR_OUT_OF_MEMORY, with a message naming `fn`. */
sg_status sg__kernel_owner_add(sg__kernel_owner *owner, const void *kernel, const char *fn);

/* The owner of `kernel` with one more reference, or NULL when the kernel is
 * not registered. */
sg__kernel_owner *sg__kernel_owner_retain_kernel(const void *kernel);
void sg__kernel_owner_retain(sg__kernel_owner *owner);
void sg__kernel_owner_release(sg__kernel_owner *owner);

#endif
