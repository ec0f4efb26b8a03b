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

# bench/memplan_torch.py replays the MLP rows through PyTorch's caching
# allocator on a GPU; its --dry-run (standard library only) computes each
# exported order's live peak again and must find memplan_bench's figure: a
# check of the export and of both computations, on every machine.
if(SG_BUILD_TESTS)
  find_program(SG_MEMPLAN_PYTHON NAMES python3)
  if(SG_MEMPLAN_PYTHON)
    set(_sg_replay ${CMAKE_CURRENT_BINARY_DIR}/memplan_replay)
    add_test(NAME memplan_torch_dry_run
      COMMAND sh -c "rm -rf \"$3\" && \"$1\" \"$3/memplan_bench.json\" --quick --export-mlp \"$3\" >/dev/null && \"$2\" \"$4\" --dry-run \"$3\" \"$3/memplan_torch.json\""
              memplan_torch_dry_run $<TARGET_FILE:memplan_bench> ${SG_MEMPLAN_PYTHON}
              ${_sg_replay} ${CMAKE_CURRENT_SOURCE_DIR}/memplan_torch.py)
    set_tests_properties(memplan_torch_dry_run PROPERTIES LABELS cpu TIMEOUT 120)
  endif()
endif()
