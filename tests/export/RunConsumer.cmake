# cmake -DBINARY_DIR=... -DCONSUMER_DIR=... -DWORK_DIR=... -P RunConsumer.cmake
# Installs the Tessel build in BINARY_DIR into WORK_DIR/prefix, then
# configures, builds and runs the consumer project against that prefix. Any
# failing step fails the test with its output.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(step what)
  message(STATUS "consumer test: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ${what} failed (${rc})")
  endif()
endfunction()

step("install into ${WORK_DIR}/prefix"
  ${CMAKE_COMMAND} --install "${BINARY_DIR}" --prefix "${WORK_DIR}/prefix")
step("configure tests/consumer"
  ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build" -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
step("build" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("run" "${WORK_DIR}/build/consumer")
