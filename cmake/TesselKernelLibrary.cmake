# tessel_add_kernel_library(NAME MANIFEST kernels.json [DB file] [SEED n] [HOST_TARGET t]
#                           [GENERATORS lib ...])
# tessel_add_kernel_library(NAME GENERATOR gen [KERNEL kname] [PARAMS "K=V,..."]
#                           [SCHEDULE file.json|best] [ARCH preset|file] [DB file] [SEED n]
#                           [HOST_TARGET halide-target] [GENERATORS lib ...])
#
# GENERATORS: users' generator libraries the kernels come from, each a target made
# by tessel_add_generator_library() (built first) or a path to a .so; `tessel export`
# loads them (--generators).
#
# Runs `tessel export` at build time (like Halide's add_halide_library) and
# gives a static library target NAME: link it and include "NAME.h". The kernel
# library's NPU entry points need the Tessel runtime (linked through the
# target) and a device opened with tessel_device_open(). Relative paths are
# relative to the calling CMakeLists.txt; a manifest's schedule paths are
# relative to the manifest. docs/export.md.
#
# The caller provides TESSEL_EXECUTABLE (the `tessel` program or its target)
# and TESSEL_RUNTIME_TARGET (the runtime library target); TesselConfig.cmake
# sets both to Tessel::tessel and Tessel::runtime. TESSEL_RUNTIME_INCLUDE_DIR
# (optional) is where tessel_runtime.h is when the runtime target does not say.
function(tessel_add_kernel_library NAME)
  cmake_parse_arguments(ARG "" "MANIFEST;GENERATOR;KERNEL;PARAMS;SCHEDULE;ARCH;DB;SEED;HOST_TARGET" "GENERATORS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tessel_add_kernel_library(${NAME}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TESSEL_EXECUTABLE OR NOT TESSEL_RUNTIME_TARGET)
    message(FATAL_ERROR "tessel_add_kernel_library: TESSEL_EXECUTABLE / TESSEL_RUNTIME_TARGET are not set (find_package(Tessel) sets them)")
  endif()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${NAME}.tessel")
  file(MAKE_DIRECTORY "${out}")
  set(deps "")
  if(ARG_MANIFEST)
    if(ARG_GENERATOR)
      message(FATAL_ERROR "tessel_add_kernel_library(${NAME}): give MANIFEST or GENERATOR, not both")
    endif()
    get_filename_component(manifest "${ARG_MANIFEST}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(mdir "${manifest}" DIRECTORY)
    # Rebuild when a schedule file the manifest names changes.
    file(READ "${manifest}" text)
    string(JSON n ERROR_VARIABLE err LENGTH "${text}" kernels)
    if(err)
      message(FATAL_ERROR "tessel_add_kernel_library(${NAME}): ${manifest}: ${err}")
    endif()
    if(n GREATER 0)
      math(EXPR last "${n} - 1")
      foreach(i RANGE ${last})
        string(JSON s ERROR_VARIABLE err GET "${text}" kernels ${i} schedule)
        if(NOT err AND NOT s STREQUAL "best" AND NOT s STREQUAL "default" AND NOT s STREQUAL "")
          get_filename_component(s "${s}" ABSOLUTE BASE_DIR "${mdir}")
          list(APPEND deps "${s}")
        endif()
      endforeach()
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest}")
  elseif(ARG_GENERATOR)
    if(NOT ARG_KERNEL)
      set(ARG_KERNEL "${NAME}")
    endif()
    if(NOT ARG_ARCH)
      set(ARG_ARCH "ascend-like")
    endif()
    set(sched "")
    if(ARG_SCHEDULE STREQUAL "best")
      set(sched ", \"schedule\": \"best\"")
    elseif(ARG_SCHEDULE)
      get_filename_component(s "${ARG_SCHEDULE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND deps "${s}")
      set(sched ", \"schedule\": \"${s}\"")
    endif()
    if(ARG_ARCH MATCHES "/|\\.json$")
      get_filename_component(ARG_ARCH "${ARG_ARCH}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND deps "${ARG_ARCH}")
    endif()
    set(manifest "${out}/kernels.json")
    file(GENERATE OUTPUT "${manifest}" CONTENT
      "{\"library\": \"${NAME}\", \"kernels\": [{\"name\": \"${ARG_KERNEL}\", \"generator\": \"${ARG_GENERATOR}\", \"params\": \"${ARG_PARAMS}\", \"arch\": \"${ARG_ARCH}\"${sched}}]}\n")
  else()
    message(FATAL_ERROR "tessel_add_kernel_library(${NAME}): give MANIFEST or GENERATOR")
  endif()
  set(extra "")
  if(ARG_DB)
    get_filename_component(db "${ARG_DB}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND extra --db "${db}")
  endif()
  if(ARG_SEED)
    list(APPEND extra --seed "${ARG_SEED}")
  endif()
  if(ARG_HOST_TARGET)
    list(APPEND extra --host-target "${ARG_HOST_TARGET}")
  endif()
  set(gens "")
  foreach(g ${ARG_GENERATORS})
    if(TARGET ${g})
      list(APPEND gens --generators "$<TARGET_FILE:${g}>")
      list(APPEND deps ${g})
    else()
      get_filename_component(g "${g}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND gens --generators "${g}")
      list(APPEND deps "${g}")
    endif()
  endforeach()
  set(outputs "${out}/lib${NAME}.a" "${out}/${NAME}.h" "${out}/manifest.json")
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${TESSEL_EXECUTABLE} ${gens} export --manifest "${manifest}" -o "${out}" --name ${NAME} --quiet ${extra}
    DEPENDS "${manifest}" ${deps} ${TESSEL_EXECUTABLE}
    COMMENT "tessel export: kernel library ${NAME}"
    VERBATIM)
  add_custom_target(${NAME}.tessel_export DEPENDS ${outputs})
  add_library(${NAME} STATIC IMPORTED GLOBAL)
  find_package(Threads REQUIRED)
  set_target_properties(${NAME} PROPERTIES
    IMPORTED_LOCATION "${out}/lib${NAME}.a"
    INTERFACE_INCLUDE_DIRECTORIES "${out};${TESSEL_RUNTIME_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${TESSEL_RUNTIME_TARGET};Halide::Runtime;Threads::Threads;${CMAKE_DL_LIBS}")
  add_dependencies(${NAME} ${NAME}.tessel_export)
endfunction()
