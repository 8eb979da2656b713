# Helpers shared by every Tessel module.

# tessel_use_halide(target): link Halide and precompile Halide.h for the target.
# Only targets whose sources include Halide.h should call this (it costs ~300 MB
# and 3-4 s per translation unit); Halide-free code links the module instead.
function(tessel_use_halide target)
  target_link_libraries(${target} PUBLIC Halide::Halide)
  if(TESSEL_USE_PCH)
    target_precompile_headers(${target} PRIVATE <Halide.h>)
  endif()
endfunction()

# tessel_add_test(NAME name LABELS l1 [l2...] SOURCES a.cpp ... [LIBS lib ...] [HALIDE])
# Builds a GoogleTest executable and registers each of its tests with CTest,
# labelled per module so that `ctest -L dsl` runs one group.
function(tessel_add_test)
  cmake_parse_arguments(T "HALIDE" "NAME" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main Threads::Threads)
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  if(T_HALIDE)
    tessel_use_halide(${T_NAME})
  endif()
  include(GoogleTest)
  # gtest_discover_tests flattens list-valued PROPERTIES (a second label or
  # environment entry would become a property name), so the labels and the
  # environment are set by a script CTest runs after the discovered tests exist.
  gtest_discover_tests(${T_NAME}
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    TEST_LIST ${T_NAME}_TESTS
    DISCOVERY_TIMEOUT 60)
  set(props ${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_properties.cmake)
  file(WRITE ${props}
    "if(${T_NAME}_TESTS)\n"
    "  set_tests_properties(\${${T_NAME}_TESTS} PROPERTIES LABELS \"${T_LABELS}\"\n"
    "    ENVIRONMENT \"TESSEL_SOURCE_DIR=${CMAKE_SOURCE_DIR};QT_QPA_PLATFORM=offscreen\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${props})
endfunction()
