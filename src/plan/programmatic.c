/* Programmatic edges: which kernels may begin while their predecessors
 * finish (programmatic dependent launch, docs/cuda-backends.md).
 *
 * A node is programmatic when it is a kernel that opted in
 * (SG_KERNEL_PROGRAMMATIC), it has a predecessor, and every predecessor
 * after transitive reduction is a kernel on the same device: then every
 * reduced edge into it is programmatic. Only the dependent must opt in: it
 * waits (cudaGridDependencySynchronize) for its predecessors' completion
 * and memory before touching memory, so a predecessor that never triggers
 * early is simply waited for at its end. Edges removed by the reduction
 * need nothing: each is implied by a path through a reduced edge, whose
 * kernels (programmatic or not) complete in order before the dependent's
 * wait returns. Copies, memsets, host work and nodes of other devices stay
 * full dependencies, as does everything on the host backend, which ignores
 * the marks. */
#include "core/error.h"
#include "core/sys.h"
#include "plan/plan_internal.h"

/* The dense device of node `i` (0 with one device). */
static uint32_t device_of(const sg_plan *p, uint32_t i) { return p->device_of ? p->device_of[i] : 0; }

sg_status sg__plan_mark_programmatic(sg_plan *p, const sg__snapshot *snap) {
  sg__schedule *s = &p->schedule;
  const uint32_t n = s->node_count;
  int wanted = 0;
  for (uint32_t i = 0; i < n && !wanted; i++)
    wanted = snap->nodes[i].kind == SG__NODE_KERNEL && snap->nodes[i].u.kernel.programmatic;
  s->programmatic = NULL;
  s->programmatic_edge_count = 0;
  if (!wanted) return SG_OK; /* the common case costs one pass over the nodes */
  /* 1: candidate (opted in, no disqualifying predecessor seen), 2: it has
   * a predecessor; programmatic when both. */
  uint8_t *mark = sg__calloc(n, 1);
  if (!mark)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory marking programmatic edges");
  for (uint32_t v = 0; v < n; v++)
    mark[v] = snap->nodes[v].kind == SG__NODE_KERNEL && snap->nodes[v].u.kernel.programmatic;
  for (uint32_t u = 0; u < n; u++) {
    const int kernel = snap->nodes[u].kind == SG__NODE_KERNEL;
    for (uint32_t e = s->red_start[u]; e < s->red_start[u + 1]; e++) {
      const uint32_t v = s->red_succ[e];
      if (!(mark[v] & 1)) continue;
      if (!kernel || device_of(p, u) != device_of(p, v)) mark[v] = 0;
      else mark[v] |= 2;
    }
  }
  size_t edges = 0;
  for (uint32_t v = 0; v < n; v++) mark[v] = mark[v] == 3;
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t e = s->red_start[u]; e < s->red_start[u + 1]; e++) edges += mark[s->red_succ[e]];
  if (!edges) {
    sg__free(mark);
    return SG_OK;
  }
  s->programmatic = mark;
  s->programmatic_edge_count = edges;
  return SG_OK;
}
