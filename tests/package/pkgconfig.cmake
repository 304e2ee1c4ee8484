# SPDX-License-Identifier: MIT
# package_pkgconfig: compile the consumer with nothing but the compiler and
# `pkg-config --cflags --libs normkit` against the installed prefix, then run it.
#   cmake -DPKG_CONFIG=<pkg-config> -DPREFIX=<install prefix> -DCXX=<compiler> -DSOURCE=<main.cpp>
#         -DWORK=<dir> -P pkgconfig.cmake
file(GLOB_RECURSE pc_files ${PREFIX}/normkit.pc)
if(NOT pc_files)
  message(FATAL_ERROR "no normkit.pc under ${PREFIX}")
endif()
list(GET pc_files 0 pc)
get_filename_component(pc_dir ${pc} DIRECTORY)
execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir}
    ${PKG_CONFIG} --cflags --libs normkit
  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
message("pkg-config --cflags --libs normkit: ${flags}")
if(NOT flags MATCHES "-DNORMKIT_RUNTIME_DISPATCH" OR NOT flags MATCHES "-lnormkit_dispatch")
  message(FATAL_ERROR "normkit.pc does not give runtime dispatch")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${CXX} -std=c++17 -O2 ${SOURCE} ${flags} -o ${WORK}/consumer COMMAND_ECHO STDOUT
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${WORK}/consumer COMMAND_ERROR_IS_FATAL ANY)
