# Sources of src/core (paths relative to src/): the base.
list(APPEND SG_C_SOURCES
  core/version.c
  core/abi.c
  core/error.c
  core/in_use.c
  core/fault.c
  core/sys.c
  core/handles.c
  core/memory.c
  core/kernel_owner.c
  core/node.c
  core/node_memory.c
  core/edge_set.c
  core/access.c
  core/graph_access.c
  core/text.c
  core/graph.c
  core/graph_name.c
  core/graph_dot.c
  core/snapshot.c
  core/conditional.c
  core/grid_source.c)
