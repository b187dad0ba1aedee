# ctest -R install_example: installs the build to a temporary prefix, then, as
# a user would, builds examples/hash_map (the recorder and the oracles) against
# it (find_package(gfsl)) and checks a trace written by the installed header
# with the installed gfsl.
# Compiles only: no GPU is needed. Arguments: BUILD_DIR, SOURCE_DIR, NVCC, WORK.
file(REMOVE_RECURSE "${WORK}")
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
set(prefix "${WORK}/prefix")
step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f include/gfsl/record.cuh include/gfsl/oracles.cuh include/gfsl/range_oracles.cuh bin/gfsl)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "cmake --install left out ${f}")
  endif()
endforeach()
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/hash_map" -B "${WORK}/example" "-DCMAKE_PREFIX_PATH=${prefix}"
     "-DCMAKE_CUDA_COMPILER=${NVCC}" -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build "${WORK}/example")
foreach(program hash_map oracles)
  if(NOT EXISTS "${WORK}/example/${program}")
    message(FATAL_ERROR "the example's ${program} did not build")
  endif()
endforeach()
# The header's host side writes what the installed gfsl check reads.
step("${NVCC}" -std=c++17 -arch=sm_90 -I "${prefix}/include" -o "${WORK}/record_writer" "${SOURCE_DIR}/tests/install/record_writer.cu")
foreach(history good stale)
  step("${WORK}/record_writer" "${WORK}/${history}.jsonl" ${history})
  execute_process(COMMAND "${prefix}/bin/gfsl" check --model upsert-map "${WORK}/${history}.jsonl" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(history STREQUAL "good" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "gfsl check refused the linearizable history (${rc}):\n${out}")
  endif()
  if(history STREQUAL "stale" AND NOT rc EQUAL 1)
    message(FATAL_ERROR "gfsl check did not find the stale read (${rc}):\n${out}")
  endif()
endforeach()
message(STATUS "installed, the example built, and the installed gfsl checked the header's traces")
