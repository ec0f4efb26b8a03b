# Sources of src/staging (paths relative to src/): backend-neutral.
list(APPEND SG_C_SOURCES
  staging/workers.c
  staging/pool.c
  staging/stage_run.c
  staging/stage_flags.c
  staging/stage_program.c
  staging/stage_conductor.c
  staging/regcache.c
  staging/tuning.c
  staging/policy.c
  staging/staging.c)
