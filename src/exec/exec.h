/* Internal: what the executable front end offers the layers above it that
 * are not backends (the pipeline), and its own files. Backends include
 * exec/backend.h instead. */
#ifndef SG_EXEC_EXEC_H
#define SG_EXEC_EXEC_H

/* The stream limit an executable or plan gets when the caller gives none:
 * CUDA_DEVICE_MAX_CONNECTIONS when it is a plain positive decimal number
 * (digits only: anything else is ignored), else 8.
 * The device runs that many hardware queues at once, so more streams buy
 * nothing. */
unsigned sg__default_max_streams(void);

#endif
