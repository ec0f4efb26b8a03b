/* Nodes: validating descriptors, storing nodes, copying and freeing them. */
#include "core/node.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/checked.h"
#include "core/conditional.h"
#include "core/error.h"
#include "core/kernel_owner.h"
#include "core/memory_table.h"
#include "core/sys.h"

static const char *const kind_names[SG__NODE_KIND_COUNT] = {
    "copy", "kernel", "memset", "host", "empty", "stream-fn", "nccl", "conditional"};

const char *sg__node_kind_name(sg__node_kind kind) {
  return (unsigned)kind < SG__NODE_KIND_COUNT ? kind_names[kind] : "?";
}

const char *sg__node_label(const sg__node *node, uint32_t index, char buf[SG__LABEL_BYTES]) {
  if (node && node->name)
    snprintf(buf, SG__LABEL_BYTES, "'%s' (#%u)", node->name, index);
  else
    snprintf(buf, SG__LABEL_BYTES, "#%u", index);
  return buf;
}

const char *sg__where_text(const sg__where *w, char buf[SG__WHERE_BYTES]) {
  char label[SG__LABEL_BYTES];
  if (w->kind && w->name)
    snprintf(buf, SG__WHERE_BYTES, "%s: %s '%.64s'", w->fn, w->kind, w->name);
  else if (w->kind)
    snprintf(buf, SG__WHERE_BYTES, "%s: %s #%u", w->fn, w->kind, w->index);
  else
    snprintf(buf, SG__WHERE_BYTES, "%s: node %s", w->fn, sg__node_label(w->node, w->index, label));
  return buf;
}

/* Fails with a message prefixed by where the validation happened. */
static sg_status SG_PRINTF(3, 4) fail_at(const sg__where *w, sg_status st, const char *fmt, ...) {
  char prefix[SG__WHERE_BYTES], what[SG_ERROR_MESSAGE_BYTES];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return sg__fail(st, "%s: %s", sg__where_text(w, prefix), what);
}

static sg_status copy_name(const char *name, const sg__where *where, char **out) {
  *out = NULL;
  if (!name) return SG_OK;
  if (strlen(name) > SG_MAX_NAME_BYTES)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "name longer than %u bytes", SG_MAX_NAME_BYTES);
  *out = sg__strdup(name);
  if (!*out) return fail_at(where, SG_ERR_OUT_OF_MEMORY, "out of memory copying the name");
  return SG_OK;
}

/* ---- copies ------------------------------------------------------------ */

static const char *copy_kind_text(sg_copy_kind kind) {
  switch (kind) {
    case SG_COPY_HOST_TO_DEVICE: return "host->device";
    case SG_COPY_DEVICE_TO_HOST: return "device->host";
    case SG_COPY_DEVICE_TO_DEVICE: return "device->device";
    case SG_COPY_HOST_TO_HOST: return "host->host";
    default: return "auto";
  }
}

/* Does memory of `kind` fit the side of a copy that expects device (or host)
 * memory? Managed memory fits both. */
static int side_fits(sg_memory_kind kind, int want_device) {
  if (kind == SG_MEMORY_MANAGED) return 1;
  return want_device ? sg__memory_is_device(kind) : sg__memory_is_host(kind);
}

/* A range's size: no object is larger than PTRDIFF_MAX bytes, so a larger
 * one is a size computation gone wrong (a negative number made unsigned). */
static sg_status check_size(const sg__where *w, const char *what, size_t bytes) {
  if (bytes > PTRDIFF_MAX)
    return fail_at(w, SG_ERR_INVALID_ARGUMENT,
                   "%s %zu is larger than any object can be (at most %td bytes); "
                   "check how the size is computed", what, bytes, PTRDIFF_MAX);
  return SG_OK;
}

/* [ptr, ptr + bytes), one side of a copy or a memset's destination, must
 * not wrap around the address space (check_no_wrap, first) and must end
 * inside the block `ptr` lies in, where the library knows one
 * (memory_table.h: check_extent). check_extent returns the kind of memory
 * at ptr through *kind, and whether it lies in an sg_mem_alloc block. */
static sg_status check_no_wrap(const sg__where *w, const char *side, const void *ptr,
                              size_t bytes) {
  uintptr_t end;
  if (sg__range_end(ptr, bytes, &end))
    return fail_at(w, SG_ERR_INVALID_ARGUMENT,
                   "the %s %p + %zu bytes runs past the end of the address space", side, ptr,
                   bytes);
  return SG_OK;
}

