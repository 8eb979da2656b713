# tessel_add_generator_library(NAME SOURCES a.cpp [b.cpp ...] [LIBS lib ...])
#
# Builds a user's generator library: a shared module libNAME.so that
# `tessel --generators libNAME.so ...` and `tessel-ide --generators libNAME.so`
# load (dlopen). Each source defines Halide generators and registers them with
# TESSEL_REGISTER_GENERATOR (#include "dsl/Generator.h"). The module links Halide
# and nothing of Tessel: the generator API (register_generator_info, halide_type,
# parse_dtype_param, ...) comes from the program that loads it, so its registry
# is the program's. Give the target to tessel_add_kernel_library(... GENERATORS NAME)
# to export kernels of these generators. docs/generators.md.
#
# The caller provides TESSEL_GENERATOR_SDK_TARGET (an interface target with the
# SDK's include directory and Halide::Halide); TesselConfig.cmake defines
# Tessel::generator_sdk and sets it.
function(tessel_add_generator_library NAME)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tessel_add_generator_library(${NAME}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tessel_add_generator_library(${NAME}): give SOURCES")
  endif()
  if(NOT TESSEL_GENERATOR_SDK_TARGET OR NOT TARGET ${TESSEL_GENERATOR_SDK_TARGET})
    message(FATAL_ERROR "tessel_add_generator_library(${NAME}): the generator SDK needs Halide 14 "
      "(find_package(Halide 14 COMPONENTS Halide), Debian's libhalide14-0-dev), which "
      "find_package(Tessel) did not find: ${TESSEL_GENERATOR_SDK_MISSING}")
  endif()
  add_library(${NAME} MODULE ${ARG_SOURCES})
  target_link_libraries(${NAME} PRIVATE ${TESSEL_GENERATOR_SDK_TARGET} ${ARG_LIBS})
  # Halide's headers need C++17; the generators' static registrations must run on load,
  # so nothing is discarded (a MODULE keeps every object file it is given).
  target_compile_features(${NAME} PRIVATE cxx_std_17)
  set_target_properties(${NAME} PROPERTIES PREFIX "lib" CXX_EXTENSIONS OFF)
endfunction()
