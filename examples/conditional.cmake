# examples/conditional_solver: an iterative solver whose loop runs on the
# device (a WHILE node with a stop flag computed by a kernel).
if(SG_HAVE_CUDA)
  add_executable(sg_conditional_solver ${CMAKE_CURRENT_LIST_DIR}/conditional_solver.cu)
  target_link_libraries(sg_conditional_solver PRIVATE streamgraph CUDA::cudart)
endif()
if(SG_HAVE_CUDA AND SG_BUILD_TESTS)
  # Smoke test on the host backend (the GPU ways: tools/gpu-check or by hand,
  # `sg_conditional_solver 1048576 1e-6 graph`).
  add_test(NAME ConditionalSolverConverges
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:sg_conditional_solver> "-DARGS=20000;1e-6;host"
            "-DEXPECT=host: 20000 square roots in;(one launch)"
            -P ${PROJECT_SOURCE_DIR}/tests/examples/run_example.cmake)
  set_tests_properties(ConditionalSolverConverges PROPERTIES LABELS cpu TIMEOUT 120)
endif()

# examples/batch_serving: batches of 1..256 rows through one executable whose
# kernels take their grid from the device (sg_graph_kernel_bind_grid).
if(SG_HAVE_CUDA)
  add_executable(sg_batch_serving ${CMAKE_CURRENT_LIST_DIR}/batch_serving.cu)
  target_link_libraries(sg_batch_serving PRIVATE streamgraph CUDA::cudart)
endif()
if(SG_HAVE_CUDA AND SG_BUILD_TESTS)
  # Smoke test on the host backend (the GPU ways: `sg_batch_serving 512 graph`,
  # `sg_batch_serving 512 streams`).
  add_test(NAME BatchServingOneExecutable
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:sg_batch_serving> "-DARGS=64;host"
            "-DEXPECT=host: served 64 batches;0 rebuilds;every output matches"
            -P ${PROJECT_SOURCE_DIR}/tests/examples/run_example.cmake)
  set_tests_properties(BatchServingOneExecutable PROPERTIES LABELS cpu TIMEOUT 120)
endif()
