// SPDX-License-Identifier: MIT
// normkit: which ISA path runs: active_isa, set_isa, isa_available, NORMKIT_ISA (defined in
// dispatch/state.hpp).
#pragma once

#include "dispatch/state.hpp"
