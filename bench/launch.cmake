# launch_bench: launch overhead of the CUDA backends (streams mode, graph
# mode, update + relaunch) against hand-written loops and hand-built graphs
# (needs CUDA). It replays the executable's schedule by hand, so it reads the
# internal plan/schedule.h and links the static library.
if(SG_HAVE_CUDA)
  add_executable(launch_bench ${CMAKE_CURRENT_LIST_DIR}/launch_bench.cu)
  target_link_libraries(launch_bench PRIVATE streamgraph_static streamgraph_kernels CUDA::cudart)
  target_include_directories(launch_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
endif()
