# staging_bench: pageable copies through pinned staging and the registration
# cache against the driver's pageable path and the pinned ceiling (needs CUDA).
if(SG_HAVE_CUDA)
  add_executable(staging_bench ${CMAKE_CURRENT_LIST_DIR}/staging_bench.cu)
  target_link_libraries(staging_bench PRIVATE streamgraph CUDA::cudart)
endif()
