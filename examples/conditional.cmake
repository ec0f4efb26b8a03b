# examples/conditional_solver: an iterative solver whose loop runs on the
# device (a WHILE node with a stop flag computed by a kernel).
if(SG_HAVE_CUDA)
  add_executable(sg_conditional_solver ${CMAKE_CURRENT_LIST_DIR}/conditional_solver.cu)
  target_link_libraries(sg_conditional_solver PRIVATE streamgraph CUDA::cudart)
endif()
