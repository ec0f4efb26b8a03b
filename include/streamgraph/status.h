/*
 * streamgraph/status.h - status codes and error messages.
 *
 * Every public call returns an sg_status. SG_OK (zero) is success; SG_NOT_READY
 * is the one non-error, non-OK answer (work still in flight). Every other value
 * is an error, and the call that returned it left a message on the calling
 * thread, readable with sg_last_error(), saying what was wrong and where (the
 * function, and the node by name and index when a node is involved).
 *
 * A successful call leaves the message as it was, like errno. The library never
 * prints, aborts or exits by itself.
 */
#ifndef STREAMGRAPH_STATUS_H
#define STREAMGRAPH_STATUS_H

#if defined(SG_BUILDING_LIBRARY) && !defined(SG_STATIC)
#define SG_API __attribute__((visibility("default")))
#else
#define SG_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sg_status {
  SG_OK = 0,
  SG_NOT_READY,               /* query: launched work is still running */
  SG_ERR_INVALID_ARGUMENT,    /* a NULL pointer, a zero size, an enum or option out of range */
  SG_ERR_INVALID_HANDLE,      /* a handle that was destroyed, never created, or of another type */
  SG_ERR_OUT_OF_MEMORY,       /* a host allocation failed */
  SG_ERR_INVALID_COPY,        /* the copy kind does not match the memory the pointers are in */
  SG_ERR_INVALID_LAUNCH,      /* kernel grid, block or shared memory out of range */
  SG_ERR_INVALID_KERNEL_ARGS, /* too many kernel arguments, or too large */
  SG_ERR_FOREIGN_NODE,        /* a node of another graph (or executable) */
  SG_ERR_SELF_EDGE,           /* an edge from a node to itself */
  SG_ERR_CYCLE,               /* the dependencies form a cycle; the message lists one */
  SG_ERR_BACKEND_UNAVAILABLE, /* the backend asked for is not built, or no device is present */
  SG_ERR_NO_HOST_TWIN,        /* the host backend met a kernel or stream-function node without a host twin */
  SG_ERR_EXEC_FAILED,         /* an earlier launch of this executable failed; it only can be destroyed */
  SG_ERR_CALLBACK,            /* a host callback (or stream function) reported an error */
  SG_ERR_CUDA,                /* the CUDA runtime reported an error; the message names it */
  SG_ERR_SYSTEM,              /* a thread, mutex or other operating-system call failed */
  SG_ERR_POOL_EXHAUSTED,      /* the pinned pool cannot serve the request within its cap */
  SG_ERR_WOULD_BLOCK,         /* a non-blocking call could not proceed now */
  SG_ERR_UNSUPPORTED,         /* a valid request this build or backend cannot carry out */
  SG_ERR_STOPPED,             /* the object was stopped by an earlier error */
  SG_ERR_COMPILE,             /* the run-time compiler rejected a source; the message has its log */
  SG_ERR_BUSY,                /* the object is in use by another call: another thread's (objects
                                 are used from one thread at a time), or one that is waiting for
                                 the callback making this call */
  SG_STATUS_COUNT_            /* not a status: the number of them */
} sg_status;

/* "SG_ERR_CYCLE", or "SG_STATUS_UNKNOWN" for a value that is no status. */
SG_API const char *sg_status_name(sg_status status);

/* A short English description of the status. */
SG_API const char *sg_status_describe(sg_status status);

/* The message of the last call on this thread that returned an error ("" if none). */
SG_API const char *sg_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
