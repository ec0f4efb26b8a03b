# Sources of src/cuda (paths relative to src/); built only with CUDA.
list(APPEND SG_CUDA_C_SOURCES
  cuda/nvtx.c
  cuda/cuda_call.c
  cuda/device_port.c
  cuda/stream_link.c
  cuda/cuda_exec.c
  cuda/cuda_arena.c
  cuda/cuda_device.c
  cuda/cuda_devices.c
  cuda/peer_access.c
  cuda/peer_copy.c
  cuda/cuda_nccl.c
  cuda/cuda_streams.c
  cuda/launch_marks.c
  cuda/cuda_nodes.c
  cuda/cuda_work.c
  cuda/cuda_memset.c
  cuda/cuda_stream_fn.c
  cuda/cuda_trace.c
  cuda/trace_stamp.c
  cuda/streams_mode.c
  cuda/graph_mode.c
  cuda/graph_explicit.c
  cuda/graph_conditional.c
  cuda/streams_conditional.c
  cuda/graph_pdl.c
  cuda/graph_capture.c
  cuda/graph_update.c
  cuda/graph_kernel_update.c
  cuda/stage_mem.c
  cuda/stage_lanes.c
  cuda/staged_copy.c
  cuda/staged_memops.c
  cuda/module_library.c)
# Run-time modules: NVRTC when the toolkit has it.
if(SG_HAVE_NVRTC)
  list(APPEND SG_CUDA_C_SOURCES cuda/module_nvrtc.c)
else()
  list(APPEND SG_CUDA_C_SOURCES cuda/no_nvrtc.c)
endif()
# NCCL nodes: when NCCL is found (cmake/nccl.cmake); otherwise every entry
# point answers "not built" (also in a build without CUDA).
if(SG_HAVE_NCCL)
  list(APPEND SG_CUDA_C_SOURCES cuda/nccl_node.c)
else()
  list(APPEND SG_C_SOURCES cuda/no_nccl.c)
endif()
# Without CUDA: what the rest of the library asks of this folder, answered
# "no device", and NVTX ranges that do nothing.
if(NOT SG_HAVE_CUDA)
  list(APPEND SG_C_SOURCES cuda/no_cuda.c cuda/no_cuda_module.c cuda/nvtx.c)
endif()
