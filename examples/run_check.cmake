# SPDX-License-Identifier: MIT
# Runs one program and checks its exit status, stdout and stderr (ctest alone checks one of them).
#
#   cmake -DPROGRAM=<exe> [-DEMULATOR=<emulator|args>] [-DARGS=<a|b|c>] [-DRC=<exit status, default 0>]
#         [-DOUT=<regex stdout must match>] [-DNOT_OUT=<regex it must not match>]
#         [-DERR=<regex stderr must match>] [-DJSON_VERDICT=<regex>] [-DERROR_LINE=1] -P run_check.cmake
# ERROR_LINE: the failure contract of normkit-inspect -- nothing on stdout, exactly one line on
# stderr.
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" EMULATOR "${EMULATOR}")  # e.g. qemu-aarch64|-L|<sysroot>
execute_process(COMMAND ${EMULATOR} ${PROGRAM} ${args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit status: ${rc}\n--- stdout:\n${out}--- stderr:\n${err}---")
if(NOT DEFINED RC)
  set(RC 0)
endif()
if(NOT rc STREQUAL "${RC}")
  message(FATAL_ERROR "expected exit status ${RC}, got ${rc}")
endif()
if(DEFINED OUT AND NOT out MATCHES "${OUT}")
  message(FATAL_ERROR "stdout does not match: ${OUT}")
endif()
if(DEFINED NOT_OUT AND out MATCHES "${NOT_OUT}")
  message(FATAL_ERROR "stdout matches what it must not: ${NOT_OUT}")
endif()
if(DEFINED ERR AND NOT err MATCHES "${ERR}")
  message(FATAL_ERROR "stderr does not match: ${ERR}")
endif()
if(DEFINED JSON_VERDICT)  # stdout must parse as JSON, with a "verdict" string matching this
  string(JSON verdict ERROR_VARIABLE json_error GET "${out}" verdict)
  if(json_error)
    message(FATAL_ERROR "stdout is not the expected JSON: ${json_error}")
  endif()
  if(NOT verdict MATCHES "${JSON_VERDICT}")
    message(FATAL_ERROR "JSON verdict '${verdict}' does not match: ${JSON_VERDICT}")
  endif()
endif()
if(ERROR_LINE)
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "a failing run printed on stdout")
  endif()
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines n)
  if(NOT n EQUAL 1 OR NOT err MATCHES "\n$")
    message(FATAL_ERROR "stderr must be exactly one line, got ${n} newlines")
  endif()
endif()
message("PASSED")