static sg_status check_extent(const sg__where *w, const char *side, const void *ptr,
                              size_t bytes, sg_memory_kind *kind, unsigned char *in_alloc) {
  sg__block block;
  *kind = sg__memory_find(ptr, &block);
  *in_alloc = block.base && !block.from_driver;
  if (!block.base) return SG_OK;
  if (block.freed)
    return fail_at(w, SG_ERR_INVALID_ARGUMENT,
                   "the %s %p lies in an sg_mem_alloc block that was freed (sg_mem_free; its "
                   "memory is kept only until the executables using it are gone); use live memory",
                   side, ptr);
  size_t offset = (uintptr_t)ptr - block.base, room = block.bytes - offset;
  if (bytes <= room) return SG_OK;
  char offset_text[48] = "";
  if (offset) snprintf(offset_text, sizeof offset_text, ", %zu bytes into it", offset);
  return fail_at(w, SG_ERR_INVALID_ARGUMENT,
                 "%zu bytes at the %s %p run past the end of its block (%zu bytes from there%s): "
                 "%s of %zu bytes at %p (%s); shorten it to at most %zu bytes or use a larger "
                 "block",
                 bytes, side, ptr, room, offset_text,
                 block.from_driver ? "a CUDA allocation" : "an sg_mem_alloc block", block.bytes,
                 (void *)block.base,
                 block.from_driver ? "its range as the driver reports it"
                                   : sg__memory_kind_text(*kind),
                 room);
}

/* temp_sides: SG__TEMP_DST and/or SG__TEMP_SRC, the sides that are planned
 * temporaries (node.h): their pointer is NULL until an executable places
 * them, and their memory is the executable's arena. */
static sg_status copy_node(const sg_copy_desc *desc, const sg__where *where, unsigned temp_sides,
                           sg__node *out) {
  const int dst_temp = (temp_sides & SG__TEMP_DST) != 0, src_temp = (temp_sides & SG__TEMP_SRC) != 0;
  if (!desc) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "descriptor is NULL");
  if (dst_temp && desc->dst)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "dst is a temporary: give dst NULL");
  if (src_temp && desc->src)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "src is a temporary: give src NULL");
  if (!desc->dst && !dst_temp) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "dst is NULL");
  if (!desc->src && !src_temp) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "src is NULL");
  if (desc->bytes == 0) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "bytes is 0");
  if ((unsigned)desc->kind > SG_COPY_HOST_TO_HOST)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "copy kind %d is not an sg_copy_kind",
                    (int)desc->kind);
  sg_status st = check_size(where, "bytes", desc->bytes);
  if (st) return st;
  if ((!dst_temp && (st = check_no_wrap(where, "destination", desc->dst, desc->bytes))) ||
      (!src_temp && (st = check_no_wrap(where, "source", desc->src, desc->bytes))))
    return st;
  sg_memory_kind dst_mem = SG_MEMORY_DEVICE, src_mem = SG_MEMORY_DEVICE;
  unsigned char dst_alloc = 0, src_alloc = 0;
  if ((!dst_temp &&
       (st = check_extent(where, "destination", desc->dst, desc->bytes, &dst_mem, &dst_alloc))) ||
      (!src_temp &&
       (st = check_extent(where, "source", desc->src, desc->bytes, &src_mem, &src_alloc))))
    return st;
  if (!temp_sides && sg__ranges_overlap(desc->dst, desc->bytes, desc->src, desc->bytes))
    return fail_at(where, SG_ERR_INVALID_COPY, "source and destination overlap");
  sg_copy_kind kind = desc->kind;
  if (kind == SG_COPY_AUTO) {
    int src_dev = sg__memory_is_device(src_mem), dst_dev = sg__memory_is_device(dst_mem);
    kind = src_dev ? (dst_dev ? SG_COPY_DEVICE_TO_DEVICE : SG_COPY_DEVICE_TO_HOST)
                   : (dst_dev ? SG_COPY_HOST_TO_DEVICE : SG_COPY_HOST_TO_HOST);
  }
  int src_wants_device = kind == SG_COPY_DEVICE_TO_HOST || kind == SG_COPY_DEVICE_TO_DEVICE;
  int dst_wants_device = kind == SG_COPY_HOST_TO_DEVICE || kind == SG_COPY_DEVICE_TO_DEVICE;
  if (!side_fits(src_mem, src_wants_device))
    return fail_at(where, SG_ERR_INVALID_COPY, "%s copy but the source %p is %s",
                    copy_kind_text(kind), desc->src, sg__memory_kind_text(src_mem));
  if (!side_fits(dst_mem, dst_wants_device))
    return fail_at(where, SG_ERR_INVALID_COPY, "%s copy but the destination %p is %s",
                    copy_kind_text(kind), desc->dst, sg__memory_kind_text(dst_mem));

  char *name;
  if ((st = copy_name(desc->name, where, &name))) return st;
  memset(out, 0, sizeof *out);
  out->kind = SG__NODE_COPY;
  out->device = SG_DEVICE_DEFAULT;
  out->name = name;
  out->u.copy = (sg__copy){desc->dst, desc->src, desc->bytes, kind, dst_mem, src_mem,
                           dst_alloc, src_alloc, 0};
  return SG_OK;
}

