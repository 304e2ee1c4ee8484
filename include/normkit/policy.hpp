// SPDX-License-Identifier: MIT
// normkit: rounding policies and model presets (defined in core/policy.hpp).
#pragma once

#include "core/policy.hpp"
