# Sources of src/core (paths relative to src/).
list(APPEND SG_C_SOURCES
  core/error.c
  core/fault.c
  core/sys.c
  core/handles.c
  core/memory.c
  core/cuda_stubs.c
  core/node.c
  core/edge_set.c
  core/graph.c
  core/snapshot.c
  core/exec.c
  core/exec_update.c
  core/exec_trace.c)
