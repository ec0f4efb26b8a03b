# Sources of src/cuda (paths relative to src/); built only with CUDA.
list(APPEND SG_CUDA_C_SOURCES
  cuda/cuda_call.c
  cuda/hooks.c)
