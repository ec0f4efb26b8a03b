# Sources of src/exec (paths relative to src/): the executable front end.
list(APPEND SG_C_SOURCES
  exec/stream_limit.c
  exec/plan_create.c
  exec/exec.c
  exec/backend_rules.c
  exec/exec_update.c
  exec/exec_body.c
  exec/exec_rebuild.c
  exec/trace.c
  exec/trace_json.c
  exec/trace_svg.c
  exec/trace_stamps.c
  exec/exec_trace.c
  exec/exec_dump.c
  exec/staging_api.c
  exec/exec_temps.c)
