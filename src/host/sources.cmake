# Sources of src/host (paths relative to src/).
list(APPEND SG_C_SOURCES
  host/host_nodes.c
  host/host_pool.c
  host/host_stage_mem.c
  host/host_staging.c
  host/host_exec.c
  host/host_arena.c)
