# multigpu_bench: peer copies, data-parallel pipelines and NCCL all-reduce
# nodes over two GPUs, against hand-written CUDA and NCCL (needs CUDA; the
# NCCL section needs NCCL). Skips, exit 0, with fewer than two GPUs.
if(SG_HAVE_CUDA)
  add_executable(multigpu_bench ${CMAKE_CURRENT_LIST_DIR}/multigpu_bench.cu)
  target_link_libraries(multigpu_bench PRIVATE streamgraph streamgraph_kernels CUDA::cudart)
  if(SG_HAVE_NCCL)
    target_compile_definitions(multigpu_bench PRIVATE SG_BENCH_NCCL=1)
    target_include_directories(multigpu_bench PRIVATE ${SG_NCCL_INCLUDE_DIR})
    target_link_libraries(multigpu_bench PRIVATE ${SG_NCCL_LIBRARY})
  endif()
endif()
