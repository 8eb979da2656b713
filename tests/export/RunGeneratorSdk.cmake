# cmake -DBINARY_DIR=... -DPROJECT_DIR=... -DWORK_DIR=... -P RunGeneratorSdk.cmake
# A user's generator library, as a user builds it: installs the Tessel build in
# BINARY_DIR into WORK_DIR/prefix, builds tests/generator_sdk against that prefix
# (its generator library, a kernel library exported from it for the user's arch
# file, a program calling the kernel), runs the program, then drives the
# installed tools on the library: list, run (scheduled and not), the IDE, and a
# bad library. Any failing step fails the test with its output.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# step(what [EXPECT_RC n] [EXPECT regex ...] COMMAND cmd args...)
function(step what)
  cmake_parse_arguments(S "" "EXPECT_RC" "EXPECT;COMMAND" ${ARGN})
  if(NOT DEFINED S_EXPECT_RC)
    set(S_EXPECT_RC 0)
  endif()
  message(STATUS "generator SDK test: ${what}")
  execute_process(COMMAND ${S_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
  message("${out}${err}")
  if(NOT rc STREQUAL "${S_EXPECT_RC}")
    message(FATAL_ERROR "generator SDK test: ${what}: exit ${rc}, expected ${S_EXPECT_RC}")
  endif()
  foreach(re ${S_EXPECT})
    if(NOT "${out}${err}" MATCHES "${re}")
      message(FATAL_ERROR "generator SDK test: ${what}: the output does not match '${re}'")
    endif()
  endforeach()
endfunction()

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
set(tessel "${prefix}/bin/tessel")
set(lib "${build}/libmygens.so")

step("install into ${prefix}" COMMAND ${CMAKE_COMMAND} --install "${BINARY_DIR}" --prefix "${prefix}")
step("configure tests/generator_sdk (project(... CXX) only)"
  COMMAND ${CMAKE_COMMAND} -S "${PROJECT_DIR}" -B "${build}" -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_PREFIX_PATH=${prefix}")
step("build the generator library, export a kernel from it, build the program"
  COMMAND ${CMAKE_COMMAND} --build "${build}")
step("run the program (the user's kernel on the NPU and the CPU)" EXPECT "all passed" COMMAND "${build}/app")

step("tessel --generators libmygens.so list"
  EXPECT "unsharp" "scale_bias_relu" "amount"
  COMMAND "${tessel}" --generators "${lib}" list)
step("tessel run: unsharp, the user's schedule, the user's arch file"
  EXPECT "PASS" "on my-npu" "efficiency"
  COMMAND "${tessel}" --generators "${lib}" run -g unsharp -p W=64,H=16
          --schedule "${PROJECT_DIR}/unsharp_tiles.json" --arch "${PROJECT_DIR}/my_npu.json")
step("tessel run: scale_bias_relu in fp16, no schedule"
  EXPECT "PASS"
  COMMAND "${tessel}" --generators "${lib}" run -g scale_bias_relu -p N=256,dtype=fp16)
# --schedule auto: the user's generators get NPU schedules from the automatic scheduler on every
# preset (auto-int8's vector unit reads only its accumulators: the default placement there,
# with the warning).
foreach(arch ascend-like gemmini-like)
  step("tessel run --schedule auto: unsharp on ${arch}"
    EXPECT "PASS" "tessel: auto: vector form"
    COMMAND "${tessel}" --generators "${lib}" run -g unsharp -p W=64,H=16 --arch ${arch} --schedule auto)
  step("tessel run --schedule auto: scale_bias_relu on ${arch}"
    EXPECT "PASS" "tessel: auto: vector form"
    COMMAND "${tessel}" --generators "${lib}" run -g scale_bias_relu -p N=4096,dtype=fp32 --arch ${arch} --schedule auto)
endforeach()
step("tessel run --schedule auto: unsharp on auto-int8 (no path from GM to its vector level)"
  EXPECT "PASS" "Func out: no DMA path from GM to the vector unit's level 'ACC'"
  COMMAND "${tessel}" --generators "${lib}" run -g unsharp -p W=32,H=8 --arch auto-int8 --schedule auto)
step("tessel run: a bad parameter of a user's generator"
  EXPECT_RC 1 EXPECT "scale_bias_relu: dtype must be fp16, bf16 or fp32"
  COMMAND "${tessel}" --generators "${lib}" run -g scale_bias_relu -p N=256,dtype=int8)
step("tessel: a library that does not exist"
  EXPECT_RC 1 EXPECT "cannot load generator library '${WORK_DIR}/nope.so'"
  COMMAND "${tessel}" --generators "${WORK_DIR}/nope.so" list)
if(EXISTS "${prefix}/bin/tessel-ide")
  step("tessel-ide --generators libmygens.so --open unsharp (offscreen)"
    COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen
            "${prefix}/bin/tessel-ide" --generators "${lib}" --open unsharp --params W=64,H=16
            --schedule "${PROJECT_DIR}/unsharp_tiles.json" --no-restore --screenshot "${WORK_DIR}/ide.png")
  if(NOT EXISTS "${WORK_DIR}/ide.png")
    message(FATAL_ERROR "generator SDK test: tessel-ide wrote no screenshot")
  endif()
endif()
