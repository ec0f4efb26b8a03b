include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# SG_BUILT_*: what this build has built in (built_features.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/built_features.cmake)

install(TARGETS streamgraph streamgraph_static EXPORT streamgraphTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET streamgraph_kernels)
  install(TARGETS streamgraph_kernels EXPORT streamgraphTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/streamgraph DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/streamgraph/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/streamgraph)
install(EXPORT streamgraphTargets NAMESPACE streamgraph::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/streamgraph)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/streamgraphConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/streamgraphConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/streamgraph)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/streamgraphConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/streamgraphConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/streamgraphConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/streamgraph)
# The licence and the changelog travel with the package.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})

# pkg-config files, beside the CMake package (lib/pkgconfig). Shared linking
# needs only -lstreamgraph (the library finds the CUDA runtime through its
# run path); a static link also needs what Libs.private lists.
file(RELATIVE_PATH SG_PC_TO_PREFIX "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" SG_PC_TO_PREFIX "${SG_PC_TO_PREFIX}")
# The same libraries the static library's CMake target links (src/CMakeLists.txt).
set(SG_PC_LIBS_PRIVATE "-lpthread")
if(SG_HAVE_CUDA)
  set(_sg_pc_cuda "-L${CUDAToolkit_LIBRARY_DIR} -lcudart")
  if(SG_HAVE_NVRTC)
    string(APPEND _sg_pc_cuda " -lnvrtc")
  endif()
  if(SG_HAVE_NCCL)
    string(APPEND _sg_pc_cuda " ${SG_NCCL_LIBRARY}")
  endif()
  if(SG_HAVE_NVTX)
    foreach(_sg_dl ${CMAKE_DL_LIBS})
      string(APPEND _sg_pc_cuda " -l${_sg_dl}")
    endforeach()
  endif()
  set(SG_PC_LIBS_PRIVATE "${_sg_pc_cuda} ${SG_PC_LIBS_PRIVATE}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/streamgraph.pc.in
  ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/streamgraph.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/streamgraph.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET streamgraph_kernels)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/streamgraph-kernels.pc.in
    ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/streamgraph-kernels.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/streamgraph-kernels.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
