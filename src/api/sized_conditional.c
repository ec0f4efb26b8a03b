/* The exported entry point of conditional.h (core/abi.h): brings the
 * caller's descriptor to this library's layout and calls the function of
 * the plain name. */
#include "core/abi.h"
#include "streamgraph/conditional.h"

sg_status sg_graph_add_conditional_sized(sg_graph *graph, const sg_cond_node_desc *desc,
                                         size_t desc_size, const sg_node *deps, size_t dep_count,
                                         sg_node *out, sg_graph **bodies) {
  sg_cond_node_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_cond_node_desc, name), &local,
                            sizeof local, "sg_graph_add_conditional", "desc", &p);
  return st ? st : sg_graph_add_conditional(graph, p, deps, dep_count, out, bodies);
}
