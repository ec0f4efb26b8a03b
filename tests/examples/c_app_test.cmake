# Installs the build into a scratch prefix, then configures, builds and runs
# examples/c_app (a plain C project) against it, on the host backend.
# -D BUILD_DIR, SOURCE_DIR, WORK_DIR, GENERATOR
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  message("${out}")
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/c_app -B ${WORK_DIR}/c_app -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
# A C project: no C++ compiler was enabled, no CUDA compiler either.
file(READ ${WORK_DIR}/c_app/CMakeCache.txt cache)
if(cache MATCHES "CMAKE_CXX_COMPILER:" OR cache MATCHES "CMAKE_CUDA_COMPILER:")
  message(FATAL_ERROR "examples/c_app enabled a C++ or CUDA compiler")
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/c_app)
run(${CMAKE_COMMAND} -E env SG_BACKEND=host ${WORK_DIR}/c_app/c_app 6 4096)
