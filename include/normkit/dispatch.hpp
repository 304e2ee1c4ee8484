// SPDX-License-Identifier: MIT
// normkit: which ISA path runs: active_isa, set_isa, isa_available, NORMKIT_ISA (defined in
// dispatch/state.hpp); when outputs are streamed: stream_min_bytes, set_stream_min_bytes,
// NORMKIT_STREAM_MIN_BYTES (dispatch/streaming.hpp).
#pragma once

#include "dispatch/state.hpp"
#include "dispatch/streaming.hpp"
