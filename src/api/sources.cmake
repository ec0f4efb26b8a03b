# Sources of src/api (paths relative to src/): the exported <call>_sized
# entry points, which bring a caller's structs to this library's layout
# (core/abi.h) and call the public function of the plain name.
list(APPEND SG_C_SOURCES
  api/sized_graph.c
  api/sized_exec.c
  api/sized_plan.c
  api/sized_staging.c
  api/sized_pipeline.c
  api/sized_module.c
  api/sized_conditional.c)
