/* The exported entry points of graph.h (core/abi.h): each takes the
 * caller's struct with the size its compiler gave it, brings it to this
 * library's layout, and calls the function of the plain name. */
#include "core/abi.h"
#include "core/error.h"
#include "core/sys.h"
#include "streamgraph/graph.h"

sg_status sg_graph_add_copy_sized(sg_graph *graph, const sg_copy_desc *desc, size_t desc_size,
                                  const sg_node *deps, size_t dep_count, sg_node *out) {
  sg_copy_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_copy_desc, name), &local,
                            sizeof local, "sg_graph_add_copy", "desc", &p);
  return st ? st : sg_graph_add_copy(graph, p, deps, dep_count, out);
}

sg_status sg_graph_add_kernel_sized(sg_graph *graph, const sg_kernel_desc *desc, size_t desc_size,
                                    const sg_node *deps, size_t dep_count, sg_node *out) {
  sg_kernel_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_kernel_desc, name), &local,
                            sizeof local, "sg_graph_add_kernel", "desc", &p);
  return st ? st : sg_graph_add_kernel(graph, p, deps, dep_count, out);
}

sg_status sg_graph_add_memset_sized(sg_graph *graph, const sg_memset_desc *desc, size_t desc_size,
                                    const sg_node *deps, size_t dep_count, sg_node *out) {
  sg_memset_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_memset_desc, name), &local,
                            sizeof local, "sg_graph_add_memset", "desc", &p);
  return st ? st : sg_graph_add_memset(graph, p, deps, dep_count, out);
}

sg_status sg_graph_add_host_sized(sg_graph *graph, const sg_host_desc *desc, size_t desc_size,
                                  const sg_node *deps, size_t dep_count, sg_node *out) {
  sg_host_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_host_desc, name), &local,
                            sizeof local, "sg_graph_add_host", "desc", &p);
  return st ? st : sg_graph_add_host(graph, p, deps, dep_count, out);
}

sg_status sg_graph_add_stream_fn_sized(sg_graph *graph, const sg_stream_fn_desc *desc,
                                       size_t desc_size, const sg_node *deps, size_t dep_count,
                                       sg_node *out) {
  sg_stream_fn_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_stream_fn_desc, name), &local,
                            sizeof local, "sg_graph_add_stream_fn", "desc", &p);
  return st ? st : sg_graph_add_stream_fn(graph, p, deps, dep_count, out);
}

sg_status sg_graph_set_kernel_sized(sg_graph *graph, sg_node node, const sg_kernel_desc *desc,
                                    size_t desc_size) {
  sg_kernel_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_kernel_desc, name), &local,
                            sizeof local, "sg_graph_set_kernel", "desc", &p);
  return st ? st : sg_graph_set_kernel(graph, node, p);
}

sg_status sg_graph_set_copy_sized(sg_graph *graph, sg_node node, const sg_copy_desc *desc,
                                  size_t desc_size) {
  sg_copy_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_copy_desc, name), &local,
                            sizeof local, "sg_graph_set_copy", "desc", &p);
  return st ? st : sg_graph_set_copy(graph, node, p);
}

sg_status sg_graph_set_memset_sized(sg_graph *graph, sg_node node, const sg_memset_desc *desc,
                                    size_t desc_size) {
  sg_memset_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_memset_desc, name), &local,
                            sizeof local, "sg_graph_set_memset", "desc", &p);
  return st ? st : sg_graph_set_memset(graph, node, p);
}

sg_status sg_graph_set_host_sized(sg_graph *graph, sg_node node, const sg_host_desc *desc,
                                  size_t desc_size) {
  sg_host_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_host_desc, name), &local,
                            sizeof local, "sg_graph_set_host", "desc", &p);
  return st ? st : sg_graph_set_host(graph, node, p);
}

sg_status sg_graph_add_temp_sized(sg_graph *graph, const sg_temp_desc *desc, size_t desc_size,
                                  sg_temp *out) {
  sg_temp_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_temp_desc, name), &local,
                            sizeof local, "sg_graph_add_temp", "desc", &p);
  return st ? st : sg_graph_add_temp(graph, p, out);
}

/* An array of accesses in the caller's layout, brought to this library's
 * into a copy (all or nothing, as the plain call). */
sg_status sg_graph_declare_access_sized(sg_graph *graph, sg_node node, const sg_access *accesses,
                                        size_t count, size_t access_size) {
  if (access_size == sizeof(sg_access) || !accesses || !count)
    return sg_graph_declare_access(graph, node, accesses, count);
  const size_t first = SG__ABI_FIRST(sg_access, flags);
  if (access_size < first)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "sg_graph_declare_access: access_size %zu is smaller than any layout of "
                    "sg_access (%zu at least)", access_size, first);
  sg_access *local = sg__realloc_array(NULL, count, sizeof *local);
  if (!local) return sg__fail(SG_ERR_OUT_OF_MEMORY, "sg_graph_declare_access: out of memory");
  sg_status st = SG_OK;
  for (size_t i = 0; i < count && !st; i++) {
    const void *p;
    st = sg__abi_in((const char *)accesses + i * access_size, access_size, first, &local[i],
                    sizeof local[i], "sg_graph_declare_access", "accesses", &p);
    if (!st && p != &local[i]) local[i] = *(const sg_access *)p;
  }
  if (!st) st = sg_graph_declare_access(graph, node, local, count);
  sg__free(local);
  return st;
}

sg_status sg_graph_add_copy_temp_sized(sg_graph *graph, const sg_copy_desc *desc, size_t desc_size,
                                       sg_temp dst_temp, size_t dst_offset, sg_temp src_temp,
                                       size_t src_offset, const sg_node *deps, size_t dep_count,
                                       sg_node *out) {
  sg_copy_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_copy_desc, name), &local,
                            sizeof local, "sg_graph_add_copy_temp", "desc", &p);
  return st ? st : sg_graph_add_copy_temp(graph, p, dst_temp, dst_offset, src_temp, src_offset,
                                          deps, dep_count, out);
}

sg_status sg_graph_add_memset_temp_sized(sg_graph *graph, const sg_memset_desc *desc,
                                         size_t desc_size, sg_temp dst_temp, size_t dst_offset,
                                         const sg_node *deps, size_t dep_count, sg_node *out) {
  sg_memset_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_memset_desc, name), &local,
                            sizeof local, "sg_graph_add_memset_temp", "desc", &p);
  return st ? st : sg_graph_add_memset_temp(graph, p, dst_temp, dst_offset, deps, dep_count, out);
}
