/* Internal: a node's stored form, and validation of the public descriptors.
 *
 * The graph, its snapshots (in executables and plans) and the backends all
 * keep nodes in this form. Building one from a descriptor validates it and
 * deep-copies what it points to (kernel arguments by value, the name). */
#ifndef SG_CORE_NODE_H
#define SG_CORE_NODE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "streamgraph/graph.h"
#include "streamgraph/memory.h"
#include "streamgraph/nccl.h"

typedef enum sg__node_kind {
  SG__NODE_COPY = 0,
  SG__NODE_KERNEL,
  SG__NODE_MEMSET,
  SG__NODE_HOST,
  SG__NODE_EMPTY,
  SG__NODE_STREAM_FN,
  SG__NODE_NCCL,
  SG__NODE_COND,      /* IF, WHILE or SWITCH over body graphs (core/conditional.h) */
  SG__NODE_KIND_COUNT
} sg__node_kind;

typedef struct sg__copy {
  void *dst;
  const void *src;
  size_t bytes;
  sg_copy_kind kind;          /* resolved: never SG_COPY_AUTO */
  sg_memory_kind dst_memory;  /* as classified when the node was set */
  sg_memory_kind src_memory;
  unsigned char dst_alloc;    /* 1: dst lay in an sg_mem_alloc block when the node was set */
  unsigned char src_alloc;
  unsigned char held;         /* blocks an executable holds: 1 dst, 2 src (node_memory.h) */
} sg__copy;

typedef struct sg__kernel {
  const void *func;
  sg_kernel_func_kind func_kind;
  sg_dim3 grid, block;
  size_t shared_bytes;
  unsigned arg_count;
  /* One allocation (arg_blob_bytes long): arg_ptrs[arg_count], then
   * arg_sizes[arg_count], then the values, each at a 16-byte-aligned offset.
   * arg_ptrs point at the values, as cudaLaunchKernel wants them. */
  void **arg_ptrs;
  size_t *arg_sizes;
  size_t arg_blob_bytes;
  sg_host_twin_fn host_twin;
  /* The owner of a registered cudaKernel_t (a module), held while this node
   * names it; NULL for every other kernel (core/kernel_owner.h). */
  struct sg__kernel_owner *owner;
  /* The argument tied to a condition (sg_graph_kernel_bind_cond): its index
   * plus one, 0 when none; each executable puts its own sg_cond_ref there. */
  uint32_t cond_arg;
  uint32_t cond_id;           /* the condition's index in its top-level graph */
  /* The argument that receives the grid source (sg_graph_kernel_bind_grid):
   * its index plus one, 0 when none; the grid is then read from grid_words
   * at each launch (core/grid_source.h). */
  uint32_t grid_arg;
  const unsigned *grid_words;
  /* SG_KERNEL_PROGRAMMATIC was set: the kernel may run as the dependent
   * of a programmatic edge (plan/programmatic.c). */
  unsigned char programmatic;
} sg__kernel;

typedef struct sg__memset {
  void *dst;
  unsigned value;
  unsigned element_size;
  size_t count;
  sg_memory_kind dst_memory;
  unsigned char dst_alloc;    /* 1: dst lay in an sg_mem_alloc block when the node was set */
  unsigned char held;         /* 1: an executable holds dst's block (node_memory.h) */
} sg__memset;

typedef struct sg__host {
  sg_host_fn fn;
  void *user_data;
} sg__host;

/* A stream function's user data is shared by the graph and every snapshot of
 * it; `release` runs when the last holder lets go. */
typedef struct sg__stream_fn_payload {
  atomic_long refs;
  sg_stream_fn fn;
  void *user_data;
  void (*release)(void *user_data);
  sg_host_fn host_twin;
} sg__stream_fn_payload;

/* An NCCL node's calls, copied (owned). */
typedef struct sg__nccl {
  sg_nccl_call *calls;
  unsigned call_count;
} sg__nccl;

typedef struct sg__node {
  sg__node_kind kind;
  /* The device ordinal the node runs on, or SG_DEVICE_DEFAULT (the
   * executable's). Set by sg_graph_set_device; parameter updates keep it. */
  int device;
  char *name; /* owned; NULL when unnamed */
  union {
    sg__copy copy;
    sg__kernel kernel;
    sg__memset memset;
    sg__host host;
    sg__stream_fn_payload *stream_fn;
    sg__nccl nccl;
    struct sg__cond_node *cond; /* shared, counted (core/conditional.h) */
  } u;
} sg__node;

