/* The device's stream limit: how many hardware queues it runs at once. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "exec/exec.h"

unsigned sg__default_max_streams(void) {
  const char *text = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (text && *text) {
    char *end = NULL;
    errno = 0;
    unsigned long value = strtoul(text, &end, 10);
    /* Only a plain positive number counts; "-1" (which strtoul wraps), "8x"
     * or an overflow fall back to the default like an unset variable. */
    if (!errno && end && *end == '\0' && text[0] != '-' && text[0] != '+' && value > 0 &&
        value <= UINT_MAX)
      return (unsigned)value;
  }
  return 8;
}
