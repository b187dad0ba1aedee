# A user's structure program's `run --trace`, judged by gfsl check, which
# reads the unknown subject as a user's structure (core/user/subject.hpp):
#   cmake -DPROGRAM=... -DGFSL=... -DEXPECT=0|1 -DWORK=DIR -P user_subject_trace.cmake
# EXPECT: gfsl check's exit code (0 linearizable, 1 not).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${PROGRAM} run --teams 4 --ops 40 --range 16 --mix 50,0,50 --trace ${WORK}/t.gfsl
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT EXISTS ${WORK}/t.gfsl OR NOT out MATCHES "structure: warp_set")
  message(FATAL_ERROR "run --trace (${rc}):\n${out}${err}")
endif()
foreach(model set "")
  set(args check ${WORK}/t.gfsl)
  if(model)
    list(APPEND args --model ${model})
  endif()
  execute_process(COMMAND ${GFSL} ${args} OUTPUT_VARIABLE cout ERROR_VARIABLE cerr RESULT_VARIABLE crc)
  message("${cout}${cerr}")
  if(NOT crc EQUAL EXPECT)
    message(FATAL_ERROR "gfsl ${args}: exit ${crc}, expected ${EXPECT}")
  endif()
endforeach()
