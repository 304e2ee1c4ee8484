// SPDX-License-Identifier: MIT
// normkit: the RMSNorm backward op's SIMD rows, on the backward row machinery of
// simd/backward_rows.hpp.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include "../core/abi.hpp"
#include "../core/op.hpp"
#include "../simd/backward_rows.hpp"
#include "../simd/diagnostics.hpp"
#include "rms_norm_backward.hpp"
#include "rms_norm_simd.hpp"  // the forward's row: centring, statistics

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <>
struct simd_rows<rms_norm_backward_op> {
  template <class Arch, class Knobs, class T>
  static void rows(const rms_norm_backward_op::args<T>& a) {
    backward_simd_rows<Arch, rms_norm_simd_row>(a.dy, a.x, a.gain, a.rstd, static_cast<const float*>(nullptr),
                                                a.dx, a.dgamma, static_cast<float*>(nullptr), a.rows, a.cols,
                                                a.dy_stride, a.x_stride, a.dx_stride, a.stream, a.far_inputs,
                                                a.rows_after, a.work, a.group_rows);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
