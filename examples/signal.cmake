# examples/signal: overlap-save FIR over a long signal (see signal/signal.c).
add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/signal ${CMAKE_CURRENT_BINARY_DIR}/signal)
