# Installation: `cmake --install build --prefix P` gives P/bin/tessel (and tessel-ide
# when it is built), P/include/tessel/tessel_runtime.h, the generator SDK's headers
# (P/include/tessel/{dsl,npu_target/common}/...), P/lib/libtessel_{runtime,sim,npu_target}.a,
# P/share/tessel/presets/*.json and P/lib/cmake/Tessel (find_package(Tessel),
# tessel_add_kernel_library, tessel_add_generator_library). docs/export.md, docs/generators.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tessel RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET tessel-ide)
  install(TARGETS tessel-ide RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The generator SDK: what a generator source includes (dsl/Generator.h and what it
# includes). A user's library links Halide and takes the rest from the program that
# loads it (tools/CMakeLists.txt, ENABLE_EXPORTS).
foreach(h dsl/Generator.h dsl/GeneratorInfo.h npu_target/common/DType.h npu_target/common/Error.h)
  get_filename_component(d "${h}" DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessel/${d})
endforeach()
install(TARGETS tessel_runtime tessel_sim tessel_npu_target ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/npu_target/runtime/tessel_runtime.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessel)
file(GLOB _tessel_presets ${PROJECT_SOURCE_DIR}/npu_target/arch/presets/*.json)
install(FILES ${_tessel_presets} DESTINATION ${CMAKE_INSTALL_DATADIR}/tessel/presets)

set(_tessel_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Tessel)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TesselConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TesselConfig.cmake
  INSTALL_DESTINATION ${_tessel_cmake_dir}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesselConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesselConfig.cmake ${PROJECT_BINARY_DIR}/TesselConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TesselKernelLibrary.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TesselGeneratorLibrary.cmake
        DESTINATION ${_tessel_cmake_dir})
