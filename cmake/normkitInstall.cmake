# SPDX-License-Identifier: MIT
# Install rules: headers, the targets normkit::headers, normkit::dispatch (the prebuilt
# runtime-dispatch library, so a find_package consumer compiles no kernel) and normkit::normkit,
# a config + version file, pkg-config files, the ISA translation unit (for builds that compile
# the dispatch objects themselves), LICENSE and the changelog.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/normkit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(_nk_targets normkit normkit_headers)
if(TARGET normkit_dispatch)
  list(APPEND _nk_targets normkit_dispatch)
endif()
install(TARGETS ${_nk_targets} EXPORT normkitTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(NORMKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/normkit)  # the static library is per-arch
install(EXPORT normkitTargets NAMESPACE normkit:: DESTINATION ${NORMKIT_CMAKE_DIR})
configure_package_config_file(cmake/normkitConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/normkitConfig.cmake INSTALL_DESTINATION ${NORMKIT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/normkitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/normkitConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/normkitConfigVersion.cmake
  cmake/normkitDispatch.cmake
  cmake/normkitXsimd.cmake
  DESTINATION ${NORMKIT_CMAKE_DIR})
install(FILES cmake/normkit_isa.cpp DESTINATION ${CMAKE_INSTALL_DATADIR}/normkit/src)
install(FILES LICENSE docs/CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# pkg-config: normkit (runtime dispatch, the default) and normkit-headers (static mode). C++17
# is the consumer's to set (-std=c++17).
set(_nk_pc_requires "")
if(TARGET xsimd)
  get_target_property(_nk_xsimd_imported xsimd IMPORTED)
  if(_nk_xsimd_imported)
    set(_nk_pc_requires "xsimd")  # an installed xsimd ships xsimd.pc (Debian, conda, vcpkg)
  endif()
endif()
set(_nk_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${_nk_pc_dir}")
  set(_nk_pc_prefix "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _nk_pc_up "/r/${_nk_pc_dir}" "/r")  # relocatable: relative to the .pc file
  string(REGEX REPLACE "/$" "" _nk_pc_up "${_nk_pc_up}")
  set(_nk_pc_prefix "\${pcfiledir}/${_nk_pc_up}")
endif()
foreach(_nk_dir INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_nk_dir}}")
    set(_nk_pc_${_nk_dir} "${CMAKE_INSTALL_${_nk_dir}}")
  else()
    set(_nk_pc_${_nk_dir} "\${prefix}/${CMAKE_INSTALL_${_nk_dir}}")
  endif()
endforeach()
foreach(_nk_pc normkit normkit-headers)
  set(_nk_pc_cflags "-I\${includedir}")
  set(_nk_pc_libs "")
  if(_nk_pc STREQUAL "normkit" AND TARGET normkit_dispatch)
    set(_nk_pc_desc "${PROJECT_DESCRIPTION} (runtime ISA dispatch)")
    string(APPEND _nk_pc_cflags " -DNORMKIT_RUNTIME_DISPATCH")
    set(_nk_pc_libs "Libs: -L\${libdir} -lnormkit_dispatch\n")
  else()
    set(_nk_pc_desc "${PROJECT_DESCRIPTION} (header-only; the ISA follows the compiler flags)")
  endif()
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${_nk_pc}.pc
"prefix=${_nk_pc_prefix}
includedir=${_nk_pc_INCLUDEDIR}
libdir=${_nk_pc_LIBDIR}

Name: ${_nk_pc}
Description: ${_nk_pc_desc}
Version: ${PROJECT_VERSION}
Requires: ${_nk_pc_requires}
Cflags: ${_nk_pc_cflags}
${_nk_pc_libs}")
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${_nk_pc}.pc DESTINATION ${_nk_pc_dir})
endforeach()