sg_status sg__node_from_copy(const sg_copy_desc *desc, const sg__where *where, sg__node *out) {
  return copy_node(desc, where, 0, out);
}

sg_status sg__node_from_copy_temps(const sg_copy_desc *desc, const sg__where *where,
                                   unsigned temp_sides, sg__node *out) {
  return copy_node(desc, where, temp_sides, out);
}

/* ---- kernels ----------------------------------------------------------- */

#define ARG_ALIGN 16u

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static sg_status check_shape(const sg_kernel_desc *desc, const sg__where *where) {
  const sg_dim3 g = desc->grid, b = desc->block;
  if (!g.x || !g.y || !g.z)
    return fail_at(where, SG_ERR_INVALID_LAUNCH, "grid (%u,%u,%u) has a zero dimension",
                    g.x, g.y, g.z);
  if (!b.x || !b.y || !b.z)
    return fail_at(where, SG_ERR_INVALID_LAUNCH, "block (%u,%u,%u) has a zero dimension",
                    b.x, b.y, b.z);
  unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
  if (threads > SG_MAX_BLOCK_THREADS || b.z > SG_MAX_BLOCK_Z)
    return fail_at(where, SG_ERR_INVALID_LAUNCH, "block (%u,%u,%u) has %llu threads; at most %u threads and block.z <= %u", b.x, b.y, b.z, threads, SG_MAX_BLOCK_THREADS, SG_MAX_BLOCK_Z);
  if (g.x > SG_MAX_GRID_X || g.y > SG_MAX_GRID_YZ || g.z > SG_MAX_GRID_YZ)
    return fail_at(where, SG_ERR_INVALID_LAUNCH, "grid (%u,%u,%u) too large (x <= %u, y and z <= %u)", g.x, g.y,
                    g.z, SG_MAX_GRID_X, SG_MAX_GRID_YZ);
  if (desc->shared_bytes > SG_MAX_SHARED_BYTES)
    return fail_at(where, SG_ERR_INVALID_LAUNCH, "%zu bytes of dynamic shared memory; at most %u", desc->shared_bytes, SG_MAX_SHARED_BYTES);
  if ((unsigned)desc->func_kind > SG_KERNEL_CUDA_KERNEL)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "func_kind %d is not an sg_kernel_func_kind", (int)desc->func_kind);
  if (!desc->func && !desc->host_twin)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "neither func nor host_twin is set");
  if (desc->flags & ~SG_KERNEL_PROGRAMMATIC)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "flags 0x%x has bits that are no SG_KERNEL_* flag",
                   desc->flags);
  return SG_OK;
}

