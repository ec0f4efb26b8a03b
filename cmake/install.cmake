include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
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
