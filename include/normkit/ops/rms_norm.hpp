// SPDX-License-Identifier: MIT
// normkit: the RMSNorm op -- its arguments, its validation rule, its type slots and its scalar
// reference. The SIMD rows are in rms_norm_simd.hpp.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/ahead.hpp"
#include "../core/epilogue.hpp"
#include "../core/op.hpp"
#include "../core/policy.hpp"
#include "../core/scalar_rows.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/validate.hpp"

namespace normkit {

// The argument bundle. It crosses the runtime table by pointer, so the dispatching translation
// unit and the per-ISA ones must name one type: it lives in the version's table namespace, which
// holds types only (core/abi.hpp). x: rows x cols, rows x_stride apart; gamma: cols values or
// null (g = 1); y like x.
namespace NORMKIT_TABLE_NAMESPACE {
template <class In, class W, class Out>
struct rms_norm_args {
  const In* x;
  const W* gamma;
  Out* y;
  std::size_t rows, cols;
  float eps;
  std::size_t x_stride, y_stride;
  // Head views (rms_norm_heads / layer_norm_heads): `heads` rows per token, row (t, h) at
  // t * x_stride + h * x_head_stride (y likewise), gains at + h * gain_head_stride (0: shared).
  std::size_t heads = 1, x_head_stride = 0, y_head_stride = 0, gain_head_stride = 0;
  bool stream = false;    // streaming stores, decided for the whole call (dispatch/streaming.hpp)
  rows_ahead ahead = {};  // a composite's next rows, prefetched (core/ahead.hpp); empty for callers
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace reference {

// One RMSNorm row (docs/contract.md):
//   s = csum(f(x_i)^2); ms = s / float(d); inv = 1 / sqrt(ms + eps); n_i = f(x_i) * inv; policy.
// A row with a NaN or Inf gives canonical NaNs; a finite row whose sum of squares overflows is
// recomputed on x * 2^-e.
// One RMSNorm row's statistics: s = csum(f(x_i)^2), or on the overflow path csum((f(x_i) * 2^-e)^2)
// with its scale and eps; nan_row for a row with a NaN or Inf.
template <class In>
impl::row_moments rms_norm_row_stats(const In* x, std::size_t cols, float eps) {
  impl::row_moments st{impl::sum_squares(x, cols, 1.0f), 0.0f, 0.0f, 1.0f, eps, false};
  if (detail::needs_rescale<detail::scalar_tag>(st.sum, static_cast<float>(cols), eps)) {
    if (!detail::all_finite<detail::scalar_tag>(x, cols))
      return st.nan_row = true, st;
    const detail::overflow_scale o =
        detail::make_overflow_scale<detail::scalar_tag>(detail::max_abs<detail::scalar_tag>(x, cols), eps);
    st.scale = o.scale;
    st.eps = o.eps;
    st.sum = impl::sum_squares(x, cols, st.scale);
  }
  return st;
}

// One RMSNorm row (docs/contract.md):
//   s = csum(f(x_i)^2); ms = s / float(d); inv = 1 / sqrt(ms + eps); n_i = f(x_i) * inv; policy.
// A row with a NaN or Inf gives canonical NaNs; a finite row whose sum of squares overflows is
// recomputed on x * 2^-e.
template <class Policy, class In, class W, class Y>
void rms_norm_row(const In* x, const W* gamma, Y y, std::size_t cols, float eps) {
  using Knobs = detail::knobs_of<Policy>;
  const impl::row_moments st = rms_norm_row_stats(x, cols, eps);
  if (st.nan_row)
    return impl::fill_nan_row(y, cols);
  const float factor = detail::row_factor<Knobs, impl::scalar_ops>(st.sum, static_cast<float>(cols), st.eps);
  impl::write_row<Knobs, In, W>(gamma, static_cast<const W*>(nullptr), y, cols, factor,
                                [&](std::size_t i) { return to_float(x[i]) * st.scale; });
}

}  // namespace reference

namespace detail {

struct rms_norm_op : norm_op {
  static constexpr const char* name = "rms_norm";
  template <class In, class W, class Out>
  using args = NORMKIT_TABLE_NAMESPACE::rms_norm_args<In, W, Out>;

  // invalid_eps, invalid_stride, then the buffers (core/validate.hpp); y may be x exactly.
  template <class In, class W, class Out>
  static status validate(const args<In, W, Out>& a) {
    if (const status st = impl::check_norm_view(a.eps, a.rows, a.heads, a.cols, a.x_stride, a.x_head_stride,
                                                a.y_stride, a.y_head_stride, a.gain_head_stride);
        st != status::ok)
      return st;
    if (empty(a))
      return status::ok;
    const std::size_t gain_heads = a.gain_head_stride ? a.heads : 1;
    const impl::operand in[] = {
        impl::operand_of(a.x, a.rows, a.heads, a.cols, a.x_stride, a.x_head_stride),
        impl::operand_of(a.gamma, 1, gain_heads, a.cols, a.cols, a.gain_head_stride, true)};
    const impl::operand out[] = {impl::operand_of(a.y, a.rows, a.heads, a.cols, a.y_stride, a.y_head_stride)};
    return impl::check_operands(in, out, {0});
  }

  // Rows are independent (contract: each row's statistics are its own): rows [r0, r0 + n).
  template <class In, class W, class Out>
  static args<In, W, Out> slice(const args<In, W, Out>& a, std::size_t r0, std::size_t n) {
    args<In, W, Out> s = a;
    s.x = a.x + r0 * a.x_stride;
    s.y = a.y + r0 * a.y_stride;
    s.rows = n;
    return s;
  }

  template <class Policy, class In, class W, class Out>
  static void reference(const args<In, W, Out>& a) {
    for (std::size_t r = 0; r < a.rows; ++r)
      for (std::size_t h = 0; h < a.heads; ++h)
        normkit::reference::rms_norm_row<Policy>(a.x + r * a.x_stride + h * a.x_head_stride,
                                                 a.gamma ? a.gamma + h * a.gain_head_stride : a.gamma,
                                                 a.y + r * a.y_stride + h * a.y_head_stride, a.cols, a.eps);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
