# SPDX-License-Identifier: MIT
# Runtime dispatch: one binary for every CPU of the platform.
#
# normkit::dispatch is a static library built from src/normkit_isa.cpp (cmake/normkit_isa.cpp in
# the source tree) compiled once per ISA with that ISA's flags: xsimd 8.1 holds one arch per
# translation unit. normkit::normkit links it and defines NORMKIT_RUNTIME_DISPATCH for the
# consumer's sources, so that the entry points pick the best ISA the CPU supports once (capped
# by NORMKIT_ISA, selected by normkit::set_isa()). On a platform without a SIMD ISA in the list
# (neither x86-64 nor AArch64) normkit::normkit is the header-only scalar mode.
#
# Included by normkit's own CMakeLists.txt (builds the library) and by the installed
# normkitConfig.cmake (the library is prebuilt; only normkit_enable_dispatch() is needed there).
include_guard(GLOBAL)

# The ISA table, include/normkit/core/isa_table.hpp: one `X(name, value, family, xsimd arch, cpu
# member, "flags")` line per ISA. Read from the source tree (or an installed include dir next to
# this file); C++ expands the same lines, so an ISA is added in that header only.
function(_normkit_isa_table_lines out)
  set(file "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../include/normkit/core/isa_table.hpp")
  if(NOT EXISTS "${file}")
    set(file "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../../../${CMAKE_INSTALL_INCLUDEDIR}/normkit/core/isa_table.hpp")
  endif()
  file(READ "${file}" text)
  string(REGEX REPLACE "\\\\\n" " " text "${text}")  # join the macro's continued lines
  string(REGEX MATCHALL "X\\([a-z0-9_]+, *[0-9]+, *[a-z0-9_]+, *[^,]+, *[a-z0-9_]+, *\"[^\"]*\"\\)" rows "${text}")
  if(NOT rows)
    message(FATAL_ERROR "normkit: no ISA rows found in ${file}")
  endif()
  set(${out} "${rows}" PARENT_SCOPE)
endfunction()

# One field of an ISA's row: FAMILY, ARCH or FLAGS (a list).
function(_normkit_isa_field isa field out)
  _normkit_isa_table_lines(rows)
  foreach(row IN LISTS rows)
    if(row MATCHES "^X\\(([a-z0-9_]+), *[0-9]+, *([a-z0-9_]+), *([^,]+), *[a-z0-9_]+, *\"([^\"]*)\"\\)$"
       AND CMAKE_MATCH_1 STREQUAL isa)
      if(field STREQUAL "FAMILY")
        set(${out} "${CMAKE_MATCH_2}" PARENT_SCOPE)
      elseif(field STREQUAL "ARCH")
        string(REGEX REPLACE "^xsimd::" "" arch "${CMAKE_MATCH_3}")
        string(STRIP "${arch}" arch)
        set(${out} "${arch}" PARENT_SCOPE)
      else()
        separate_arguments(flags UNIX_COMMAND "${CMAKE_MATCH_4}")
        set(${out} "${flags}" PARENT_SCOPE)
      endif()
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "normkit: ISA '${isa}' is not in the ISA table")
endfunction()

# The ISAs of the target platform, in table (ascending) order.
function(_normkit_isa_list out)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(family x86)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
    set(family arm)
  else()
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  _normkit_isa_table_lines(rows)
  set(isas "")
  foreach(row IN LISTS rows)
    if(row MATCHES "^X\\(([a-z0-9_]+), *[0-9]+, *${family},")
      list(APPEND isas ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(${out} "${isas}" PARENT_SCOPE)
endfunction()

# The compile flags of one ISA's translation unit (README, "Without CMake", quotes them).
function(_normkit_isa_flags isa out)
  _normkit_isa_field(${isa} FLAGS flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# Builds normkit_dispatch (exported as normkit::dispatch) and the INTERFACE target normkit
# (normkit::normkit). Called once, by normkit's CMakeLists.txt.
function(_normkit_add_dispatch_library isa_source)
  add_library(normkit INTERFACE)
  add_library(normkit::normkit ALIAS normkit)
  target_link_libraries(normkit INTERFACE normkit_headers)
  _normkit_isa_list(isas)
  if(NOT isas)
    message(STATUS "normkit: no SIMD ISA for ${CMAKE_SYSTEM_PROCESSOR}; normkit::normkit is the header-only scalar mode")
    return()
  endif()
  # Vendored without install rules: built only when a target links normkit::normkit.
  set(exclude ON)
  if(NORMKIT_INSTALL)
    set(exclude OFF)
  endif()
  # What the per-ISA objects instantiate (dispatch/selection.hpp): every op, type and policy
  # unless the build states the ones its binaries call.
  set(selection "")
  foreach(what OPS TYPES POLICIES)
    if(NORMKIT_DISPATCH_${what} AND NOT NORMKIT_DISPATCH_${what} STREQUAL "all")
      string(REPLACE ";" "," value "${NORMKIT_DISPATCH_${what}}")
      list(APPEND selection "NORMKIT_SELECT_${what}=${value}")
      message(STATUS "normkit: dispatch kernels limited to ${what} ${value} (other calls run the scalar reference)")
    endif()
  endforeach()
  set(objects "")
  foreach(isa IN LISTS isas)
    set(obj normkit_isa_${isa})  # the symbol test (tests/CMakeLists.txt) reads these objects
    add_library(${obj} OBJECT ${isa_source})
    _normkit_isa_flags(${isa} flags)
    string(TOUPPER ${isa} ISA)
    target_compile_definitions(${obj} PRIVATE NORMKIT_ISA_TU_${ISA} ${selection})
    target_compile_options(${obj} PRIVATE ${flags})
    target_link_libraries(${obj} PRIVATE normkit_headers)
    set_target_properties(${obj} PROPERTIES POSITION_INDEPENDENT_CODE ON  # usable in shared libraries
      EXCLUDE_FROM_ALL ${exclude})
    list(APPEND objects $<TARGET_OBJECTS:${obj}>)
  endforeach()
  add_library(normkit_dispatch STATIC ${objects})
  add_library(normkit::dispatch ALIAS normkit_dispatch)
  set_target_properties(normkit_dispatch PROPERTIES EXPORT_NAME dispatch LINKER_LANGUAGE CXX
    EXCLUDE_FROM_ALL ${exclude})
  target_link_libraries(normkit INTERFACE normkit_dispatch)
  target_compile_definitions(normkit INTERFACE NORMKIT_RUNTIME_DISPATCH)
endfunction()

# normkit_enable_dispatch(<target>): the 0.1 spelling of runtime dispatch, kept for existing
# build files. normkit::normkit brings it now; this only links that target.
function(normkit_enable_dispatch target)
  if(NOT TARGET normkit::normkit)
    message(FATAL_ERROR "normkit_enable_dispatch: normkit::normkit is not defined")
  endif()
  target_link_libraries(${target} PRIVATE normkit::normkit)
endfunction()
