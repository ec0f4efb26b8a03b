/* The host backend's arena for planned temporaries: host memory, which its
 * worker threads (and host twins) read and write like any other. */
#include <stdint.h>

#include "core/error.h"
#include "core/sys.h"
#include "host/host_nodes.h"

sg_status sg__host_arena_alloc(int device, size_t bytes, const char *fn, void **arena) {
  (void)device; /* the host backend's devices are emulated: one address space */
  *arena = bytes <= SIZE_MAX - 4095 ? sg__aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095)
                                     : NULL;
  if (!*arena)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory allocating %zu bytes of temporaries",
                    fn, bytes);
  return SG_OK;
}

void sg__host_arena_free(int device, void *arena) {
  (void)device;
  sg__free(arena);
}
