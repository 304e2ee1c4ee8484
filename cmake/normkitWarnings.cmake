# SPDX-License-Identifier: MIT
# Warnings as errors on the project's own targets only; never forced on consumers.
add_library(normkit_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(normkit_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror)
endif()
