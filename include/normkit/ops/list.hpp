// SPDX-License-Identifier: MIT
// normkit: the op list. The runtime table (dispatch/table.hpp), the build's selection
// (dispatch/selection.hpp) and the tests iterate over it; a new op is its description header
// here and its name in `ops`, and its SIMD half in list_simd.hpp (docs/architecture.md).
#pragma once

#include "../core/type_list.hpp"
#include "convert.hpp"
#include "layer_norm.hpp"
#include "quantize.hpp"
#include "rms_norm.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

using ops = type_list<rms_norm_op, layer_norm_op, convert_op, quantize_op>;

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
