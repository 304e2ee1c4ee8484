# SPDX-License-Identifier: MIT
# ctest script: no object compiled with ISA flags may define a linkable symbol that code of
# another configuration could bind to (include/normkit/core/abi.hpp: the linker keeps one copy of a COMDAT
# symbol; an AVX2 copy of a shared helper is a SIGILL on an older CPU, an AVX-512 copy one on an
# AVX2 CPU). Every global or weak symbol must
#   - carry the configuration's ABI namespace (TAG, e.g. abi_v0_2_0_dispatch_avx2): all of
#     normkit's own functions, strictly -- a normkit symbol without it fails;
#   - or be xsimd's code for the TU's own arch (ARCH, e.g. fma3<xsimd::avx2>): it runs only
#     inside kernels of that arch;
#   - or be the test's own strong definition (probe_*, a T symbol: never folded) or data
#     (DW.ref.__gxx_personality_v0, V/u objects: data cannot execute an instruction);
#   - or, for what normkit cannot rename (xsimd's and the standard library's inline functions
#     that the TU emits out of line, clang's __clang_call_terminate), contain no instruction
#     beyond what every caller's CPU has, checked in the disassembly (x86 only):
#       * xsimd code of an AVX-512 arch (xsimd::avx512*, simd_avx512_bool_register): any
#         encoding; it runs only inside AVX-512 kernels. (A user's AVX512F-only xsimd code could
#         bind to a copy using BW/DQ; no CPU sold since 2019 has F without BW/DQ.)
#       * xsimd code of an AVX/AVX2 arch (e.g. simd_register<float, xsimd::avx>, emitted by AVX2
#         TUs because xsimd's fma3<avx2> batch derives from it): VEX allowed, no EVEX (first
#         opcode byte 0x62), so an AVX-512 TU's copy is safe on an AVX2 CPU;
#       * everything else (std::, sse archs, no arch): neither VEX (0xc4/0xc5) nor EVEX, nor
#         popcnt/lzcnt/movbe/crc32, i.e. plain x86-64 + SSE2: safe on any CPU.
#     On other platforms (NEON) foreign code must name an xsimd Arm arch.
#   cmake -DNM=<nm> -DOBJDUMP=<objdump> -DTAG=<abi namespace> -DARCH=<xsimd arch>
#         -DOBJECTS=<obj,...> [-DX86=ON] -P check_isa_symbols.cmake
cmake_minimum_required(VERSION 3.25)  # policies for -P mode (CMP0007: keep empty list elements)
string(REPLACE "," ";" OBJECTS "${OBJECTS}")
set(bad "")
set(total 0)
set(foreign_checked 0)

# Disassembles the function `mangled` of `obj` and sorts its instructions by their first opcode
# byte after legacy prefixes: <out_vex>, <out_evex>, <out_ext> get the offending ones.
function(_disassembly_classes obj mangled out_vex out_evex out_ext out_found)
  # An inline function sits in its own COMDAT section, .text.<mangled>: disassembling only that
  # section keeps this fast on a large -O0 object; other functions are looked up in the file.
  execute_process(COMMAND ${OBJDUMP} -j ".text.${mangled}" "--disassemble=${mangled}" ${obj}
    OUTPUT_VARIABLE dis RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0 OR NOT dis MATCHES "\n +[0-9a-f]+:\t")
    # g++'s complete-object constructor/destructor (C1/D1) is an alias of the base-object one
    # (C2/D2), in the latter's section.
    string(REGEX REPLACE "([CD])1E" "\\12E" base "${mangled}")
    execute_process(COMMAND ${OBJDUMP} -j ".text.${base}" -d ${obj} OUTPUT_VARIABLE dis RESULT_VARIABLE rc
      ERROR_QUIET)
  endif()
  if(NOT rc EQUAL 0 OR NOT dis MATCHES "\n +[0-9a-f]+:\t")
    execute_process(COMMAND ${OBJDUMP} "--disassemble=${mangled}" ${obj} OUTPUT_VARIABLE dis RESULT_VARIABLE rc)
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "objdump failed on ${obj}")
  endif()
  set(vex "")
  set(evex "")
  set(ext "")
  set(found OFF)
  string(REPLACE ";" "," dis "${dis}")
  string(REPLACE "[" "(" dis "${dis}")
  string(REPLACE "]" ")" dis "${dis}")
  string(REPLACE "\n" ";" lines "${dis}")
  foreach(line IN LISTS lines)
    # "   c:\tc5 fc 28 00          \tvmovaps (%rax),%ymm0"; continuation lines have no mnemonic.
    if(line MATCHES "^ +[0-9a-f]+:\t([0-9a-f ]+)\t(.*)$")
      set(found ON)
      set(bytes "${CMAKE_MATCH_1}")
      set(insn "${CMAKE_MATCH_2}")
      string(REGEX REPLACE "^((26|2e|36|3e|64|65|66|67|f0|f2|f3) )+" "" bytes "${bytes}")
      if(bytes MATCHES "^62 ")
        string(APPEND evex "      ${insn}\n")
      elseif(bytes MATCHES "^c[45] ")
        string(APPEND vex "      ${insn}\n")
      elseif(insn MATCHES "^(popcnt|lzcnt|movbe|crc32)")
        string(APPEND ext "      ${insn}\n")
      endif()
    endif()
  endforeach()
  set(${out_vex} "${vex}" PARENT_SCOPE)
  set(${out_evex} "${evex}" PARENT_SCOPE)
  set(${out_ext} "${ext}" PARENT_SCOPE)
  set(${out_found} ${found} PARENT_SCOPE)
