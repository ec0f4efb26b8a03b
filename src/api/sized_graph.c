/* The exported entry points of graph.h (core/abi.h): each takes the
 * caller's struct with the size its compiler gave it, brings it to this
 * library's layout, and calls the function of the plain name. */
#include "core/abi.h"
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
