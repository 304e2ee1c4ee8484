// SPDX-License-Identifier: MIT
// normkit: the 8-bit output types e4m3 and e5m2 and the saturating int8 conversion (defined in
// core/fp8.hpp).
#pragma once

#include "core/fp8.hpp"