static sg_status check_args(const sg_kernel_desc *desc, const sg__where *where, size_t *blob_bytes) {
  unsigned n = desc->arg_count;
  if (n > SG_MAX_KERNEL_ARGS)
    return fail_at(where, SG_ERR_INVALID_KERNEL_ARGS, "%u arguments; at most %u", n,
                    SG_MAX_KERNEL_ARGS);
  if (n && (!desc->args || !desc->arg_sizes))
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "%u arguments but args or arg_sizes is NULL", n);
  size_t total = 0, values = 0;
  for (unsigned i = 0; i < n; i++) {
    size_t sz = desc->arg_sizes[i];
    if (sz == 0)
      return fail_at(where, SG_ERR_INVALID_KERNEL_ARGS, "argument %u has size 0", i);
    if (sz > SG_MAX_KERNEL_ARG_BYTES || total + sz > SG_MAX_KERNEL_ARG_BYTES)
      return fail_at(where, SG_ERR_INVALID_KERNEL_ARGS, "arguments take more than %u bytes (argument %u is %zu bytes)",
                      SG_MAX_KERNEL_ARG_BYTES, i, sz);
    if (!desc->args[i])
      return fail_at(where, SG_ERR_INVALID_ARGUMENT, "args[%u] is NULL", i);
    total += sz;
    values += align_up(sz, ARG_ALIGN);
  }
  *blob_bytes = align_up(n * (sizeof(void *) + sizeof(size_t)), ARG_ALIGN) + values;
  return SG_OK;
}

/* Points arg_ptrs at the values laid out after the two arrays. */
static void link_args(sg__kernel *k) {
  k->arg_sizes = (size_t *)(k->arg_ptrs + k->arg_count);
  unsigned char *value = (unsigned char *)k->arg_ptrs +
                         align_up(k->arg_count * (sizeof(void *) + sizeof(size_t)), ARG_ALIGN);
  for (unsigned i = 0; i < k->arg_count; i++) {
    k->arg_ptrs[i] = value;
    value += align_up(k->arg_sizes[i], ARG_ALIGN);
  }
}

sg_status sg__node_from_kernel_reusing(const sg_kernel_desc *desc, const sg__where *where,
                                       sg__arg_spare *spare, sg__node *out) {
  if (!desc) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "descriptor is NULL");
  size_t blob_bytes = 0;
  sg_status st = check_shape(desc, where);
  if (!st) st = check_args(desc, where, &blob_bytes);
  if (st) return st;

  void **blob = NULL;
  if (desc->arg_count && spare && spare->blob && spare->bytes >= blob_bytes) {
    blob = spare->blob;
    blob_bytes = spare->bytes;
  } else if (desc->arg_count) {
    blob = sg__aligned_alloc(ARG_ALIGN, blob_bytes);
    if (!blob) return fail_at(where, SG_ERR_OUT_OF_MEMORY, "out of memory for arguments");
  }
  char *name;
  st = copy_name(desc->name, where, &name);
  if (st) {
    if (!spare || blob != spare->blob) sg__free(blob);
    return st;
  }
  if (spare && blob && blob == spare->blob) *spare = (sg__arg_spare){NULL, 0};
  /* Field by field, every field of the node and of its kernel member (the
   * union's largest): zeroing first, by memset or a compound literal's
   * fill, compiles to `rep stos`, whose start-up was a quarter of this
   * function's time on the sg_exec_set_kernel path. */
  out->kind = SG__NODE_KERNEL;
  out->device = SG_DEVICE_DEFAULT;
  out->name = name;
  sg__kernel *k = &out->u.kernel;
  k->func = desc->func;
  k->func_kind = desc->func_kind;
  k->grid = desc->grid;
  k->block = desc->block;
  k->shared_bytes = desc->shared_bytes;
  k->arg_count = desc->arg_count;
  k->arg_ptrs = blob;
  k->arg_sizes = NULL;
  k->arg_blob_bytes = blob ? blob_bytes : 0;
  k->host_twin = desc->host_twin;
  k->cond_arg = 0;
  k->cond_id = 0;
  k->grid_arg = 0;
  k->grid_words = NULL;
  k->programmatic = (desc->flags & SG_KERNEL_PROGRAMMATIC) != 0;
  k->owner = desc->func_kind == SG_KERNEL_CUDA_KERNEL && desc->func
                 ? sg__kernel_owner_retain_kernel(desc->func)
                 : NULL;
  if (blob) {
    /* Arguments are captured by value now: the caller's storage may change. */
    k->arg_sizes = (size_t *)(blob + k->arg_count);
    memcpy(k->arg_sizes, desc->arg_sizes, k->arg_count * sizeof(size_t));
    link_args(k);
    for (unsigned i = 0; i < k->arg_count; i++)
      memcpy(k->arg_ptrs[i], desc->args[i], k->arg_sizes[i]);
  }
  return SG_OK;
}

sg_status sg__node_from_kernel(const sg_kernel_desc *desc, const sg__where *where, sg__node *out) {
  return sg__node_from_kernel_reusing(desc, where, NULL, out);
}