/* "'name' (#3)" or "#3": how messages name a node. */
#define SG__LABEL_BYTES 300
const char *sg__node_label(const sg__node *node, uint32_t index, char buf[SG__LABEL_BYTES]);
const char *sg__node_kind_name(sg__node_kind kind);

/* Where a descriptor is being validated, for messages: a new node (`kind`,
 * `name`, the index it would get) or an existing one (`node`, `index`).
 * The text is made only when a message needs it, so that validation on the
 * update path (sg_exec_set_*) costs no formatting. */
typedef struct sg__where {
  const char *fn;        /* the public function */
  const char *kind;      /* a new node's kind ("kernel"), or NULL for an existing node */
  const char *name;      /* a new node's name (may be NULL) */
  const sg__node *node;  /* an existing node */
  uint32_t index;
} sg__where;

#define SG__WHERE_BYTES (SG__LABEL_BYTES + 96)
/* "sg_graph_add_kernel: kernel 'k'", "sg_exec_set_copy: node 'c' (#2)". */
const char *sg__where_text(const sg__where *where, char buf[SG__WHERE_BYTES]);

/* Validate a descriptor and build a node from it. On failure *out is
 * untouched, nothing is allocated, and the message starts with `where`. */
sg_status sg__node_from_copy(const sg_copy_desc *desc, const sg__where *where, sg__node *out);
sg_status sg__node_from_kernel(const sg_kernel_desc *desc, const sg__where *where, sg__node *out);
sg_status sg__node_from_memset(const sg_memset_desc *desc, const sg__where *where, sg__node *out);
sg_status sg__node_from_host(const sg_host_desc *desc, const sg__where *where, sg__node *out);
/* The same for a copy one or both of whose sides are planned temporaries
 * (their pointers NULL in the descriptor, NULL in the node until an
 * executable places them; their memory kind device until then), and for a
 * memset whose destination is one (core/access.h). */
#define SG__TEMP_DST 1u
#define SG__TEMP_SRC 2u
sg_status sg__node_from_copy_temps(const sg_copy_desc *desc, const sg__where *where,
                                   unsigned temp_sides, sg__node *out);
sg_status sg__node_from_memset_temp(const sg_memset_desc *desc, const sg__where *where,
                                    sg__node *out);
sg_status sg__node_from_stream_fn(const sg_stream_fn_desc *desc, const sg__where *where,
                                  sg__node *out);
sg_status sg__node_from_nccl(const sg_nccl_desc *desc, const sg__where *where, sg__node *out);
/* Bytes of one element of an NCCL type (0: not a type); "all-reduce"... */
size_t sg__nccl_type_bytes(sg_nccl_type type);
const char *sg__nccl_op_name(sg_nccl_op op);
sg_status sg__node_empty(const char *name, const sg__where *where, sg__node *out);

/* A spare argument block for kernel updates: sg__node_from_kernel_reusing
 * builds the new node's arguments in it when it is large enough, and
 * sg__node_replace_keeping puts the replaced node's block back in it, so a
 * stream of kernel updates allocates nothing. */
typedef struct sg__arg_spare {
  void **blob;
  size_t bytes;
} sg__arg_spare;
sg_status sg__node_from_kernel_reusing(const sg_kernel_desc *desc, const sg__where *where,
                                       sg__arg_spare *spare, sg__node *out);
void sg__node_replace_keeping(sg__node *dst, sg__node *src, sg__arg_spare *spare);

/* Deep copy (stream-function payloads are shared, their count raised). */
sg_status sg__node_clone(const sg__node *src, sg__node *dst);
void sg__node_free(sg__node *node);
/* Replaces dst's parameters by src's (same kind), keeping dst's name when src
 * has none, and dst's device; src is consumed (moved: left an empty node owning nothing), so
 * nothing is allocated. */
void sg__node_replace(sg__node *dst, sg__node *src);
/* Carries out a memset whose destination the CPU can write (the host
 * backend, and host memory on the CUDA backend). */
void sg__memset_fill(const sg__memset *m);
/* 1 if both nodes run the same way, so that only parameters differ: same
 * kind and device, and for NCCL nodes the same calls (ops) on the same
 * communicators, in the same order. Otherwise an executable re-plans. */
int sg__node_same_shape(const sg__node *a, const sg__node *b);
/* 1 if both nodes have equal parameters (used to skip unchanged nodes). */
int sg__node_params_equal(const sg__node *a, const sg__node *b);

#endif
