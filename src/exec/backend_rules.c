/* Refusals every backend makes alike (backend_rules.h). */
#include "exec/backend_rules.h"

#include <stdio.h>

#include "core/error.h"
#include "streamgraph/graph.h"

const char *sg__backend_where(const char *fn, const sg__node *node, uint32_t index,
                              char buf[SG__BACKEND_WHERE_BYTES]) {
  char label[SG__LABEL_BYTES];
  snprintf(buf, SG__BACKEND_WHERE_BYTES, "%s: %s node %s", fn, sg__node_kind_name(node->kind),
           sg__node_label(node, index, label));
  return buf;
}

int sg__backend_node_device(const sg__node *node, int exec_device) {
  return node->device == SG_DEVICE_DEFAULT ? exec_device : node->device;
}

sg_status sg__backend_check_staged_device(const char *where, int node_device, int exec_device) {
  if (node_device == exec_device) return SG_OK;
  return sg__fail(SG_ERR_UNSUPPORTED,
                  "%s has a pageable host side and runs on device %d, not the executable's "
                  "device %d: pageable copies are staged on the executable's device only; use "
                  "pinned memory (sg_mem_alloc) or that device",
                  where, node_device, exec_device);
}

sg_status sg__backend_check_memset_reach(const char *where, int on, int dst, int reachable) {
  if (dst < 0 || dst == on || reachable) return SG_OK;
  return sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s runs on device %d but sets memory of device %d, which device %d cannot "
                  "reach (no peer access); run it on device %d (sg_graph_set_device)",
                  where, on, dst, on, dst);
}
