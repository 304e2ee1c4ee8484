# ctest script: no per-ISA object may define a linkable symbol that baseline code could bind to
# (TOOLCHAIN.md, X2: the linker keeps one copy of a COMDAT symbol; an AVX-512 copy of a shared
# helper is a SIGILL on an AVX2 CPU). Every global or weak symbol must carry the ISA's xsimd
# arch in its name, except the table accessor itself.
#   cmake -DNM=<nm> -DTAG=<arch substring> -DOBJECTS=<obj;...> -P check_isa_symbols.cmake
string(REPLACE "," ";" OBJECTS "${OBJECTS}")
set(bad "")
foreach(obj IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} -C --defined-only ${obj} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${obj}")
  endif()
  string(REPLACE "\n" ";" lines "${out}")
  set(count 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-f]+ [TWVui] (.*)$")
      set(sym "${CMAKE_MATCH_1}")
      math(EXPR count "${count} + 1")
      string(FIND "${sym}" "${TAG}" has_tag)
      if(has_tag EQUAL -1 AND NOT sym MATCHES "^(DW\\.ref\\.|normkit::detail::isa_table_)")
        string(APPEND bad "  ${sym}\n")
      endif()
    endif()
  endforeach()
  message(STATUS "${obj}: ${count} global/weak symbols checked for '${TAG}'")
endforeach()
if(bad)
  message(FATAL_ERROR "symbols shared with other ISAs (possible SIGILL through COMDAT folding):\n${bad}")
endif()
