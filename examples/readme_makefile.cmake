# SPDX-License-Identifier: MIT
# example_makefile_in_readme: the README's "Without CMake" block is examples/Makefile verbatim
# (from its first variable line on), so the lines a reader copies are the lines ctest runs.
#   cmake -DREADME=<README.md> -DMAKEFILE=<examples/Makefile> -P readme_makefile.cmake
file(READ ${README} readme)
file(READ ${MAKEFILE} makefile)
string(FIND "${readme}" "```make\n" start)
if(start EQUAL -1)
  message(FATAL_ERROR "README has no ```make block")
endif()
math(EXPR start "${start} + 8")
string(SUBSTRING "${readme}" ${start} -1 block)
string(FIND "${block}" "```" stop)
string(SUBSTRING "${block}" 0 ${stop} block)
string(FIND "${makefile}" "NORMKIT ?=" body)
string(SUBSTRING "${makefile}" ${body} -1 makefile)
if(NOT block STREQUAL makefile)
  message(FATAL_ERROR "README's make block differs from examples/Makefile:\n${block}\n---\n${makefile}")
endif()
message("README quotes examples/Makefile verbatim")
