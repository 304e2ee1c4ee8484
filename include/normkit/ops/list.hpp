// SPDX-License-Identifier: MIT
// normkit: the op list. The runtime table (dispatch/table.hpp), the build's selection
// (dispatch/selection.hpp) and the tests iterate over it; a new op is its description header
// here and its name in `ops`, and its SIMD half in list_simd.hpp (docs/architecture.md).
#pragma once

#include "../core/type_list.hpp"
#include "add_norm.hpp"
#include "convert.hpp"
#include "layer_norm.hpp"
#include "layer_norm_backward.hpp"
#include "norm_quant.hpp"
#include "norm_static_quant.hpp"
#include "norm_stats.hpp"
#include "quantize.hpp"
#include "residual_add.hpp"
#include "rms_norm.hpp"
#include "rms_norm_backward.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

using ops =
    type_list<rms_norm_op, layer_norm_op, convert_op, residual_add_op, norm_stats_op, rms_norm_backward_op,
              layer_norm_backward_op, quantize_op, rms_norm_static_quant_op, layer_norm_static_quant_op>;

// The composite ops (core/op.hpp): stages of the kernel ops above, so no table entries and no SIMD
// half of their own; tests/test_add_norm.cpp, test_quant.cpp, test_add_norm_quant.cpp and the
// bench's fused rows cover them (nothing iterates this list: it is their catalogue).
using composite_ops = type_list<add_rms_norm_op, add_layer_norm_op, rms_norm_quant_op, layer_norm_quant_op,
                                add_rms_norm_quant_op, add_layer_norm_quant_op>;

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
