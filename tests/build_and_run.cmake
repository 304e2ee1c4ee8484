# SPDX-License-Identifier: MIT
# ctest -P script: compiles one test source with a compiler other than the build's (CXX) and the
# flags under test (FLAGS, "|"-separated), links gtest (LIBS, "|"-separated), runs the binary.
# Used for the corpus hash under clang's unsafe-math flags (tests/CMakeLists.txt).
string(REPLACE "|" ";" FLAGS "${FLAGS}")
string(REPLACE "|" ";" LIBS "${LIBS}")
execute_process(COMMAND ${CXX} ${FLAGS} ${SOURCE} -o ${OUT} ${LIBS}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling ${SOURCE} with ${CXX} ${FLAGS} failed:\n${err}")
endif()
execute_process(COMMAND ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OUT} failed (${rc})")
endif()
