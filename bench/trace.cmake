# trace_bench: what tracing costs in streams and graph mode, and the traced
# graph against CUPTI activity records (when CUPTI is found) for timing a
# graph's nodes (needs CUDA). It reads a graph-mode executable's instantiated
# graph (internal) for the raw-launch floor, so it links the static library.
if(SG_HAVE_CUDA)
  add_executable(trace_bench ${CMAKE_CURRENT_LIST_DIR}/trace_bench.cu)
  target_link_libraries(trace_bench PRIVATE streamgraph_static streamgraph_kernels CUDA::cudart)
  target_include_directories(trace_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
  if(TARGET CUDA::cupti)
    target_link_libraries(trace_bench PRIVATE CUDA::cupti)
    target_compile_definitions(trace_bench PRIVATE BENCH_HAVE_CUPTI=1)
  endif()
endif()
