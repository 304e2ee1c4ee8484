// SPDX-License-Identifier: MIT
// normkit: the LayerNorm backward op -- dx of a block of rows and their dgamma / dbeta block
// partials (docs/contract.md, "Backward"): its arguments, its validation rule, its type slots and
// its scalar reference (core/backward.hpp). The SIMD rows are in layer_norm_backward_simd.hpp;
// the public entry points (layer_norm_backward.hpp) fold the partials.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/backward.hpp"
#include "../core/op.hpp"
#include "../core/policy.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/validate.hpp"
#include "layer_norm.hpp"         // reference::layer_norm_row_stats
#include "rms_norm_backward.hpp"  // impl::check_grad_strides

namespace normkit {

// The argument bundle (its namespace: ops/rms_norm.hpp): as rms_norm_backward_args, plus the
// saved mean (rows floats) and dbeta's block partials (or null).
namespace NORMKIT_TABLE_NAMESPACE {
template <class T>
struct layer_norm_backward_args {
  const T* dy;
  const T* x;
  const float* gain;
  const float* mean;
  const float* rstd;
  T* dx;
  float* dgamma;
  float* dbeta;
  std::size_t rows, cols;
  std::size_t dy_stride, x_stride, dx_stride;
  bool stream;                 // a hint: dx is large enough for streaming stores (no effect on the bits)
  float* work = nullptr;       // grad_work_floats<T>(cols) floats (core/backward.hpp)
  std::size_t group_rows = 2;  // a hint: rows per output-pass group, 2 or 4 (no effect on the bits)
  bool far_inputs = false;     // a hint: the whole call's dy and x are far (core/tuning.hpp, prefetches)
  std::size_t rows_after = 0;  // rows of the caller's dy and x after these, which prefetches may reach
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

struct layer_norm_backward_op {
  static constexpr const char* name = "layer_norm_backward";
  using slots = type_list<input_types>;  // T
  using knobs = no_knobs;
  static constexpr bool centered = true;
  template <class T>
  using args = NORMKIT_TABLE_NAMESPACE::layer_norm_backward_args<T>;
  template <class Knobs, class T>
  using canonical = Knobs;
  template <class Knobs, class T>
  using narrows = type_list<T>;

  // invalid_stride, then the buffers (core/validate.hpp); dx may be dy exactly. The parameter
  // gradients hold grad_rows x cols floats: the block partials here, 1 row for the folded call.
  template <class T>
  static status validate(const args<T>& a) {
    return check(a, grad_blocks(a.rows), impl::operand_of(a.gain, 1, a.cols, a.cols, true));
  }
  // gain: the operand the caller gave as gamma (its own storage type).
  template <class T>
  static status check(const args<T>& a, std::size_t grad_rows, const impl::operand& gain) {
    if (const status st = impl::check_grad_strides(a.cols, a.dy_stride, a.x_stride, a.dx_stride);
        st != status::ok)
      return st;
    if (empty(a))
      return status::ok;
    const impl::operand in[] = {impl::operand_of(a.dy, a.rows, a.cols, a.dy_stride),
                                impl::operand_of(a.x, a.rows, a.cols, a.x_stride), gain,
                                impl::operand_of(a.mean, 1, a.rows, a.rows),
                                impl::operand_of(a.rstd, 1, a.rows, a.rows)};
    const impl::operand out[] = {impl::operand_of(a.dx, a.rows, a.cols, a.dx_stride),
                                 impl::operand_of(a.dgamma, grad_rows, a.cols, a.cols, true),
                                 impl::operand_of(a.dbeta, grad_rows, a.cols, a.cols, true)};
    return impl::check_operands(in, out, {0, -1, -1});
  }
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }

  // contract (LayerNorm backward, the normalized value): a row is centred as its forward centred
  // it -- the forward's statistics replayed at scale 1 (eps does not enter them there), taken when
  // K + m is the saved mean -- so that n_i is the forward's own bit for bit; any other saved mean
  // (another framework's, a rescaled row's, a NaN) is re-centred on.
  template <class T>
  static centring centre(const T* x, std::size_t cols, float mean) {
    const impl::row_moments st = normkit::reference::layer_norm_row_stats(x, cols, 0.0f);
    if (!st.nan_row && st.scale == 1.0f && st.shift + st.mean == mean)
      return {st.shift, st.mean};
    return normkit::reference::recentred(x, cols, mean);
  }

  // The gain row already holds the policy's offset: the plain knob set.
  template <class Policy, class T>
  static void reference(const args<T>& a) {
    normkit::reference::backward_rows<policy<rounding::once>, layer_norm_backward_op>(
        a.dy, a.x, a.gain, a.rstd, a.mean, a.dx, a.dgamma, a.dbeta, a.rows, a.cols, a.dy_stride, a.x_stride,
        a.dx_stride);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
