# pipeline: frames through upload -> kernel -> download, three in flight.
add_executable(sg_pipeline_example ${CMAKE_CURRENT_LIST_DIR}/pipeline.c)
target_link_libraries(sg_pipeline_example PRIVATE streamgraph streamgraph_kernels)
target_compile_options(sg_pipeline_example PRIVATE
  $<$<C_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow>)
