# SPDX-License-Identifier: MIT
# Runs a program (optionally after building it with the README's Makefile) and checks that it
# reports a SIMD ISA when this CPU has AVX2 + FMA + F16C, read from /proc/cpuinfo independently of
# normkit's own detection; on a CPU without them it prints SKIPPED (the test's skip expression).
#
#   cmake -DPROGRAM=<exe> [-DMAKEFILE=<Makefile> -DMAKE=<make> -DCXX=<compiler> -DNORMKIT=<src>
#         -DSRC=<dir of quickstart.cpp> -DWORK=<empty build dir> [-DMAKE_ARGS=<VAR=value;...>]]
#         -P check_isa.cmake
if(MAKEFILE)
  file(REMOVE_RECURSE ${WORK})
  file(MAKE_DIRECTORY ${WORK})
  execute_process(COMMAND ${MAKE} -f ${MAKEFILE} CXX=${CXX} NORMKIT=${NORMKIT} SRC=${SRC} ${MAKE_ARGS}
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc COMMAND_ECHO STDOUT)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "make failed (${rc})")
  endif()
  set(PROGRAM ${WORK}/quickstart)
endif()
execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
set(flags "")
if(EXISTS /proc/cpuinfo)
  file(STRINGS /proc/cpuinfo flags REGEX "^flags" LIMIT_COUNT 1)
endif()
if(flags MATCHES " avx2( |$)" AND flags MATCHES " fma( |$)" AND flags MATCHES " f16c( |$)")
  if(NOT out MATCHES "ISA: avx(2|512|512bf16|512fp16)\\)")
    message(FATAL_ERROR "this CPU has AVX2, FMA and F16C but the program did not run a SIMD ISA")
  endif()
  message("SIMD OK: the CPU has AVX2 and the program ran a SIMD ISA")
else()
  message("SKIPPED: this CPU lacks AVX2/FMA/F16C, so the scalar path is expected")
endif()
