# plan_bench: planner speed and plan quality on large DAGs (no GPU needed).
add_executable(plan_bench ${CMAKE_CURRENT_SOURCE_DIR}/plan_bench.c)
target_link_libraries(plan_bench PRIVATE streamgraph_static)
target_include_directories(plan_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(plan_bench PRIVATE
  $<$<C_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow>)
