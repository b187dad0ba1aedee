# gfsl_cuda_on_cpu_instrument(<target>): the target's plain and volatile
# loads and stores of the device's memory become scheduling points of the
# CUDA-on-CPU layer and, under `memory ptx`, loads that may return an older
# store (docs/CUDA-ON-CPU.md, "Plain loads and stores").
#
# How: the target's sources compile with g++'s or clang's -fsanitize=thread,
# which calls __tsan_read4(addr) and the like before each access; the target
# links gfsl::cuda_on_cpu_plain, whose definitions of those callbacks forward
# to the layer, instead of ThreadSanitizer's runtime (the link line carries
# no -fsanitize=thread). Every source of the target is instrumented; a
# single source can be instead, with
#   set_source_files_properties(f.cpp PROPERTIES COMPILE_OPTIONS -fsanitize=thread)
# and the link to gfsl::cuda_on_cpu_plain.
#
# Not for a build that is itself under ThreadSanitizer (-fsanitize=thread in
# CMAKE_CXX_FLAGS): there the callbacks are the sanitizer's, and the target
# builds as any other (its accesses are not the layer's).
function(gfsl_cuda_on_cpu_instrument target)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "gfsl_cuda_on_cpu_instrument(${target}): needs g++ or clang (-fsanitize=thread's callbacks), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[a-z,]*thread")
    message(STATUS "gfsl_cuda_on_cpu_instrument(${target}): left uninstrumented in a ThreadSanitizer build")
    return()
  endif()
  target_compile_options(${target} PRIVATE -fsanitize=thread)
  target_link_libraries(${target} PRIVATE gfsl::cuda_on_cpu_plain)
  target_compile_definitions(${target} PRIVATE GFSL_CPU_PLAIN_ACCESSES=1)
endfunction()
