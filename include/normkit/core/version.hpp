// SPDX-License-Identifier: MIT
// normkit: the library version, in one place (the top-level CMakeLists.txt parses it from here).
// It is also part of every ABI namespace (core/abi.hpp), so that two normkit versions linked
// into one process never bind to each other's functions or kernels.
#pragma once

#define NORMKIT_VERSION_MAJOR 0
#define NORMKIT_VERSION_MINOR 2
#define NORMKIT_VERSION_PATCH 0
