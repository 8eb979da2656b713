# One corpus file through the release CLI, as ctest -L fuzz runs it:
#   cmake -DTESSEL=bin/tessel -DKIND=schedule|arch|binary|asm|tensor -DINPUT=file
#         -DSOURCE_DIR=repo -DWORK_DIR=scratch -DTIMEOUT=seconds -P ReplayCase.cmake
# Every command must end within TIMEOUT seconds with exit 0, exit 2 (a usage
# error), or exit 1 with a message on stderr that is not an internal error.
# Anything else (a signal, exit 3, a hang, a sanitizer report) fails the case and
# the failure names the command and shows the end of its stderr.

foreach(v TESSEL KIND INPUT SOURCE_DIR WORK_DIR TIMEOUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "ReplayCase.cmake: -D${v}= is missing")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK_DIR})
get_filename_component(case ${INPUT} NAME)
set(failures "")

# run(<out-var-rc> command...): runs it, appends to `failures` if it breaks the rule.
macro(run rc_var)
  execute_process(COMMAND ${ARGN}
    WORKING_DIRECTORY ${SOURCE_DIR}
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT ${TIMEOUT})
  string(REPLACE ";" " " cmdline "${ARGN}")
  string(LENGTH "${err}" err_len)
  if(err_len GREATER 1500)
    math(EXPR from "${err_len} - 1500")
    string(SUBSTRING "${err}" ${from} -1 err)
  endif()
  set(bad "")
  if(rc STREQUAL "0" OR rc STREQUAL "2")
  elseif(rc STREQUAL "1")
    string(STRIP "${err}" stripped)
    if(stripped STREQUAL "")
      set(bad "exit 1 with nothing on stderr")
    elseif(err MATCHES "[Ii]nternal [Ee]rror")
      set(bad "exit 1 with an internal error")
    endif()
  else()
    # a number (exit 3, ...) or CMake's text for a signal or a timeout
    set(bad "ended with '${rc}' (timeout ${TIMEOUT} s)")
  endif()
  if(NOT bad STREQUAL "" OR err MATCHES "AddressSanitizer|runtime error:|LeakSanitizer")
    if(bad STREQUAL "")
      set(bad "a sanitizer report")
    endif()
    string(APPEND failures "\n  ${cmdline}\n    -> ${bad}\n    stderr: ${err}")
  endif()
  set(${rc_var} "${rc}")
endmacro()

set(gemm -g gemm -p M=64,N=64,K=64)
if(KIND STREQUAL "schedule")
  run(rc ${TESSEL} compile ${gemm} --schedule ${INPUT} --emit json)
elseif(KIND STREQUAL "arch")
  run(rc ${TESSEL} arch show ${INPUT})
  run(rc ${TESSEL} compile ${gemm} --arch ${INPUT} --emit asm)
  run(rc ${TESSEL} sim tests/npu_target/programs/copy_16k.s --arch ${INPUT})
elseif(KIND STREQUAL "binary")
  run(rc ${TESSEL} disasm ${INPUT})
  run(rc ${TESSEL} sim ${INPUT})
elseif(KIND STREQUAL "asm")
  run(rc ${TESSEL} sim ${INPUT})
  set(out ${WORK_DIR}/${case}.tsl)
  file(REMOVE ${out})
  run(rc ${TESSEL} asm ${INPUT} -o ${out})
  if(rc STREQUAL "0")
    run(rc ${TESSEL} disasm ${out})
  endif()
elseif(KIND STREQUAL "tensor")
  # A .pb or .npy file (by its extension) as the input x and as the expected output y
  # of a 16 KiB copy: the readers and the binding, without a compile.
  set(copy tests/npu_target/programs/copy_16k.s)
  run(rc ${TESSEL} sim ${copy} --inputs x=${INPUT})
  run(rc ${TESSEL} sim ${copy} --inputs zeros --expect y=${INPUT})
  run(rc ${TESSEL} sim ${copy} --inputs ${INPUT})
else()
  message(FATAL_ERROR "ReplayCase.cmake: unknown KIND '${KIND}'")
endif()

if(NOT failures STREQUAL "")
  message(FATAL_ERROR "fuzz corpus case ${KIND}/${case}:${failures}")
endif()
message(STATUS "fuzz corpus case ${KIND}/${case}: ok")
