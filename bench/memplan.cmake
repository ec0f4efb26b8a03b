# memplan_bench: planned temporaries - peak against the lower bound, and
# executable creation with and without memory planning (no GPU needed).
add_executable(memplan_bench ${CMAKE_CURRENT_SOURCE_DIR}/memplan_bench.c)
target_link_libraries(memplan_bench PRIVATE streamgraph_static m)
target_include_directories(memplan_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(memplan_bench PRIVATE
  $<$<C_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow>)