/* ---- memset, host, stream function, empty ------------------------------ */

static sg_status memset_node(const sg_memset_desc *desc, const sg__where *where, int dst_temp,
                             sg__node *out) {
  if (!desc) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "descriptor is NULL");
  if (dst_temp && desc->dst)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "dst is a temporary: give dst NULL");
  if (!desc->dst && !dst_temp) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "dst is NULL");
  if (desc->count == 0) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "count is 0");
  unsigned es = desc->element_size;
  if (es != 1 && es != 2 && es != 4)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "element_size %u is not 1, 2 or 4", es);
  if (es < 4 && desc->value >> (8 * es))
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "value 0x%x does not fit in %u byte(s)",
                    desc->value, es);
  if ((uintptr_t)desc->dst % es)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "dst %p is not aligned to element_size %u", desc->dst, es);
  size_t bytes;
  if (sg__mul_overflows(desc->count, es, &bytes))
    return fail_at(where, SG_ERR_INVALID_ARGUMENT,
                   "count %zu of %u-byte elements is more bytes than a size_t holds", desc->count,
                   es);
  sg_memory_kind dst_mem = SG_MEMORY_DEVICE;
  unsigned char dst_alloc = 0;
  sg_status st = check_size(where, "count * element_size", bytes);
  if (!st && !dst_temp) st = check_no_wrap(where, "destination", desc->dst, bytes);
  if (!st && !dst_temp)
    st = check_extent(where, "destination", desc->dst, bytes, &dst_mem, &dst_alloc);
  if (st) return st;
  char *name;
  if ((st = copy_name(desc->name, where, &name))) return st;
  memset(out, 0, sizeof *out);
  out->kind = SG__NODE_MEMSET;
  out->device = SG_DEVICE_DEFAULT;
  out->name = name;
  out->u.memset = (sg__memset){desc->dst, desc->value, es, desc->count, dst_mem, dst_alloc, 0};
  return SG_OK;
}

sg_status sg__node_from_memset(const sg_memset_desc *desc, const sg__where *where, sg__node *out) {
  return memset_node(desc, where, 0, out);
}

sg_status sg__node_from_memset_temp(const sg_memset_desc *desc, const sg__where *where,
                                    sg__node *out) {
  return memset_node(desc, where, 1, out);
}

sg_status sg__node_from_host(const sg_host_desc *desc, const sg__where *where, sg__node *out) {
  if (!desc) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "descriptor is NULL");
  if (!desc->fn) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "fn is NULL");
  char *name;
  sg_status st = copy_name(desc->name, where, &name);
  if (st) return st;
  memset(out, 0, sizeof *out);
  out->kind = SG__NODE_HOST;
  out->device = SG_DEVICE_DEFAULT;
  out->name = name;
  out->u.host = (sg__host){desc->fn, desc->user_data};
  return SG_OK;
}

sg_status sg__node_from_stream_fn(const sg_stream_fn_desc *desc, const sg__where *where,
                                  sg__node *out) {
  if (!desc) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "descriptor is NULL");
  if (!desc->fn && !desc->host_twin)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "neither fn nor host_twin is set");
  char *name;
  sg_status st = copy_name(desc->name, where, &name);
  if (st) return st;
  sg__stream_fn_payload *p = sg__malloc(sizeof *p);
  if (!p) {
    sg__free(name);
    return fail_at(where, SG_ERR_OUT_OF_MEMORY, "out of memory");
  }
  atomic_init(&p->refs, 1);
  p->fn = desc->fn;
  p->user_data = desc->user_data;
  p->release = desc->release;
  p->host_twin = desc->host_twin;
  memset(out, 0, sizeof *out);
  out->kind = SG__NODE_STREAM_FN;
  out->device = SG_DEVICE_DEFAULT;
  out->name = name;
  out->u.stream_fn = p;
  return SG_OK;
}

/* ---- NCCL ---------------------------------------------------------------- */

static const char *const nccl_op_names[] = {"?", "all-reduce", "all-gather", "send", "recv"};

/* Bytes of one element of `type`; 0 for a value that is no sg_nccl_type. */
static size_t nccl_type_bytes(sg_nccl_type type) {
  switch (type) {
    case SG_NCCL_INT8: case SG_NCCL_UINT8: return 1;
    case SG_NCCL_FLOAT16: case SG_NCCL_BFLOAT16: return 2;
    case SG_NCCL_INT32: case SG_NCCL_UINT32: case SG_NCCL_FLOAT32: return 4;
    case SG_NCCL_INT64: case SG_NCCL_UINT64: case SG_NCCL_FLOAT64: return 8;
    default: return 0;
  }
}

