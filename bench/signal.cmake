# signal_bench: the overlap-save filter bank of examples/signal, naive and
# hand-written code against the library's pipeline, with the bounds measured
# in the same run (needs CUDA and cuFFT). It compiles the example's sources.
if(SG_HAVE_CUDA)
  set(_sg_sig ${PROJECT_SOURCE_DIR}/examples/signal)
  add_executable(signal_bench ${CMAKE_CURRENT_LIST_DIR}/signal_bench.cu ${_sg_sig}/fir.c
    ${_sg_sig}/ols_graph.c ${_sg_sig}/fft_host.c ${_sg_sig}/fft_cufft.c)
  target_link_libraries(signal_bench PRIVATE streamgraph streamgraph_kernels CUDA::cufft
    CUDA::cudart)
endif()
