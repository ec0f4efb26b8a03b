# multi_gpu_pipeline: two pipeline stages on two GPUs against one GPU (CUDA);
# nccl_two_process: one graph in two processes sharing an NCCL communicator
# (CUDA and NCCL). Both exit 77 where they cannot run (fewer than two GPUs).
if(SG_HAVE_CUDA)
  add_executable(sg_multi_gpu_pipeline ${CMAKE_CURRENT_LIST_DIR}/multi_gpu_pipeline.c)
  target_link_libraries(sg_multi_gpu_pipeline PRIVATE streamgraph streamgraph_kernels)
  target_compile_options(sg_multi_gpu_pipeline PRIVATE
    $<$<C_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow>)
  if(SG_HAVE_NCCL)
    target_compile_definitions(sg_multi_gpu_pipeline PRIVATE SG_EXAMPLE_NCCL=1)
    target_include_directories(sg_multi_gpu_pipeline PRIVATE ${SG_NCCL_INCLUDE_DIR})
    target_link_libraries(sg_multi_gpu_pipeline PRIVATE ${SG_NCCL_LIBRARY})
    add_executable(sg_nccl_two_process ${CMAKE_CURRENT_LIST_DIR}/nccl_two_process.c)
    target_link_libraries(sg_nccl_two_process PRIVATE streamgraph streamgraph_kernels
      CUDA::cudart ${SG_NCCL_LIBRARY})
    target_include_directories(sg_nccl_two_process PRIVATE ${SG_NCCL_INCLUDE_DIR})
    target_compile_options(sg_nccl_two_process PRIVATE
      $<$<C_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow>)
  endif()
endif()
# The two-process run is a GPU test too (77 = skipped).
if(SG_HAVE_NCCL AND SG_BUILD_TESTS)
  add_test(NAME nccl_two_process COMMAND sg_nccl_two_process)
  set_tests_properties(nccl_two_process PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
    TIMEOUT 180 ENVIRONMENT "NCCL_NVLS_ENABLE=0")
endif()
