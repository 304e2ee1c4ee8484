// SPDX-License-Identifier: MIT
// normkit: the scalar references -- THE definition of the bits -- and the fp64 oracle.
//
// Plain loops over one row, a `float p[64]` for the canonical sum, fma wherever the
// contract has a*b+c, and a single IEEE operation for every other step, so no contraction flag
// (-ffp-contract=fast) or -march can change a bit. Every SIMD path must return exactly these
// bits (docs/contract.md).
#pragma once

#include "detail/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cmath>    // std::sqrt (double, the oracle)
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t

#include "detail/abi.hpp"
#include "detail/canonical_sum.hpp"
#include "detail/epilogue.hpp"
#include "detail/math.hpp"
#include "detail/validate.hpp"
#include "policy.hpp"
#include "status.hpp"
#include "types.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

// Per-configuration internals (ABI-tagged by the inline namespace, see detail/abi.hpp).
namespace impl {
using namespace ::normkit::detail;

struct scalar_ops {
  static float fma(float a, float b, float c) { return fma_f32(a, b, c); }
  static float div(float a, float b) { return a / b; }
  static float sqrt(float a) { return sqrt_f32(a); }
  template <class T>
  static float round_through(float v) {
    return to_float(from_float<T>(v));  // f(T(v)): the round-twice intermediate
  }
};

// contract: NaN outputs are the canonical quiet NaN of Out (x86 and Arm make different NaNs).
inline float canonical(float v) {
  return v != v ? bits_float(0x7fc00000u) : v;
}

// contract: sum of squares, fma into partials, of f(x_i) * scale.
template <class In>
float sum_squares(const In* x, std::size_t cols, float scale) {
  float p[canonical_lanes] = {};
  for (std::size_t i = 0; i < cols; ++i) {
    const float v = to_float(x[i]) * scale;
    p[i % canonical_lanes] = fma_f32(v, v, p[i % canonical_lanes]);
  }
  return fold_halves<scalar_tag, canonical_lanes>(p);
}

// The output loop: y_i = Out(policy(n_i, g_i, b_i)), with v(i) the row value feeding n_i.
template <class Knobs, class In, class W, class Out, class Value>
void write_row(const W* gamma, const W* beta, Out* y, std::size_t cols, float factor, Value v) {
  using Mid = mid_of<Knobs, In, W>;
  for (std::size_t i = 0; i < cols; ++i) {
    const float n = normalized<Knobs, scalar_ops>(v(i), factor);
    const float g = gamma ? gain_value<Knobs>(to_float(gamma[i])) : 1.0f;
    const float r = beta ? affine<Knobs, Mid, scalar_ops, true>(n, g, to_float(beta[i]))
                         : affine<Knobs, Mid, scalar_ops, false>(n, g, 0.0f);
    y[i] = from_float<Out>(canonical(r));
  }
}

}  // namespace impl