size_t sg__nccl_type_bytes(sg_nccl_type type) { return nccl_type_bytes(type); }

const char *sg__nccl_op_name(sg_nccl_op op) {
  return op >= SG_NCCL_ALL_REDUCE && op <= SG_NCCL_RECV ? nccl_op_names[op] : "?";
}

/* What can be checked without NCCL: the op, the type, the count and that
 * the pointers the op reads and writes are given (and only those). */
static sg_status check_nccl_call(const sg_nccl_call *c, unsigned i, const sg__where *where) {
  if (c->op < SG_NCCL_ALL_REDUCE || c->op > SG_NCCL_RECV)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "call %u: op %d is not an sg_nccl_op", i,
                   (int)c->op);
  const char *op = nccl_op_names[c->op];
  if (!c->comm) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "call %u (%s): comm is NULL", i, op);
  if (c->count == 0)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "call %u (%s): count is 0", i, op);
  size_t elem = nccl_type_bytes(c->type), bytes;
  if (!elem)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "call %u (%s): type %d is not an sg_nccl_type",
                   i, op, (int)c->type);
  if (sg__mul_overflows(c->count, elem, &bytes) || bytes > PTRDIFF_MAX)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT,
                   "call %u (%s): count %zu of %zu-byte elements is larger than any buffer can "
                   "be; check how the count is computed", i, op, c->count, elem);
  int reads = c->op != SG_NCCL_RECV, writes = c->op != SG_NCCL_SEND;
  if (reads && !c->send)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "call %u (%s): send is NULL", i, op);
  if (writes && !c->recv)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "call %u (%s): recv is NULL", i, op);
  if (!reads && c->send)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT,
                   "call %u (recv): send is set; a receive only writes recv (set send to NULL)", i);
  if (!writes && c->recv)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT,
                   "call %u (send): recv is set; a send only reads send (set recv to NULL)", i);
  if (c->op == SG_NCCL_ALL_REDUCE && (c->reduce < SG_NCCL_SUM || c->reduce > SG_NCCL_AVG))
    return fail_at(where, SG_ERR_INVALID_ARGUMENT,
                   "call %u (all-reduce): reduce %d is not an sg_nccl_reduce", i, (int)c->reduce);
  if ((c->op == SG_NCCL_SEND || c->op == SG_NCCL_RECV) && c->peer < 0)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "call %u (%s): peer %d is not a rank", i, op,
                   c->peer);
  return SG_OK;
}

sg_status sg__node_from_nccl(const sg_nccl_desc *desc, const sg__where *where, sg__node *out) {
  if (!desc) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "descriptor is NULL");
  if (desc->call_count == 0 || desc->call_count > SG_MAX_NCCL_CALLS)
    return fail_at(where, SG_ERR_INVALID_ARGUMENT, "%u calls; 1 to %u are allowed",
                   desc->call_count, SG_MAX_NCCL_CALLS);
  if (!desc->calls) return fail_at(where, SG_ERR_INVALID_ARGUMENT, "calls is NULL");
  sg_status st;
  for (unsigned i = 0; i < desc->call_count; i++)
    if ((st = check_nccl_call(&desc->calls[i], i, where))) return st;
  char *name;
  if ((st = copy_name(desc->name, where, &name))) return st;
  sg_nccl_call *calls = sg__malloc(desc->call_count * sizeof *calls);
  if (!calls) {
    sg__free(name);
    return fail_at(where, SG_ERR_OUT_OF_MEMORY, "out of memory copying the calls");
  }
  memcpy(calls, desc->calls, desc->call_count * sizeof *calls);
  memset(out, 0, sizeof *out);
  out->kind = SG__NODE_NCCL;
  out->device = SG_DEVICE_DEFAULT;
  out->name = name;
  out->u.nccl = (sg__nccl){calls, desc->call_count};
  return SG_OK;
}

sg_status sg__node_empty(const char *name, const sg__where *where, sg__node *out) {
  char *copy;
  sg_status st = copy_name(name, where, &copy);
  if (st) return st;
  memset(out, 0, sizeof *out);
  out->kind = SG__NODE_EMPTY;
  out->device = SG_DEVICE_DEFAULT;
  out->name = copy;
  return SG_OK;
}

