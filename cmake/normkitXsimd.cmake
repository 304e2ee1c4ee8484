# SPDX-License-Identifier: MIT
# Locating xsimd, shared by the build (normkitDependencies.cmake) and the installed package
# (normkitConfig.cmake). xsimd serves the SIMD paths only; the scalar reference needs nothing.
#
# Any xsimd from 8.1 on is accepted (simd/xsimd_compat.hpp absorbs the API differences). No
# version is passed to find_package: xsimd's version files (SameMajorVersion) would reject a
# request for 8.1 when 14 is installed, so the version found is checked here instead.
#
# Where xsimd comes from, first match wins:
#   1. a target named `xsimd` that the enclosing project already has: used as it is;
#   2. NORMKIT_XSIMD_INCLUDE_DIR: a directory holding xsimd/xsimd.hpp, for headers that come
#      without a CMake package (e.g. the copy bundled in a Python package);
#   3. find_package(xsimd CONFIG).
include_guard(GLOBAL)

set(NORMKIT_XSIMD_MIN_VERSION 8.1)

# <out>: the version in <include_dir>/xsimd/config/xsimd_config.hpp, empty if there is none.
function(_normkit_xsimd_header_version include_dir out)
  set(config ${include_dir}/xsimd/config/xsimd_config.hpp)
  set(version "")
  if(EXISTS ${config})
    file(STRINGS ${config} lines REGEX "#define XSIMD_VERSION_(MAJOR|MINOR|PATCH) ")
    foreach(part MAJOR MINOR PATCH)
      string(REGEX MATCH "XSIMD_VERSION_${part} ([0-9]+)" _ "${lines}")
      list(APPEND version ${CMAKE_MATCH_1})
    endforeach()
    list(JOIN version "." version)
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

# normkit_locate_xsimd(<error_var> [GLOBAL]): makes the target `xsimd` available if it can be
# found. <error_var> is set to a message when xsimd is present but unusable (too old, or a bad
# NORMKIT_XSIMD_INCLUDE_DIR), empty otherwise; whether xsimd is missing is `TARGET xsimd`.
# GLOBAL: a target made from NORMKIT_XSIMD_INCLUDE_DIR is visible to the whole build.
macro(normkit_locate_xsimd error_var)
  set(${error_var} "")
  if(TARGET xsimd)
    # The enclosing project's own xsimd: its version is its business (xsimd_compat.hpp stops
    # the compilation with a clear #error below 8.1).
  elseif(NORMKIT_XSIMD_INCLUDE_DIR)
    _normkit_xsimd_header_version("${NORMKIT_XSIMD_INCLUDE_DIR}" _nk_xsimd_version)
    if(NOT EXISTS "${NORMKIT_XSIMD_INCLUDE_DIR}/xsimd/xsimd.hpp" OR NOT _nk_xsimd_version)
      set(${error_var} "NORMKIT_XSIMD_INCLUDE_DIR=${NORMKIT_XSIMD_INCLUDE_DIR} does not hold \
xsimd/xsimd.hpp and xsimd/config/xsimd_config.hpp; point it at the directory that contains the \
xsimd/ folder")
    elseif(_nk_xsimd_version VERSION_LESS NORMKIT_XSIMD_MIN_VERSION)
      set(${error_var} "xsimd ${_nk_xsimd_version} in NORMKIT_XSIMD_INCLUDE_DIR is too old: normkit \
needs ${NORMKIT_XSIMD_MIN_VERSION} or newer")
    else()
      add_library(xsimd INTERFACE IMPORTED ${ARGN})
      set_target_properties(xsimd PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NORMKIT_XSIMD_INCLUDE_DIR}")
      set(xsimd_VERSION ${_nk_xsimd_version})
    endif()
  else()
    find_package(xsimd CONFIG QUIET)
    if(xsimd_FOUND AND xsimd_VERSION VERSION_LESS NORMKIT_XSIMD_MIN_VERSION)
      set(${error_var} "xsimd ${xsimd_VERSION} (${xsimd_DIR}) is too old: normkit needs \
${NORMKIT_XSIMD_MIN_VERSION} or newer (set xsimd_DIR or NORMKIT_XSIMD_INCLUDE_DIR to a newer one)")
    endif()
  endif()
  # Debian 12's xsimd 8.1 config links a library "xtl" that it does not provide.
  if(TARGET xsimd AND NOT TARGET xtl)
    get_target_property(_nk_xsimd_alias xsimd ALIASED_TARGET)
    get_target_property(_nk_xsimd_imported xsimd IMPORTED)
    if(NOT _nk_xsimd_alias AND _nk_xsimd_imported)
      get_target_property(_nk_xsimd_libs xsimd INTERFACE_LINK_LIBRARIES)
      if(_nk_xsimd_libs STREQUAL "xtl")
        set_property(TARGET xsimd PROPERTY INTERFACE_LINK_LIBRARIES "")
      endif()
    endif()
  endif()
endmacro()
