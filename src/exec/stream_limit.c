/* The device's stream limit: how many hardware queues it runs at once. */
#include <limits.h>
#include <stdlib.h>

#include "exec/exec.h"

/* The value of `text` when it is a plain positive decimal number that fits
 * an unsigned int (digits only: no sign, no white space, nothing after);
 * 0 otherwise. Parsed by hand: strtoul skips white space and accepts a
 * sign, so " -1" would come back as a huge or wrapped number. */
static unsigned parse_positive(const char *text) {
  unsigned long long value = 0;
  if (!*text) return 0;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '9') return 0;
    value = value * 10 + (unsigned)(*p - '0');
    if (value > UINT_MAX) return 0;
  }
  return (unsigned)value;
}

unsigned sg__default_max_streams(void) {
  const char *text = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  unsigned value = text ? parse_positive(text) : 0;
  return value ? value : 8;
}