/* ---- copy, free, compare ----------------------------------------------- */

sg_status sg__node_clone(const sg__node *src, sg__node *dst) {
  *dst = *src;
  dst->name = NULL;
  if (src->kind == SG__NODE_KERNEL) dst->u.kernel.owner = NULL; /* held once the copy is whole */
  if (src->name && !(dst->name = sg__strdup(src->name))) return SG_ERR_OUT_OF_MEMORY;
  if (src->kind == SG__NODE_KERNEL && src->u.kernel.arg_ptrs) {
    sg__kernel *k = &dst->u.kernel;
    k->arg_ptrs = sg__aligned_alloc(ARG_ALIGN, k->arg_blob_bytes);
    if (!k->arg_ptrs) {
      sg__free(dst->name);
      dst->name = NULL;
      return SG_ERR_OUT_OF_MEMORY;
    }
    memcpy(k->arg_ptrs, src->u.kernel.arg_ptrs, k->arg_blob_bytes);
    link_args(k);
  }
  if (src->kind == SG__NODE_NCCL) {
    size_t bytes = src->u.nccl.call_count * sizeof *src->u.nccl.calls;
    dst->u.nccl.calls = sg__malloc(bytes);
    if (!dst->u.nccl.calls) {
      sg__free(dst->name);
      dst->name = NULL;
      return SG_ERR_OUT_OF_MEMORY;
    }
    memcpy(dst->u.nccl.calls, src->u.nccl.calls, bytes);
  }
  if (src->kind == SG__NODE_COND && sg__cond_payload_clone(src->u.cond, &dst->u.cond)) {
    sg__free(dst->name);
    dst->name = NULL;
    return SG_ERR_OUT_OF_MEMORY;
  }
  if (src->kind == SG__NODE_STREAM_FN) atomic_fetch_add(&src->u.stream_fn->refs, 1);
  if (src->kind == SG__NODE_KERNEL && src->u.kernel.owner) {
    dst->u.kernel.owner = src->u.kernel.owner;
    sg__kernel_owner_retain(dst->u.kernel.owner);
  }
  return SG_OK;
}

static void release_params(sg__node *node) {
  if (node->kind == SG__NODE_KERNEL) {
    sg__free(node->u.kernel.arg_ptrs);
    node->u.kernel.arg_ptrs = NULL;
    if (node->u.kernel.owner) sg__kernel_owner_release(node->u.kernel.owner);
    node->u.kernel.owner = NULL;
  } else if (node->kind == SG__NODE_NCCL) {
    sg__free(node->u.nccl.calls);
    node->u.nccl.calls = NULL;
  } else if (node->kind == SG__NODE_STREAM_FN && node->u.stream_fn) {
    sg__stream_fn_payload *p = node->u.stream_fn;
    if (atomic_fetch_sub(&p->refs, 1) == 1) {
      if (p->release) p->release(p->user_data);
      sg__free(p);
    }
    node->u.stream_fn = NULL;
  } else if (node->kind == SG__NODE_COND) {
    sg__cond_payload_release(node->u.cond);
    node->u.cond = NULL;
  }
}

void sg__node_free(sg__node *node) {
  release_params(node);
  sg__free(node->name);
  node->name = NULL;
}

void sg__node_replace_keeping(sg__node *dst, sg__node *src, sg__arg_spare *spare) {
  if (spare && !spare->blob && dst->kind == SG__NODE_KERNEL && dst->u.kernel.arg_ptrs) {
    *spare = (sg__arg_spare){dst->u.kernel.arg_ptrs, dst->u.kernel.arg_blob_bytes};
    dst->u.kernel.arg_ptrs = NULL;
  }
  /* New parameters keep the kernel's condition argument (the descriptor
   * has no field for it). */
  if (dst->kind == SG__NODE_KERNEL && src->kind == SG__NODE_KERNEL && !src->u.kernel.cond_arg) {
    src->u.kernel.cond_arg = dst->u.kernel.cond_arg;
    src->u.kernel.cond_id = dst->u.kernel.cond_id;
  }
  release_params(dst);
  if (src->name) {
    sg__free(dst->name);
    dst->name = src->name;
  }
  dst->u = src->u;
  /* Left an empty node, which owns nothing, rather than zeroing its
   * parameters: a memset of the union compiles to `rep stos`, a visible
   * share of a kernel update's time. */
  src->kind = SG__NODE_EMPTY;
  src->name = NULL;
}

