add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/guide ${CMAKE_CURRENT_BINARY_DIR}/guide)