namespace reference {

// One RMSNorm row (docs/contract.md):
//   s = csum(f(x_i)^2); ms = s / float(d); inv = 1 / sqrt(ms + eps); n_i = f(x_i) * inv; policy.
// A row with a NaN or Inf gives canonical NaNs; a finite row whose sum of squares overflows is
// recomputed on x * 2^-e.
template <class Policy, class In, class W, class Out>
void rms_norm_row(const In* x, const W* gamma, Out* y, std::size_t cols, float eps) {
  using Knobs = detail::knobs_of<Policy>;
  float scale = 1.0f;
  float s = impl::sum_squares(x, cols, scale);
  if (detail::needs_rescale<detail::scalar_tag>(s, static_cast<float>(cols), eps)) {
    if (!detail::all_finite<detail::scalar_tag>(x, cols))
      return detail::fill_nan<detail::scalar_tag>(y, cols);
    const detail::overflow_scale o =
        detail::make_overflow_scale<detail::scalar_tag>(detail::max_abs<detail::scalar_tag>(x, cols), eps);
    scale = o.scale;
    eps = o.eps;
    s = impl::sum_squares(x, cols, scale);
  }
  const float factor = detail::row_factor<Knobs, impl::scalar_ops>(s, static_cast<float>(cols), eps);
  impl::write_row<Knobs, In, W, Out>(gamma, static_cast<const W*>(nullptr), y, cols, factor,
                                     [&](std::size_t i) { return to_float(x[i]) * scale; });
}

// One LayerNorm row, shifted two-pass (never E[x^2] - E[x]^2):
//   K = f(x_0); d_i = f(x_i) - K; m = csum(d_i) / d; c_i = d_i - m; S = csum(c_i^2);
//   if m * m > 16 * (S / d): K = K + m and d_i, m, c_i, S once more (one refinement);
//   inv = 1 / sqrt(S / d + eps); n_i = c_i * inv; y_i = Out(fma(n_i, g_i, b_i)) per the policy.
// The rescale is decided on the first statistics (scale 1, unrefined); the refinement comes
// after it, in the scaled domain when the row was rescaled.
template <class Policy, class In, class W, class Out>
void layer_norm_row(const In* x, const W* gamma, const W* beta, Out* y, std::size_t cols, float eps) {
  static_assert(Policy::layer_norm_exact,
                "normkit: this preset's LayerNorm convention (e.g. the ONNX LayerNormalization "
                "spec's extra rounding before adding B) is not reproduced by layer_norm");
  using Knobs = detail::knobs_of<Policy>;
  const float d = static_cast<float>(cols);
  float scale = 1.0f, shift = 0.0f, mean = 0.0f, sum_sq = 0.0f;
  // m and S = csum(c_i^2) (undivided) for the current shift and scale.
  auto moments = [&] {
    float p[detail::canonical_lanes] = {};
    for (std::size_t i = 0; i < cols; ++i) {
      // contract: d_i = f(x_i) - K, written as fma(f(x_i), 2^-e, -K) so that no contraction flag
      // can fuse the overflow path's scaling differently (scale is 1 otherwise: exact).
      const float di = detail::fma_f32(to_float(x[i]), scale, -shift);
      p[i % detail::canonical_lanes] = p[i % detail::canonical_lanes] + di;
    }
    // contract: m = csum(d_i) / float(d)
    mean = detail::fold_halves<detail::scalar_tag, detail::canonical_lanes>(p) / d;
    float q[detail::canonical_lanes] = {};
    for (std::size_t i = 0; i < cols; ++i) {
      const float c = detail::fma_f32(to_float(x[i]), scale, -shift) - mean;
      q[i % detail::canonical_lanes] = detail::fma_f32(c, c, q[i % detail::canonical_lanes]);
    }
    sum_sq = detail::fold_halves<detail::scalar_tag, detail::canonical_lanes>(q);
  };
  shift = to_float(x[0]);  // contract: K = f(x_0)
  moments();
  // contract: the rescale, decided on the first statistics: K = f(x_0) * 2^-e, statistics again.
  if (detail::needs_rescale<detail::scalar_tag>(sum_sq, d, eps)) {
    if (!detail::all_finite<detail::scalar_tag>(x, cols))
      return detail::fill_nan<detail::scalar_tag>(y, cols);
    const detail::overflow_scale o =
        detail::make_overflow_scale<detail::scalar_tag>(detail::max_abs<detail::scalar_tag>(x, cols), eps);
    scale = o.scale;
    eps = o.eps;
    shift = to_float(x[0]) * scale;
    moments();
  }
  // contract: if m * m > 16 * (S / d): K = K + m, one fp32 add (in the scaled domain when
  // rescaled: K and m both carry 2^-e), then d_i, m, c_i, S once more. One refinement only.
  if (detail::shift_is_outlier<detail::scalar_tag>(mean, sum_sq, d)) {
    shift = shift + mean;
    moments();
  }
  // contract: var = S / float(d); inv = 1 / sqrt(var + eps)
  const float factor = detail::row_factor<Knobs, impl::scalar_ops>(sum_sq, d, eps);
  impl::write_row<Knobs, In, W, Out>(gamma, beta, y, cols, factor, [&](std::size_t i) {
    return detail::fma_f32(to_float(x[i]), scale, -shift) - mean;
  });
}

// Whole tensors, with the same argument checks as the public entry points.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols,
                              float eps, std::size_t x_stride, std::size_t y_stride) {
  const status st =
      impl::validate(x, gamma, static_cast<const W*>(nullptr), y, rows, cols, eps, x_stride, y_stride);
  if (st != status::ok || rows == 0 || cols == 0)
    return st;
  for (std::size_t r = 0; r < rows; ++r)
    rms_norm_row<Policy>(x + r * x_stride, gamma, y + r * y_stride, cols, eps);
  return status::ok;
}

