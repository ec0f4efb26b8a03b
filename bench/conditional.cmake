# conditional_bench: conditional nodes on the device against host-driven
# loops and a hand-written CUDA conditional graph (needs CUDA).
if(SG_HAVE_CUDA)
  add_executable(conditional_bench ${CMAKE_CURRENT_LIST_DIR}/conditional_bench.cu)
  target_link_libraries(conditional_bench PRIVATE streamgraph CUDA::cudart)
endif()
