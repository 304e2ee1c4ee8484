// SPDX-License-Identifier: MIT
// normkit: the LayerNorm op -- its arguments, its validation rule, its type slots and its scalar
// reference. The SIMD rows are in layer_norm_simd.hpp.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/ahead.hpp"
#include "../core/canonical_sum.hpp"
#include "../core/epilogue.hpp"
#include "../core/math.hpp"
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
// null (g = 1); beta: cols values or null (no bias); y like x.
namespace NORMKIT_TABLE_NAMESPACE {
template <class In, class W, class Out>
struct layer_norm_args {
  const In* x;
  const W* gamma;
  const W* beta;
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

// One LayerNorm row's statistics, shifted two-pass (never E[x^2] - E[x]^2):
//   K = f(x_0); d_i = f(x_i) - K; m = csum(d_i) / d; c_i = d_i - m; S = csum(c_i^2);
//   if m * m > 16 * (S / d): K = K + m and d_i, m, c_i, S once more (one refinement).
// The rescale is decided on the first statistics (scale 1, unrefined); the refinement comes
// after it, in the scaled domain when the row was rescaled. nan_row for a row with a NaN or Inf.
template <class In>
impl::row_moments layer_norm_row_stats(const In* x, std::size_t cols, float eps) {
  const float d = static_cast<float>(cols);
  impl::row_moments st{0.0f, 0.0f, 0.0f, 1.0f, eps, false};
  // m and S = csum(c_i^2) (undivided) for the current shift and scale.
  auto moments = [&] {
    float p[detail::canonical_lanes] = {};
    for (std::size_t i = 0; i < cols; ++i) {
      // contract: d_i = f(x_i) - K, written as fma(f(x_i), 2^-e, -K) so that no contraction flag
      // can fuse the overflow path's scaling differently (scale is 1 otherwise: exact).
      const float di = detail::fma_f32(to_float(x[i]), st.scale, -st.shift);
      p[i % detail::canonical_lanes] = p[i % detail::canonical_lanes] + di;
    }
    // contract: m = csum(d_i) / float(d)
    st.mean = detail::fold_halves<detail::scalar_tag, detail::canonical_lanes>(p) / d;
    float q[detail::canonical_lanes] = {};
    for (std::size_t i = 0; i < cols; ++i) {
      const float c = detail::fma_f32(to_float(x[i]), st.scale, -st.shift) - st.mean;
      q[i % detail::canonical_lanes] = detail::fma_f32(c, c, q[i % detail::canonical_lanes]);
    }
    st.sum = detail::fold_halves<detail::scalar_tag, detail::canonical_lanes>(q);
  };
  st.shift = to_float(x[0]);  // contract: K = f(x_0)
  moments();
  // contract: the rescale, decided on the first statistics: K = f(x_0) * 2^-e, statistics again.
  if (detail::needs_rescale<detail::scalar_tag>(st.sum, d, eps)) {
    if (!detail::all_finite<detail::scalar_tag>(x, cols))
      return st.nan_row = true, st;
    const detail::overflow_scale o =
        detail::make_overflow_scale<detail::scalar_tag>(detail::max_abs<detail::scalar_tag>(x, cols), eps);
    st.scale = o.scale;
    st.eps = o.eps;
    st.shift = to_float(x[0]) * st.scale;
    moments();
  }
  // contract: if m * m > 16 * (S / d): K = K + m, one fp32 add (in the scaled domain when
  // rescaled: K and m both carry 2^-e), then d_i, m, c_i, S once more. One refinement only.
  if (detail::shift_is_outlier<detail::scalar_tag>(st.mean, st.sum, d)) {
    st.shift = st.shift + st.mean;
    moments();
  }
  return st;
}

// One LayerNorm row: its statistics (above), then
//   inv = 1 / sqrt(S / d + eps); n_i = c_i * inv; y_i = Out(fma(n_i, g_i, b_i)) per the policy.
template <class Policy, class In, class W, class Y>
void layer_norm_row(const In* x, const W* gamma, const W* beta, Y y, std::size_t cols, float eps) {
  static_assert(Policy::layer_norm_exact,
                "normkit: this preset's LayerNorm convention (e.g. the ONNX LayerNormalization "
                "spec's extra rounding before adding B) is not reproduced by layer_norm");
  using Knobs = detail::knobs_of<Policy>;
  const impl::row_moments st = layer_norm_row_stats(x, cols, eps);
  if (st.nan_row)
    return impl::fill_nan_row(y, cols);
  // contract: var = S / float(d); inv = 1 / sqrt(var + eps)
  const float factor = detail::row_factor<Knobs, impl::scalar_ops>(st.sum, static_cast<float>(cols), st.eps);
  impl::write_row<Knobs, In, W>(gamma, beta, y, cols, factor, [&](std::size_t i) {
    return detail::fma_f32(to_float(x[i]), st.scale, -st.shift) - st.mean;
  });
}

}  // namespace reference

namespace detail {

struct layer_norm_op : norm_op {
  static constexpr const char* name = "layer_norm";
  template <class In, class W, class Out>
  using args = NORMKIT_TABLE_NAMESPACE::layer_norm_args<In, W, Out>;

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
        impl::operand_of(a.gamma, 1, gain_heads, a.cols, a.cols, a.gain_head_stride, true),
        impl::operand_of(a.beta, 1, gain_heads, a.cols, a.cols, a.gain_head_stride, true)};
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
      for (std::size_t h = 0; h < a.heads; ++h) {
        const std::size_t g = h * a.gain_head_stride;
        normkit::reference::layer_norm_row<Policy>(
            a.x + r * a.x_stride + h * a.x_head_stride, a.gamma ? a.gamma + g : a.gamma,
            a.beta ? a.beta + g : a.beta, a.y + r * a.y_stride + h * a.y_head_stride, a.cols, a.eps);
      }
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
