/* Structs of any published layout in, and out (core/abi.h). */
#include "core/abi.h"

#include <string.h>

#include "core/error.h"

sg_status sg__abi_in(const void *caller, size_t size, size_t first, void *local,
                     size_t local_size, const char *fn, const char *what, const void **out) {
  *out = caller;
  if (!caller || size == local_size) return SG_OK;
  if (size < first)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: %s is %zu bytes, smaller than any layout of it (%zu at least)", fn, what,
                    size, first);
  const unsigned char *bytes = caller;
  for (size_t i = local_size; i < size; i++)
    if (bytes[i])
      return sg__fail(SG_ERR_UNSUPPORTED,
                      "%s: %s sets a field this library (%zu bytes of it) does not know, at "
                      "byte %zu of %zu: the program was built against a newer streamgraph",
                      fn, what, local_size, i, size);
  memset(local, 0, local_size);
  memcpy(local, caller, size < local_size ? size : local_size);
  *out = local;
  return SG_OK;
}

sg_status sg__abi_out_check(size_t size, size_t first, const char *fn, const char *what) {
  if (size >= first) return SG_OK;
  return sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: %s is %zu bytes, smaller than any layout of it (%zu at least)", fn, what,
                  size, first);
}

void sg__abi_out(void *caller, size_t size, const void *local, size_t local_size) {
  if (size <= local_size) {
    memcpy(caller, local, size);
  } else {
    memcpy(caller, local, local_size);
    memset((unsigned char *)caller + local_size, 0, size - local_size);
  }
}
