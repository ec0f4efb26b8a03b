# Sources of src/staging (paths relative to src/).
list(APPEND SG_C_SOURCES
  staging/pinned_mem.c
  staging/cuda_mem_stubs.c
  staging/workers.c
  staging/pool.c
  staging/stage_run.c
  staging/regcache.c
  staging/tuning.c
  staging/policy.c
  staging/exec_staging.c)
# Files that include CUDA headers; built only with CUDA.
list(APPEND SG_CUDA_C_SOURCES
  staging/cuda_mem.c
  staging/cuda_lanes.c
  staging/cuda_staging.c)
