# staging_bench: pageable copies through pinned staging and the registration
# cache against the driver's pageable path and the pinned ceiling (needs CUDA).
# It prints the defaults each case got, from the internal staging/tuning.h,
# so it reads src/ and links the static library.
if(SG_HAVE_CUDA)
  add_executable(staging_bench ${CMAKE_CURRENT_LIST_DIR}/staging_bench.cu)
  target_link_libraries(staging_bench PRIVATE streamgraph_static CUDA::cudart)
  target_include_directories(staging_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
endif()

# staging_timeline: one staged copy traced launch by launch (a diagnostic that
# writes Chrome traces; the public API, and the runtime for the driver's own
# calls it compares the direct route with).
if(SG_HAVE_CUDA)
  add_executable(staging_timeline ${CMAKE_CURRENT_LIST_DIR}/staging_timeline.c)
  target_link_libraries(staging_timeline PRIVATE streamgraph CUDA::cudart)
endif()
