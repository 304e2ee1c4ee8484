# normkit_enable_dispatch(<target>): one binary for every CPU of the platform.
#
# Compiles cmake/normkit_isa.cpp once per ISA with that ISA's flags (xsimd 8.1 holds one arch per
# translation unit, TOOLCHAIN.md section 1), links the objects into <target> in ascending ISA
# order, and defines NORMKIT_RUNTIME_DISPATCH for <target>'s sources so that the entry points
# pick the best ISA the CPU supports once (capped by NORMKIT_ISA or normkit::set_isa()).
include_guard(GLOBAL)

# The ISA translation unit sits beside this module, in the source tree and when installed.
set_property(GLOBAL PROPERTY NORMKIT_ISA_SOURCE ${CMAKE_CURRENT_LIST_DIR}/normkit_isa.cpp)

# The ISAs of the target platform: name, then compile flags.
function(_normkit_isa_list out)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(${out} "avx2;avx512" PARENT_SCOPE)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
    set(${out} "neon" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

function(_normkit_isa_flags isa out)
  if(isa STREQUAL "avx2")
    set(${out} -mavx2 -mfma -mf16c PARENT_SCOPE)
  elseif(isa STREQUAL "avx512")
    set(${out} -mavx512f -mavx512bw -mavx512dq -mavx512cd -mavx512vl -mavx2 -mfma -mf16c PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

function(normkit_enable_dispatch target)
  if(NOT TARGET normkit::normkit)
    message(FATAL_ERROR "normkit_enable_dispatch: normkit::normkit is not defined")
  endif()
  if(NOT TARGET xsimd)
    message(FATAL_ERROR "normkit_enable_dispatch: the SIMD paths need xsimd 8.1 or newer "
                        "(install it, or set xsimd_DIR or NORMKIT_XSIMD_INCLUDE_DIR); without it normkit::normkit "
                        "is the scalar reference")
  endif()
  get_property(isa_source GLOBAL PROPERTY NORMKIT_ISA_SOURCE)
  _normkit_isa_list(isas)
  foreach(isa IN LISTS isas)
    set(obj normkit_isa_${isa})  # compiled once, shared by every target that asks
    if(NOT TARGET ${obj})
      add_library(${obj} OBJECT ${isa_source})
      _normkit_isa_flags(${isa} flags)
      string(TOUPPER ${isa} ISA)
      target_compile_definitions(${obj} PRIVATE NORMKIT_ISA_TU_${ISA})
      target_compile_options(${obj} PRIVATE ${flags})
      target_link_libraries(${obj} PRIVATE normkit::normkit)
      set_target_properties(${obj} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    endif()
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${obj}>)
  endforeach()
  target_compile_definitions(${target} PRIVATE NORMKIT_RUNTIME_DISPATCH)
  target_link_libraries(${target} PRIVATE normkit::normkit)
endfunction()
