// SPDX-License-Identifier: MIT
// normkit: the SIMD half of every op of ops/list.hpp, for the per-ISA translation units and
// static mode.
#pragma once

#include "convert_simd.hpp"
#include "layer_norm_backward_simd.hpp"
#include "layer_norm_simd.hpp"
#include "list.hpp"
#include "norm_static_quant_simd.hpp"
#include "norm_stats_simd.hpp"
#include "quantize_simd.hpp"
#include "residual_add_simd.hpp"
#include "rms_norm_backward_simd.hpp"
#include "rms_norm_simd.hpp"
