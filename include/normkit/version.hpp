// SPDX-License-Identifier: MIT
// normkit: the library version (defined in core/version.hpp).
#pragma once

#include "core/version.hpp"
