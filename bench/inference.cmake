# inference_bench: the MLP of examples/inference, naive and hand-written code
# against the library's pipeline, with the bounds measured in the same run
# (needs CUDA and cuBLAS). It compiles the example's model and graph sources.
if(SG_HAVE_CUDA)
  set(_sg_inf ${PROJECT_SOURCE_DIR}/examples/inference)
  add_executable(inference_bench ${CMAKE_CURRENT_LIST_DIR}/inference_bench.cu
    ${_sg_inf}/mlp_model.c ${_sg_inf}/mlp_graph.c ${_sg_inf}/gemm_host.c
    ${_sg_inf}/gemm_cublas.c)
  target_link_libraries(inference_bench PRIVATE streamgraph streamgraph_kernels CUDA::cublas
    CUDA::cudart)
endif()