template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols,
                              float eps) {
  return reference::rms_norm<Policy>(x, gamma, y, rows, cols, eps, cols, cols);
}

template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows,
                                std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  const status st = impl::validate(x, gamma, beta, y, rows, cols, eps, x_stride, y_stride);
  if (st != status::ok || rows == 0 || cols == 0)
    return st;
  for (std::size_t r = 0; r < rows; ++r)
    layer_norm_row<Policy>(x + r * x_stride, gamma, beta, y + r * y_stride, cols, eps);
  return status::ok;
}

template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows,
                                std::size_t cols, float eps) {
  return reference::layer_norm<Policy>(x, gamma, beta, y, rows, cols, eps, cols, cols);
}

}  // namespace reference

// The fp64 oracle: the same formulas evaluated in double on the same rounded inputs. Not
// bit-exact; it measures the fp32 path's error. Outputs are the exact-ish real results before
// the final rounding to Out (the round-twice intermediate is still rounded to Mid: that is the
// convention, not an error). Plain sums, no overflow path needed in double.
namespace oracle {

template <class Policy, class In, class W>
void rms_norm_row(const In* x, const W* gamma, double* y, std::size_t cols, float eps) {
  using Knobs = detail::knobs_of<Policy>;
  double s = 0.0;
  for (std::size_t i = 0; i < cols; ++i)
    s += static_cast<double>(to_float(x[i])) * to_float(x[i]);
  const double root = std::sqrt(s / static_cast<double>(cols) + static_cast<double>(eps));
  for (std::size_t i = 0; i < cols; ++i) {
    double n = static_cast<double>(to_float(x[i])) / root;
    if (Knobs::round == rounding::twice)
      n = to_float(from_float<detail::mid_of<Knobs, In, W>>(static_cast<float>(n)));
    double g = gamma ? static_cast<double>(to_float(gamma[i])) : 1.0;
    if (gamma && Knobs::gain == gain_mode::plus_one)
      g += 1.0;
    y[i] = n * g;
  }
}

template <class Policy, class In, class W>
void layer_norm_row(const In* x, const W* gamma, const W* beta, double* y, std::size_t cols, float eps) {
  using Knobs = detail::knobs_of<Policy>;
  double m = 0.0;
  for (std::size_t i = 0; i < cols; ++i)
    m += to_float(x[i]);
  m /= static_cast<double>(cols);
  double v = 0.0;
  for (std::size_t i = 0; i < cols; ++i)
    v += (to_float(x[i]) - m) * (to_float(x[i]) - m);
  const double root = std::sqrt(v / static_cast<double>(cols) + static_cast<double>(eps));
  for (std::size_t i = 0; i < cols; ++i) {
    double n = (to_float(x[i]) - m) / root;
    if (Knobs::round == rounding::twice)
      n = to_float(from_float<detail::mid_of<Knobs, In, W>>(static_cast<float>(n)));
    double g = gamma ? static_cast<double>(to_float(gamma[i])) : 1.0;
    if (gamma && Knobs::gain == gain_mode::plus_one)
      g += 1.0;
    y[i] = n * g + (beta ? static_cast<double>(to_float(beta[i])) : 0.0);
  }
}

}  // namespace oracle

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "detail/fp_precise_end.hpp"
