// SPDX-License-Identifier: MIT
// normkit: the scalar references -- THE definition of the bits -- and the fp64 oracle.
//
// The row functions (reference::rms_norm_row, layer_norm_row) are defined with their ops
// (ops/rms_norm.hpp, ops/layer_norm.hpp) on the scalar machinery of core/scalar_rows.hpp; here
// are the whole-tensor references, with the same argument checks as the public entry points, and
// the oracle. Every SIMD path must return exactly the references' bits (docs/contract.md).
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cmath>    // std::sqrt (double, the oracle)
#include <cstddef>  // std::size_t

#include "core/abi.hpp"
#include "core/policy.hpp"
#include "core/status.hpp"
#include "core/storage.hpp"
#include "dispatch/run.hpp"
#include "ops/layer_norm.hpp"
#include "ops/rms_norm.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

namespace reference {

// Whole tensors, with the same argument checks as the public entry points.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols,
                              float eps, std::size_t x_stride, std::size_t y_stride) {
  return impl::call_reference<detail::rms_norm_op, Policy, In, W, Out>(
      {x, gamma, y, rows, cols, eps, x_stride, y_stride});
}

template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols,
                              float eps) {
  return reference::rms_norm<Policy>(x, gamma, y, rows, cols, eps, cols, cols);
}

template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows,
                                std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  return impl::call_reference<detail::layer_norm_op, Policy, In, W, Out>(
      {x, gamma, beta, y, rows, cols, eps, x_stride, y_stride});
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

#include "core/fp_precise_end.hpp"
