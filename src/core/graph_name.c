/* Graph names: shown by traces, NVTX ranges and DOT output. */
#include <string.h>

#include "core/error.h"
#include "core/graph_internal.h"
#include "core/handles.h"
#include "core/sys.h"

sg_status sg_graph_set_name(sg_graph *graph, const char *name) {
  sg_status st = sg__handle_check(graph, SG__HANDLE_GRAPH, __func__, "graph");
  if (st) return st;
  char *copy = NULL;
  if (name) {
    if (strlen(name) > SG_MAX_NAME_BYTES)
      return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: name longer than %u bytes", __func__,
                      SG_MAX_NAME_BYTES);
    if (!(copy = sg__strdup(name)))
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory copying the name", __func__);
  }
  /* A change: entered as one, so that no other call reads or destroys the
   * graph meanwhile (core/handles.h). */
  if ((st = sg__handle_enter(graph, SG__HANDLE_GRAPH, &graph->in_use, 0, __func__, "graph",
                             "graph"))) {
    sg__free(copy);
    return st;
  }
  sg__free(graph->name);
  graph->name = copy;
  sg__in_use_leave(&graph->in_use);
  return SG_OK;
}

sg_status sg_graph_get_name(const sg_graph *graph, const char **name) {
  sg_status st = sg__handle_check(graph, SG__HANDLE_GRAPH, __func__, "graph");
  if (st) return st;
  if (!name) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: name is NULL", __func__);
  if ((st = sg__graph_read_begin(graph, __func__))) return st;
  *name = graph->name;
  sg__graph_read_end(graph);
  return SG_OK;
}