endfunction()

foreach(obj IN LISTS OBJECTS)
  # The same symbol table twice, unsorted (-p), demangled and not: line i is one symbol.
  execute_process(COMMAND ${NM} -p -C --defined-only ${obj} OUTPUT_VARIABLE demangled RESULT_VARIABLE rc1)
  execute_process(COMMAND ${NM} -p --defined-only ${obj} OUTPUT_VARIABLE mangled RESULT_VARIABLE rc2)
  if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
    message(FATAL_ERROR "nm failed on ${obj}")
  endif()
  foreach(var demangled mangled)  # list-safe: an unbalanced '[' would join list elements
    string(REPLACE ";" "," ${var} "${${var}}")
    string(REPLACE "[" "(" ${var} "${${var}}")
    string(REPLACE "]" ")" ${var} "${${var}}")
    string(REPLACE "\n" ";" ${var} "${${var}}")
  endforeach()
  list(LENGTH demangled n)
  list(LENGTH mangled n2)
  if(NOT n EQUAL n2)
    message(FATAL_ERROR "nm listed ${obj} differently with and without -C")
  endif()
  set(count 0)
  foreach(line mline IN ZIP_LISTS demangled mangled)
    if(NOT line MATCHES "^[0-9a-f]* ?([TWVui]) (.*)$")
      continue()
    endif()
    set(kind "${CMAKE_MATCH_1}")
    set(sym "${CMAKE_MATCH_2}")
    math(EXPR count "${count} + 1")
    string(FIND "${sym}" "${TAG}" has_tag)
    if(NOT has_tag EQUAL -1)
      continue()
    endif()
    if((kind STREQUAL "T" AND sym MATCHES "^probe_") OR kind MATCHES "^[Vu]$" OR sym MATCHES "^DW\\.ref\\.")
      continue()
    endif()
    # Whose function is it: the name before the first "::", after any return type.
    string(REGEX REPLACE "\\(.*$" "" name "${sym}")
    string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_]*)::" owner "${name}")
    if(CMAKE_MATCH_1 STREQUAL "normkit")
      string(APPEND bad "  ${sym}\n    normkit's own function outside ${TAG}\n")
      continue()
    endif()
    # xsimd's code for this TU's own arch: it runs only inside kernels of that arch.
    string(FIND "${sym}" "xsimd::${ARCH}" own_arch)
    if(NOT own_arch EQUAL -1)
      continue()
    endif()
    math(EXPR foreign_checked "${foreign_checked} + 1")
    if(NOT X86)
      if(NOT sym MATCHES "xsimd::(neon|neon64)[>,]")
        string(APPEND bad "  ${sym}\n    not normkit's, and no xsimd Arm arch in its name\n")
      endif()
      continue()
    endif()
    string(REGEX REPLACE "^[0-9a-f]* ?[TWVui] " "" msym "${mline}")
    _disassembly_classes(${obj} "${msym}" vex evex ext found)
    if(NOT found)
      string(APPEND bad "  ${sym}\n    not normkit's, and its code could not be disassembled\n")
    elseif(sym MATCHES "xsimd::avx512|simd_avx512_bool_register")
      # AVX-512 kernels only.
    elseif(sym MATCHES "xsimd::(avx|avx2|fma3<xsimd::avx2?>)[>,]")
      if(evex)
        string(APPEND bad "  ${sym}\n    xsimd AVX/AVX2 code with AVX-512 (EVEX) instructions:\n${evex}")
      endif()
    elseif(vex OR evex OR ext)
      string(APPEND bad "  ${sym}\n    shared code with instructions beyond x86-64/SSE2:\n${vex}${evex}${ext}")
    endif()
  endforeach()
  message(STATUS "${obj}: ${count} global/weak symbols checked for '${TAG}'")
endforeach()
message(STATUS "${foreign_checked} symbols of xsimd or std:: of another arch were checked by their code")
if(bad)
  message(FATAL_ERROR "symbols another configuration could bind to (SIGILL through COMDAT folding):\n${bad}")
endif()
