# Install rules: headers, the normkit::normkit target, a config + version file, and the
# runtime-dispatch module with its ISA translation unit.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/normkit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS normkit EXPORT normkitTargets)
set(NORMKIT_CMAKE_DIR ${CMAKE_INSTALL_DATADIR}/cmake/normkit)  # header-only: arch-independent
install(EXPORT normkitTargets NAMESPACE normkit:: DESTINATION ${NORMKIT_CMAKE_DIR})
configure_package_config_file(cmake/normkitConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/normkitConfig.cmake INSTALL_DESTINATION ${NORMKIT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/normkitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/normkitConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/normkitConfigVersion.cmake
  cmake/normkitDispatch.cmake
  cmake/normkitXsimd.cmake
  cmake/normkit_isa.cpp
  DESTINATION ${NORMKIT_CMAKE_DIR})
