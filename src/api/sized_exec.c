/* The exported entry points of exec.h (core/abi.h): each takes the
 * caller's struct with the size its compiler gave it, brings it to this
 * library's layout, and calls the function of the plain name. */
#include "core/abi.h"
#include "core/error.h"
#include "core/sys.h"
#include "streamgraph/exec.h"

void sg_exec_options_init_sized(sg_exec_options *opts, size_t opts_size) {
  if (!opts) return;
  if (opts_size == sizeof *opts) {
    sg_exec_options_init(opts);
    return;
  }
  /* Smaller than any layout: nothing can be filled in right. */
  if (opts_size < SG__ABI_FIRST(sg_exec_options, trace_launches)) return;
  sg_exec_options local;
  sg_exec_options_init(&local);
  sg__abi_out(opts, opts_size, &local, sizeof local);
}

sg_status sg_exec_create_sized(const sg_graph *graph, const sg_exec_options *opts, size_t opts_size,
                               sg_exec **out) {
  sg_exec_options local;
  const void *p;
  sg_status st = sg__abi_in(opts, opts_size, SG__ABI_FIRST(sg_exec_options, trace_launches), &local,
                            sizeof local, "sg_exec_create", "opts", &p);
  return st ? st : sg_exec_create(graph, p, out);
}

sg_status sg_exec_get_info_sized(const sg_exec *exec, sg_exec_info *info, size_t info_size) {
  if (!info || info_size == sizeof *info) return sg_exec_get_info(exec, info);
  sg_status st = sg__abi_out_check(info_size, SG__ABI_FIRST(sg_exec_info, wait_count),
                                   "sg_exec_get_info", "info");
  if (st) return st;
  sg_exec_info local;
  st = sg_exec_get_info(exec, &local);
  if (!st) sg__abi_out(info, info_size, &local, sizeof local);
  return st;
}

sg_status sg_exec_get_stats_sized(const sg_exec *exec, sg_exec_stats *stats, size_t stats_size) {
  if (!stats || stats_size == sizeof *stats) return sg_exec_get_stats(exec, stats);
  sg_status st = sg__abi_out_check(stats_size, SG__ABI_FIRST(sg_exec_stats, registered_copies),
                                   "sg_exec_get_stats", "stats");
  if (st) return st;
  sg_exec_stats local;
  st = sg_exec_get_stats(exec, &local);
  if (!st) sg__abi_out(stats, stats_size, &local, sizeof local);
  return st;
}

sg_status sg_exec_set_kernel_sized(sg_exec *exec, sg_node node, const sg_kernel_desc *desc,
                                   size_t desc_size) {
  sg_kernel_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_kernel_desc, name), &local,
                            sizeof local, "sg_exec_set_kernel", "desc", &p);
  return st ? st : sg_exec_set_kernel(exec, node, p);
}

sg_status sg_exec_set_copy_sized(sg_exec *exec, sg_node node, const sg_copy_desc *desc,
                                 size_t desc_size) {
  sg_copy_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_copy_desc, name), &local,
                            sizeof local, "sg_exec_set_copy", "desc", &p);
  return st ? st : sg_exec_set_copy(exec, node, p);
}

sg_status sg_exec_set_memset_sized(sg_exec *exec, sg_node node, const sg_memset_desc *desc,
                                   size_t desc_size) {
  sg_memset_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_memset_desc, name), &local,
                            sizeof local, "sg_exec_set_memset", "desc", &p);
  return st ? st : sg_exec_set_memset(exec, node, p);
}

sg_status sg_exec_set_host_sized(sg_exec *exec, sg_node node, const sg_host_desc *desc,
                                 size_t desc_size) {
  sg_host_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_host_desc, name), &local,
                            sizeof local, "sg_exec_set_host", "desc", &p);
  return st ? st : sg_exec_set_host(exec, node, p);
}

sg_status sg_exec_set_stream_fn_sized(sg_exec *exec, sg_node node, const sg_stream_fn_desc *desc,
                                      size_t desc_size) {
  sg_stream_fn_desc local;
  const void *p;
  sg_status st = sg__abi_in(desc, desc_size, SG__ABI_FIRST(sg_stream_fn_desc, name), &local,
                            sizeof local, "sg_exec_set_stream_fn", "desc", &p);
  return st ? st : sg_exec_set_stream_fn(exec, node, p);
}

/* Records of another layout: read into this library's, then copied out one
 * by one at the caller's stride. */
static sg_status records_out(sg_exec *exec, uint64_t launch, sg_trace_record *records,
                             size_t record_size, size_t capacity, size_t *count, const char *fn) {
  sg_status st = launch ? sg_exec_get_launch_trace(exec, launch, NULL, 0, count)
                        : sg_exec_get_trace(exec, NULL, 0, count);
  if (st || capacity == 0 || !records) return st;
  if ((st = sg__abi_out_check(record_size, SG__ABI_FIRST(sg_trace_record, launch_start_ns), fn,
                              "records")))
    return st;
  size_t n = capacity < *count ? capacity : *count;
  sg_trace_record *local = sg__calloc(n ? n : 1, sizeof *local);
  if (!local) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  st = launch ? sg_exec_get_launch_trace(exec, launch, local, n, count)
              : sg_exec_get_trace(exec, local, n, count);
  for (size_t k = 0; !st && k < n; k++)
    sg__abi_out((char *)records + k * record_size, record_size, &local[k], sizeof *local);
  sg__free(local);
  return st;
}

sg_status sg_exec_get_trace_sized(sg_exec *exec, sg_trace_record *records, size_t record_size,
                                  size_t capacity, size_t *count) {
  if (record_size == sizeof *records || !count)
    return sg_exec_get_trace(exec, records, capacity, count);
  return records_out(exec, 0, records, record_size, capacity, count, "sg_exec_get_trace");
}

sg_status sg_exec_get_launch_trace_sized(sg_exec *exec, uint64_t launch, sg_trace_record *records,
                                         size_t record_size, size_t capacity, size_t *count) {
  if (record_size == sizeof *records || !count || launch == 0)
    return sg_exec_get_launch_trace(exec, launch, records, capacity, count);
  return records_out(exec, launch, records, record_size, capacity, count,
                     "sg_exec_get_launch_trace");
}

sg_status sg_exec_get_memory_sized(const sg_exec *exec, sg_exec_memory *memory,
                                   size_t memory_size) {
  const size_t first = SG__ABI_FIRST(sg_exec_memory, dag_order);
  sg_status st = sg__abi_out_check(memory_size, first, "sg_exec_get_memory", "memory_size");
  if (st) return st;
  if (!memory || memory_size == sizeof *memory) return sg_exec_get_memory(exec, memory);
  sg_exec_memory local;
  st = sg_exec_get_memory(exec, &local);
  if (!st) sg__abi_out(memory, memory_size, &local, sizeof local);
  return st;
}
