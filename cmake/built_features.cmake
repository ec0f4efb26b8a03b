# What this build has built in, for the CMake package (variables and
# components) and the pkg-config file (variables): 1 or 0. An application
# making NCCL communicators for NCCL nodes must link the same libnccl, so
# its path travels too (docs/packaging.md).
foreach(_sg_part CUDA NCCL NVRTC NVTX)
  if(SG_HAVE_${_sg_part} AND (SG_HAVE_CUDA OR _sg_part STREQUAL "CUDA"))
    set(SG_BUILT_${_sg_part} 1)
  else()
    set(SG_BUILT_${_sg_part} 0)
  endif()
endforeach()
if(SG_BUILT_NCCL)
  set(SG_BUILT_NCCL_LIBRARY "${SG_NCCL_LIBRARY}")
  set(SG_BUILT_NCCL_INCLUDE_DIR "${SG_NCCL_INCLUDE_DIR}")
else()
  set(SG_BUILT_NCCL_LIBRARY "")
  set(SG_BUILT_NCCL_INCLUDE_DIR "")
endif()
