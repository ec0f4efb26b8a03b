# memplan_bench: planned temporaries - peak against the lower bound, and
# executable creation with and without memory planning (no GPU needed).
add_executable(memplan_bench ${CMAKE_CURRENT_SOURCE_DIR}/memplan_bench.c)
target_link_libraries(memplan_bench PRIVATE streamgraph_static m)
target_include_directories(memplan_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
# With CUDA, a section compares the plan's arena with CUDA graph memory nodes
# (it measures only where a GPU is present).
if(SG_HAVE_CUDA)
  target_sources(memplan_bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/memplan_graphmem.c)
  target_compile_definitions(memplan_bench PRIVATE SG_MEMPLAN_GRAPHMEM)
  target_link_libraries(memplan_bench PRIVATE CUDA::cudart)
endif()
target_compile_options(memplan_bench PRIVATE
  $<$<C_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow>)
