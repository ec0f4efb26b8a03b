/* Internal: setting the thread-local error message. */
#ifndef SG_CORE_ERROR_H
#define SG_CORE_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#include "streamgraph/status.h"

#define SG_ERROR_MESSAGE_BYTES 512

#if defined(__GNUC__)
#define SG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SG_PRINTF(f, a)
#endif

/* Sets this thread's message and returns `status`, so that a failing path
 * reads: return sg__fail(SG_ERR_..., "%s: ...", __func__, ...); */
sg_status sg__fail(sg_status status, const char *fmt, ...) SG_PRINTF(2, 3);
sg_status sg__failv(sg_status status, const char *fmt, va_list ap);

/* Formats into a caller's buffer (for errors kept and reported later, such as
 * a launch's failure read back by sg_exec_wait). */
void sg__format(char *buf, size_t cap, const char *fmt, ...) SG_PRINTF(3, 4);

#endif
