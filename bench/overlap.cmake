# overlap_bench: chunked H2D -> kernel -> D2H overlap on the GPU, the
# library's pipeline against hand-written schedules (needs CUDA).
if(SG_HAVE_CUDA)
  add_executable(overlap_bench ${CMAKE_CURRENT_LIST_DIR}/overlap_bench.cu)
  target_link_libraries(overlap_bench PRIVATE streamgraph streamgraph_kernels CUDA::cudart)
endif()
