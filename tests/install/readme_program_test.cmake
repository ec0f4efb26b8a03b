# The README's first program compiles and runs as shown: takes the C program
# and its CMakeLists.txt from the "A first program" section of README.md,
# builds them against the installed package, and runs the program on the
# host backend (SG_BACKEND=host), which must print "host backend: correct".
# -D BUILD_DIR, SOURCE_DIR, WORK_DIR, GENERATOR
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# The section, then its first ```c and ```cmake blocks.
file(READ ${SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "## A first program" start)
if(start EQUAL -1)
  message(FATAL_ERROR "README.md has no section \"## A first program\"")
endif()
string(SUBSTRING "${readme}" ${start} -1 section)
string(FIND "${section}" "\n## " end)
if(NOT end EQUAL -1)
  string(SUBSTRING "${section}" 0 ${end} section)
endif()
function(code_block language out_var)
  string(FIND "${section}" "```${language}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the first-program section of README.md has no ```${language} block")
  endif()
  string(LENGTH "```${language}\n" fence)
  math(EXPR at "${at} + ${fence}")
  string(SUBSTRING "${section}" ${at} -1 rest)
  string(FIND "${rest}" "```" stop)
  string(SUBSTRING "${rest}" 0 ${stop} code)
  set(${out_var} "${code}" PARENT_SCOPE)
endfunction()
code_block(c program)
code_block(cmake project)
file(WRITE ${WORK_DIR}/first/first.c "${program}")
file(WRITE ${WORK_DIR}/first/CMakeLists.txt "${project}")

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${WORK_DIR}/first -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_C_FLAGS=-Werror)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${CMAKE_COMMAND} -E env SG_BACKEND=host ${WORK_DIR}/build/first)
message("${run_output}")
if(NOT run_output MATCHES "host backend: correct")
  message(FATAL_ERROR "the README's first program printed:\n${run_output}")
endif()

# A backend named in SG_BACKEND is the one the program gets, or it is
# refused with a message; never silently replaced by another.
execute_process(COMMAND ${CMAKE_COMMAND} -E env SG_BACKEND=bogus ${WORK_DIR}/build/first
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0 OR NOT out MATCHES "SG_BACKEND is \"bogus\", which names no backend")
  message(FATAL_ERROR "SG_BACKEND=bogus was not refused (exit ${rc}):\n${out}")
endif()
message("SG_BACKEND=bogus: ${out}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env SG_BACKEND=cuda ${WORK_DIR}/build/first
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(out MATCHES "host backend: correct")
  message(FATAL_ERROR "SG_BACKEND=cuda ran on the host backend:\n${out}")
endif()
if(NOT (rc EQUAL 0 AND out MATCHES "CUDA backend: correct")
   AND NOT (NOT rc EQUAL 0 AND out MATCHES "SG_BACKEND=cuda asks for the CUDA backend"))
  message(FATAL_ERROR "SG_BACKEND=cuda neither ran on CUDA nor was refused (exit ${rc}):\n${out}")
endif()
message("SG_BACKEND=cuda: ${out}")
