# SPDX-License-Identifier: MIT
# Two structural rules of the sources (docs/architecture.md), checked by ctest:
# 1. Layers only look down. A header of include/normkit/ includes only headers of its own layer or
#    of a lower one: core/ (0: contract math, no xsimd) < simd/ (1) < ops/ (2) < dispatch/ (3) <
#    the public faces at the top level (4).
# 2. Comments and docs cite files of this repository only: no source names a design document that
#    lives outside it.
# Usage: cmake -DROOT=<source dir> -P check_sources.cmake
set(rank_core 0)
set(rank_simd 1)
set(rank_ops 2)
set(rank_dispatch 3)
set(rank_top 4)

function(layer_of path out)  # path relative to include/normkit
  if(path MATCHES "^(core|simd|ops|dispatch)/[^/]+$")
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  elseif(path MATCHES "^[^/]+$")
    set(${out} top PARENT_SCOPE)
  else()
    message(SEND_ERROR "include/normkit/${path}: not in a layer folder (core, simd, ops, dispatch, top level)")
    set(${out} top PARENT_SCOPE)
  endif()
endfunction()

set(base ${ROOT}/include/normkit)
file(GLOB_RECURSE headers RELATIVE ${base} ${base}/*.hpp)
set(failures 0)
foreach(h IN LISTS headers)
  layer_of(${h} from)
  get_filename_component(dir ${h} DIRECTORY)
  file(STRINGS ${base}/${h} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
    if(dir)
      get_filename_component(target "${base}/${dir}/${inc}" ABSOLUTE)
    else()
      get_filename_component(target "${base}/${inc}" ABSOLUTE)
    endif()
    file(RELATIVE_PATH rel ${base} ${target})
    if(NOT EXISTS ${target})
      message(SEND_ERROR "${h}: includes \"${inc}\", which does not exist")
      math(EXPR failures "${failures} + 1")
      continue()
    endif()
    layer_of(${rel} to)
    if(rank_${to} GREATER rank_${from})
      message(SEND_ERROR "${h} (layer ${from}) includes ${rel} (layer ${to}): an include that runs upward")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
endforeach()

file(GLOB_RECURSE sources ${ROOT}/include/*.hpp ${ROOT}/tests/*.cpp ${ROOT}/tests/*.hpp ${ROOT}/tests/*.py
     ${ROOT}/tests/*.cmake ${ROOT}/tests/*.txt ${ROOT}/bench/*.cpp ${ROOT}/bench/*.hpp ${ROOT}/bench/*.py
     ${ROOT}/bench/*.md ${ROOT}/cmake/* ${ROOT}/examples/*.cpp ${ROOT}/examples/*.hpp ${ROOT}/docs/*.md
     ${ROOT}/README.md ${ROOT}/CMakeLists.txt)
list(FILTER sources EXCLUDE REGEX "/tests/check_sources\\.cmake$")
foreach(f IN LISTS sources)
  file(STRINGS ${f} hits REGEX "(DESIGN|PERF|TOOLCHAIN|STYLE)\\.md")
  foreach(hit IN LISTS hits)
    message(SEND_ERROR "${f}: cites a document outside the repository: ${hit}")
    math(EXPR failures "${failures} + 1")
  endforeach()
endforeach()

list(LENGTH headers n)
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} structural violation(s) in ${n} headers")
endif()
message(STATUS "${n} headers: every include looks down or sideways; no citation leaves the repository")
