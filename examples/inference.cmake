# examples/inference: an MLP served over request batches (see its README).
add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/inference ${CMAKE_CURRENT_BINARY_DIR}/inference)
