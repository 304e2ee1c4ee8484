// SPDX-License-Identifier: MIT
// normkit: how a policy turns into arithmetic. Written once over a value type V (float in the
// reference, an xsimd batch in the kernels) and an Ops type that supplies fma and
// "round through a storage type", so every path applies the same operations in the same order.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_same

#include "abi.hpp"
#include "math.hpp"
#include "policy.hpp"
#include "storage.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// contract: g_i = f(gamma_i) or 1.0f + f(gamma_i) (gain offset); 1.0f when gamma is null.
template <class Knobs, class V>
V gain_value(V gamma_f) {
  if constexpr (Knobs::gain == gain_mode::plus_one)
    return V(1.0f) + gamma_f;
  else
    return gamma_f;
}

// contract: n_i = v_i * inv  (multiply)   or   n_i = v_i / sqrt(ms + eps)  (divide).
// `factor` is what row_factor returned: inv or the square root. Division goes through Ops: xsimd
// 8.1's NEON division is a reciprocal estimate plus Newton steps, not IEEE.
template <class Knobs, class Ops, class V>
V normalized(V v, V factor) {
  if constexpr (Knobs::norm == normalize::divide)
    return Ops::div(v, factor);
  else
    return v * factor;
}

// contract: round_once : Out(n * g)            / LayerNorm with bias: Out(fma(n, g, b))
//           round_twice: Out(f(Mid(n)) * g)    / LayerNorm with bias: Out(fma(f(Mid(n)), g, b))
// Returns the fp32 value that the store rounds to Out.
template <class Knobs, class Mid, class Ops, bool HasBias, class V>
V affine(V n, V g, V b) {
  V m = n;
  if constexpr (Knobs::round == rounding::twice)
    m = Ops::template round_through<Mid>(n);
  if constexpr (HasBias)
    return Ops::fma(m, g, b);
  else
    return m * g;
}

// Whether a bias-free affine's Out(f(Mid(n)) * g) is the product of two fp16 values rounded once
// to fp16: rounding twice through fp16, plain fp16 gains, fp16 output. The fp32 product of two fp16
// values is exact, so one fp16 multiply (AVX512-FP16's vmulph) gives its bits (simd/rows.hpp,
// write_row; dispatch/selection.hpp, hw_fp16_kernel).
template <class Knobs, class Mid, class W, class Out>
constexpr bool fp16_product_epilogue = Knobs::round == rounding::twice&& Knobs::gain ==
                                       gain_mode::plain&& std::is_same<Mid, fp16>::value&&
                                           std::is_same<W, fp16>::value&& std::is_same<Out, fp16>::value;

// contract: ms = s / float(d); inv = 1.0f / sqrt(ms + eps)   (or the root itself for divide).
// Over V = float in the reference; the kernels put one row per lane and get several rows'
// factors from one vector divide and square root, IEEE per lane: the same bits.
template <class Knobs, class Ops, class V>
V row_factor(V sum, V cols, V eps) {
  const V root = Ops::sqrt(Ops::div(sum, cols) + eps);
  if constexpr (Knobs::norm == normalize::divide)
    return root;
  else
    return Ops::div(V(1.0f), root);
}

// Overflow path (contract): e = frexp exponent of max |x_i|; rows are scaled by 2^-e (exact)
// and eps by 2^-2e, applied as two exact-power multiplies so no intermediate underflows early.
struct overflow_scale {
  float scale;  // 2^-e
  float eps;    // (eps * 2^-e) * 2^-e
};

template <class Tag>
overflow_scale make_overflow_scale(float max_abs, float eps) {
  int e = 0;
  (void)frexp_f32(max_abs, &e);
  const float s = ldexp_f32(1.0f, -e);  // exact: e <= 128, 2^-128 is a representable subnormal
  return {s, (eps * s) * s};
}

// contract: the rescale is taken when s / float(d) + eps is not finite -- the sum overflowed (or
// is NaN: a non-finite row), or adding eps did (eps = FLT_MAX with |x| ~ 1e16). s < 2^127 and
// eps < 2^127 prove it finite (s / d <= s, and two floats below 2^127 add to at most FLT_MAX),
// so an ordinary row pays two compares; the exact test runs only when they fail.
template <class Tag>
bool needs_rescale(float sum, float cols, float eps) {
  if (sum < 0x1p127f && eps < 0x1p127f)
    return false;
  const float ms = sum / cols;
  const float total = ms + eps;
  return !(total <= storage_traits<float>::max_finite);  // beyond: overflow, or NaN/Inf
}

// contract (LayerNorm): refine the shift when m * m > 16.0f * (S / float(d)), S = csum(c_i^2):
// K lies more than 4 sigma from the mean. Two separate products and a compare: nothing here is
// an a * b + c a contraction flag could fuse. NaN (a non-finite row) and an S of +Inf compare
// false, so such rows never refine.
template <class Tag>
bool shift_is_outlier(float mean, float sum, float cols) {
  const float mean_sq = mean * mean;
  const float bound = 16.0f * (sum / cols);
  return mean_sq > bound;
}

// Rare-path row scans (non-finite rows, overflow rows): plain loops, templated on Tag like every
// helper a per-ISA translation unit may instantiate.
template <class Tag, class In>
bool all_finite(const In* x, std::size_t cols) {
  for (std::size_t i = 0; i < cols; ++i) {
    const float v = to_float(x[i]);
    if (!(v - v == 0.0f))
      return false;  // NaN or +-Inf
  }
  return true;
}

template <class Tag, class In>
float max_abs(const In* x, std::size_t cols) {
  float m = 0.0f;
  for (std::size_t i = 0; i < cols; ++i) {
    const float a = fabs_f32(to_float(x[i]));
    m = a > m ? a : m;
  }
  return m;
}

// contract: a row with a NaN or Inf gives the canonical quiet NaN of Out in every column.
template <class Tag, class Out>
void fill_nan(Out* y, std::size_t cols) {
  const Out nan = from_float<Out>(bits_float(storage_traits<float>::canonical_nan));
  for (std::size_t i = 0; i < cols; ++i)
    y[i] = nan;
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
