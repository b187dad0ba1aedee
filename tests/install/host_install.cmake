# ctest -R install_host_only: the install a user without the CUDA kernels
# makes (docs/YOUR-STRUCTURE.md, "1. Install"): a host-only build
# (-DGFSL_CUDA=OFF; the build under test itself when it is one, else a fresh
# one configured here) of the gfsl target alone, cmake --install into a
# temporary prefix, then a plain C++ consumer built against it with
# find_package(gfsl), whose trace the installed gfsl check judges without
# --model; find_package(gfsl 0.1) finds it and 9.0 does not; where nvcc is found, the example's CUDA programs too
# (install_example.cmake, on the host-only build). Runs no kernel.
# Arguments: SOURCE_DIR, BUILD_DIR, HOST_ONLY (the build under test is
# host-only), WORK, GENERATOR, CXX_LAUNCHER (may be empty), NVCC (may be empty).
file(REMOVE_RECURSE "${WORK}")
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
if(HOST_ONLY)
  set(host_build "${BUILD_DIR}")
else()
  set(host_build "${WORK}/build")
  set(launcher)
  if(CXX_LAUNCHER)
    set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER}")
  endif()
  step(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${host_build}" -G "${GENERATOR}" -DGFSL_CUDA=OFF -DGFSL_TESTS=OFF
       -DCMAKE_BUILD_TYPE=Release ${launcher})
  step(${CMAKE_COMMAND} --build "${host_build}" --target gfsl --parallel 2)
endif()
set(prefix "${WORK}/prefix")
step(${CMAKE_COMMAND} --install "${host_build}" --prefix "${prefix}")
foreach(f bin/gfsl include/gfsl/record.cuh include/gfsl/oracles.cuh include/gfsl/oracles_host.hpp)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "cmake --install of the host-only build left out ${f}")
  endif()
endforeach()
file(GLOB_RECURSE config "${prefix}/*/gfsl-config.cmake")
if(NOT config)
  message(FATAL_ERROR "cmake --install of the host-only build left out the package configuration (gfsl-config.cmake)")
endif()
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/host_consumer" -B "${WORK}/consumer" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}"
     -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build "${WORK}/consumer")
# The package has a version: 0.1 found (above), 9.0 and 0.0 refused.
foreach(want 9.0 0.0)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/host_consumer" -B "${WORK}/consumer-${want}" -G "${GENERATOR}"
                          "-DCMAKE_PREFIX_PATH=${prefix}" -DGFSL_WANT=${want} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "version")
    message(FATAL_ERROR "find_package(gfsl ${want}) did not refuse the installed 0.1 package (${rc}):\n${out}")
  endif()
endforeach()
file(READ "${WORK}/consumer/gfsl_executable.txt" gfsl)
if(NOT gfsl STREQUAL "${prefix}/bin/gfsl")
  message(FATAL_ERROR "find_package(gfsl) gave GFSL_EXECUTABLE ${gfsl}, not ${prefix}/bin/gfsl")
endif()
find_program(consumer consumer PATHS "${WORK}/consumer" NO_DEFAULT_PATH REQUIRED)
step("${consumer}" "${WORK}/trace.jsonl")
execute_process(COMMAND "${gfsl}" check "${WORK}/trace.jsonl" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "linearizable" OR out MATCHES "not run")
  message(FATAL_ERROR "the installed gfsl check of the consumer's multiset trace (${rc}):\n${out}")
endif()
# gfsl::cuda_on_cpu from the install: a kernel built by the host compiler, run.
foreach(f include/gfsl/cpu/cuda.hpp include/gfsl/cpu/shadow/cuda_runtime.h)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "cmake --install of the host-only build left out ${f}")
  endif()
endforeach()
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/cpu_consumer" -B "${WORK}/cpu_consumer" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}"
     -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build "${WORK}/cpu_consumer")
find_program(cpu_consumer cpu_consumer PATHS "${WORK}/cpu_consumer" NO_DEFAULT_PATH REQUIRED)
step("${cpu_consumer}")
find_program(cpu_consumer_plain cpu_consumer_plain PATHS "${WORK}/cpu_consumer" NO_DEFAULT_PATH REQUIRED)
step("${cpu_consumer_plain}")
# gfsl::cpu_subject from the install: examples/warp_set as a subject program,
# whose campaign finds its bug (exit 1) and prints a replay line.
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/cpu_subject_consumer" -B "${WORK}/cpu_subject_consumer" -G "${GENERATOR}"
     "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release "-DEXAMPLE_DIR=${SOURCE_DIR}/examples/warp_set")
step(${CMAKE_COMMAND} --build "${WORK}/cpu_subject_consumer")
find_program(warp_set warp_set PATHS "${WORK}/cpu_subject_consumer" NO_DEFAULT_PATH REQUIRED)
execute_process(COMMAND "${warp_set}" fuzz --max-runs 100 --out "${WORK}/warp_set_fz" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 1 OR NOT out MATCHES "replay: warp_set replay gfsl1:[^\n]*subject=warp_set")
  message(FATAL_ERROR "the installed gfsl::cpu_subject's warp_set campaign (${rc}):\n${out}")
endif()
if(NVCC)
  step(${CMAKE_COMMAND} -DBUILD_DIR=${host_build} -DSOURCE_DIR=${SOURCE_DIR} -DNVCC=${NVCC} -DWORK=${WORK}/example
       -P "${SOURCE_DIR}/tests/install/install_example.cmake")
endif()
message(STATUS "the host-only build installed; a consumer built against it, and the installed gfsl checked its trace; a kernel ran on the installed gfsl::cuda_on_cpu, plain accesses instrumented too; a structure program on gfsl::cpu_subject found its bug")