void sg__node_replace(sg__node *dst, sg__node *src) { sg__node_replace_keeping(dst, src, NULL); }

void sg__memset_fill(const sg__memset *m) {
  if (m->element_size == 1) {
    memset(m->dst, (int)m->value, m->count);
  } else if (m->element_size == 2) {
    uint16_t *p = m->dst, v = (uint16_t)m->value;
    for (size_t i = 0; i < m->count; i++) p[i] = v;
  } else {
    uint32_t *p = m->dst, v = m->value;
    for (size_t i = 0; i < m->count; i++) p[i] = v;
  }
}

/* Field by field: the structs' padding holds whatever the caller's had. */
static int nccl_calls_equal(const sg_nccl_call *x, const sg_nccl_call *y) {
  return x->op == y->op && x->comm == y->comm && x->send == y->send && x->recv == y->recv &&
         x->count == y->count && x->type == y->type && x->reduce == y->reduce &&
         x->peer == y->peer;
}

int sg__node_same_shape(const sg__node *a, const sg__node *b) {
  if (a->kind != b->kind || a->device != b->device) return 0;
  if (a->kind == SG__NODE_COND) return sg__cond_same_shape(a->u.cond, b->u.cond);
  if (a->kind == SG__NODE_KERNEL && (a->u.kernel.cond_arg != b->u.kernel.cond_arg ||
                                     a->u.kernel.cond_id != b->u.kernel.cond_id ||
                                     a->u.kernel.grid_arg != b->u.kernel.grid_arg))
    return 0;
  /* A programmatic kernel's edges are of another type. */
  if (a->kind == SG__NODE_KERNEL) return a->u.kernel.programmatic == b->u.kernel.programmatic;
  if (a->kind != SG__NODE_NCCL) return 1;
  if (a->u.nccl.call_count != b->u.nccl.call_count) return 0;
  for (unsigned i = 0; i < a->u.nccl.call_count; i++)
    if (a->u.nccl.calls[i].op != b->u.nccl.calls[i].op ||
        a->u.nccl.calls[i].comm != b->u.nccl.calls[i].comm)
      return 0;
  return 1;
}

int sg__node_params_equal(const sg__node *a, const sg__node *b) {
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
    case SG__NODE_COPY:
      return a->u.copy.dst == b->u.copy.dst && a->u.copy.src == b->u.copy.src &&
             a->u.copy.bytes == b->u.copy.bytes && a->u.copy.kind == b->u.copy.kind;
    case SG__NODE_KERNEL: {
      const sg__kernel *x = &a->u.kernel, *y = &b->u.kernel;
      if (x->func != y->func || x->func_kind != y->func_kind || x->host_twin != y->host_twin ||
          x->shared_bytes != y->shared_bytes || x->arg_count != y->arg_count ||
          memcmp(&x->grid, &y->grid, sizeof x->grid) || memcmp(&x->block, &y->block, sizeof x->block))
        return 0;
      for (unsigned i = 0; i < x->arg_count; i++)
        if (x->arg_sizes[i] != y->arg_sizes[i] ||
            memcmp(x->arg_ptrs[i], y->arg_ptrs[i], x->arg_sizes[i]))
          return 0;
      return 1;
    }
    case SG__NODE_MEMSET:
      return a->u.memset.dst == b->u.memset.dst && a->u.memset.value == b->u.memset.value &&
             a->u.memset.element_size == b->u.memset.element_size &&
             a->u.memset.count == b->u.memset.count;
    case SG__NODE_HOST:
      return a->u.host.fn == b->u.host.fn && a->u.host.user_data == b->u.host.user_data;
    case SG__NODE_EMPTY:
      return 1;
    case SG__NODE_STREAM_FN:
      return a->u.stream_fn == b->u.stream_fn;
    case SG__NODE_NCCL:
      if (a->u.nccl.call_count != b->u.nccl.call_count) return 0;
      for (unsigned i = 0; i < a->u.nccl.call_count; i++)
        if (!nccl_calls_equal(&a->u.nccl.calls[i], &b->u.nccl.calls[i])) return 0;
      return 1;
    default:
      return 0;
  }
}
