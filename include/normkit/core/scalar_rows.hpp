// SPDX-License-Identifier: MIT
// normkit: the scalar row machinery the references are written with -- THE definition of the
// bits. Plain loops over one row, a `float p[64]` for the canonical sum, fma wherever the
// contract has a*b+c, and a single IEEE operation for every other step, so no contraction flag
// (-ffp-contract=fast) or -march can change a bit. Every SIMD path must return exactly these
// bits (docs/contract.md).
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "abi.hpp"
#include "canonical_sum.hpp"
#include "epilogue.hpp"
#include "math.hpp"
#include "policy.hpp"
#include "storage.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
// Per-configuration internals (ABI-tagged by the inline namespace, see core/abi.hpp).
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
  return v != v ? bits_float(storage_traits<float>::canonical_nan) : v;
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

// A row's statistics as the output step uses them (the references' form of simd/rows.hpp's
// row_stats): S or s, the shift K (LayerNorm), m, the rescale factor and the eps that go with them.
struct row_moments {
  float sum;
  float shift;
  float mean;
  float scale;
  float eps;
  bool nan_row;
};

// Where a reference row's outputs go: y_i = Out(r) for a pointer y; an output object (the quantized
// norm's, ops/norm_static_quant.hpp) takes the fp32 value r itself through its put and fill_nan.
template <class Out>
void put(Out* y, std::size_t i, float r) {
  y[i] = from_float<Out>(r);
}
template <class Out>
void fill_nan_row(Out* y, std::size_t cols) {
  fill_nan<scalar_tag>(y, cols);
}
template <class Y>
void put(Y& y, std::size_t i, float r) {
  y.put(i, r);
}
template <class Y>
void fill_nan_row(Y& y, std::size_t cols) {
  for (std::size_t i = 0; i < cols; ++i)
    y.put(i, bits_float(storage_traits<float>::canonical_nan));
}

// The output loop: y_i = Out(policy(n_i, g_i, b_i)), with v(i) the row value feeding n_i.
template <class Knobs, class In, class W, class Y, class Value>
void write_row(const W* gamma, const W* beta, Y& y, std::size_t cols, float factor, Value v) {
  using Mid = mid_of<Knobs, In, W>;
  for (std::size_t i = 0; i < cols; ++i) {
    const float n = normalized<Knobs, scalar_ops>(v(i), factor);
    const float g = gamma ? gain_value<Knobs>(to_float(gamma[i])) : 1.0f;
    const float r = beta ? affine<Knobs, Mid, scalar_ops, true>(n, g, to_float(beta[i]))
                         : affine<Knobs, Mid, scalar_ops, false>(n, g, 0.0f);
    put(y, i, canonical(r));
  }
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
