# Sources of src/module (paths relative to src/): run-time modules, the
# backend-neutral front end; NVRTC and the library API are in src/cuda.
list(APPEND SG_C_SOURCES
  module/module.c
  module/module_compile.c
  module/module_cache.c)
