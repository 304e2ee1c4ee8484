# SPDX-License-Identifier: MIT
# Dependencies: the system package first (find_package); where it is missing and the network
# allows, FetchContent at a pinned version. Debian 12: apt-get install libxsimd-dev
# libeigen3-dev libgtest-dev libbenchmark-dev.
include(FetchContent)

set(NORMKIT_XSIMD_INCLUDE_DIR "" CACHE PATH
  "xsimd headers without a CMake package: the directory that holds xsimd/xsimd.hpp (empty: find_package)")

# xsimd (normkitXsimd.cmake says where from); if it is nowhere, FetchContent at a pinned version.
macro(normkit_find_xsimd)
  include(normkitXsimd)
  normkit_locate_xsimd(_nk_xsimd_error GLOBAL)
  if(_nk_xsimd_error)
    message(FATAL_ERROR "normkit: ${_nk_xsimd_error}")
  endif()
  if(NOT TARGET xsimd)
    message(STATUS "normkit: xsimd not found, fetching 8.1.0")
    FetchContent_Declare(xsimd
      URL https://github.com/xtensor-stack/xsimd/archive/refs/tags/8.1.0.tar.gz)
    FetchContent_MakeAvailable(xsimd)
  elseif(xsimd_VERSION)
    message(STATUS "normkit: xsimd ${xsimd_VERSION}")
  endif()
endmacro()

macro(normkit_find_gtest)
  if(NOT TARGET GTest::gtest_main)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    if(EXISTS /usr/src/googletest/CMakeLists.txt)
      # Debian ships the sources; cross builds compile them for the target.
      FetchContent_Declare(googletest SOURCE_DIR /usr/src/googletest FIND_PACKAGE_ARGS NAMES GTest)
    else()
      FetchContent_Declare(googletest
        URL https://github.com/google/googletest/archive/refs/tags/release-1.12.1.tar.gz
        FIND_PACKAGE_ARGS NAMES GTest)
    endif()
    FetchContent_MakeAvailable(googletest)
  endif()
endmacro()

macro(normkit_find_benchmark)
  if(NOT TARGET benchmark::benchmark)
    set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
    set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
    FetchContent_Declare(benchmark
      URL https://github.com/google/benchmark/archive/refs/tags/v1.7.1.tar.gz
      FIND_PACKAGE_ARGS 1.7 NAMES benchmark)
    FetchContent_MakeAvailable(benchmark)
  endif()
endmacro()

macro(normkit_find_eigen)
  if(NOT TARGET Eigen3::Eigen)
    FetchContent_Declare(Eigen3
      URL https://gitlab.com/libeigen/eigen/-/archive/3.4.0/eigen-3.4.0.tar.gz
      FIND_PACKAGE_ARGS 3.4 NO_MODULE)
    set(EIGEN_BUILD_DOC OFF CACHE BOOL "" FORCE)
    set(BUILD_TESTING OFF)
    FetchContent_MakeAvailable(Eigen3)
  endif()
endmacro()
