// SPDX-License-Identifier: MIT
// The naive baseline: the scalar loops an engineer writes first (the seeds' RMSNorm: a serial sum
// of squares, then y = x * inv * gamma), compiled at -O3 -march=native. Without -ffast-math the
// compiler may not reorder the serial float sum, so the reduction stays one dependent chain: that
// is the point of comparing against it. 16-bit values go through normkit's scalar conversions.
#include <cmath>        // std::sqrt
#include <cstddef>      // std::size_t
#include <type_traits>  // std::conditional_t
#include <vector>       // std::vector

#include "baselines.hpp"

namespace normkit_bench {
namespace {

// The preset's epilogue on the normalized value n and the stored gain g.
template <class Policy, class In, class W>
inline float scale(float n, float g) {
  if constexpr (Policy::gain == normkit::gain_mode::plus_one)
    g = 1.0f + g;
  if constexpr (Policy::round == normkit::rounding::twice) {
    using Mid = std::conditional_t<Policy::mid == normkit::mid_type::input, In, W>;
    n = normkit::to_float(normkit::from_float<Mid>(n));
  }
  return n * g;
}

}  // namespace

template <class Policy, class In, class W, class Out>
void naive_rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols, float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const In* xr = x + r * cols;
    Out* yr = y + r * cols;
    float sumsq = 0.0f;
    for (std::size_t i = 0; i < cols; ++i) {
      const float v = normkit::to_float(xr[i]);
      sumsq += v * v;
    }
    const float mean_sq = sumsq / static_cast<float>(cols);
    const float root = std::sqrt(mean_sq + eps);
    const float inv_rms = 1.0f / root;
    for (std::size_t i = 0; i < cols; ++i) {
      const float v = normkit::to_float(xr[i]);
      const float n = Policy::norm == normkit::normalize::divide ? v / root : v * inv_rms;
      yr[i] = normkit::from_float<Out>(scale<Policy, In, W>(n, normkit::to_float(gamma[i])));
    }
  }
}

template <class Policy, class In, class W, class Out>
void naive_layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows, std::size_t cols,
                      float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const In* xr = x + r * cols;
    Out* yr = y + r * cols;
    float sum = 0.0f;
    for (std::size_t i = 0; i < cols; ++i)
      sum += normkit::to_float(xr[i]);
    const float mean = sum / static_cast<float>(cols);
    float sumsq = 0.0f;
    for (std::size_t i = 0; i < cols; ++i) {
      const float c = normkit::to_float(xr[i]) - mean;
      sumsq += c * c;
    }
    const float var = sumsq / static_cast<float>(cols);
    const float root = std::sqrt(var + eps);
    const float inv_std = 1.0f / root;
    for (std::size_t i = 0; i < cols; ++i) {
      const float c = normkit::to_float(xr[i]) - mean;
      const float n = Policy::norm == normkit::normalize::divide ? c / root : c * inv_std;
      yr[i] = normkit::from_float<Out>(scale<Policy, In, W>(n, normkit::to_float(gamma[i])) +
                                       normkit::to_float(beta[i]));
    }
  }
}

template <class Policy, class Res, class W, class Out>
void naive_add_rms_norm(const Res* x, Res* residual, const W* gamma, Out* y, std::size_t rows,
                        std::size_t cols, float eps) {
  std::vector<float> sum(cols);
  constexpr bool reads_sum = Policy::residual == normkit::residual_norm::fp32_sum;
  for (std::size_t r = 0; r < rows; ++r) {
    const Res* xr = x + r * cols;
    Res* rr = residual + r * cols;
    Out* yr = y + r * cols;
    float sumsq = 0.0f;
    for (std::size_t i = 0; i < cols; ++i) {
      const float s = normkit::to_float(xr[i]) + normkit::to_float(rr[i]);
      rr[i] = normkit::from_float<Res>(s);
      const float v = reads_sum ? s : normkit::to_float(rr[i]);
      sum[i] = v;
      sumsq += v * v;
    }
    const float inv_rms = 1.0f / std::sqrt(sumsq / static_cast<float>(cols) + eps);
    for (std::size_t i = 0; i < cols; ++i)
      yr[i] = normkit::from_float<Out>(scale<Policy, Res, W>(sum[i] * inv_rms, normkit::to_float(gamma[i])));
  }
}
template void naive_add_rms_norm<normkit::llama, normkit::bf16, normkit::bf16, normkit::bf16>(
    const normkit::bf16*, normkit::bf16*, const normkit::bf16*, normkit::bf16*, std::size_t, std::size_t,
    float);
template void naive_add_rms_norm<normkit::flashinfer, normkit::bf16, normkit::bf16, normkit::bf16>(
    const normkit::bf16*, normkit::bf16*, const normkit::bf16*, normkit::bf16*, std::size_t, std::size_t,
    float);
template void naive_add_rms_norm<normkit::pytorch, float, float, float>(const float*, float*, const float*,
                                                                        float*, std::size_t, std::size_t,
                                                                        float);

#define NORMKIT_BENCH_INSTANTIATE(Policy, In, W, Out)                                                   \
  template void naive_rms_norm<Policy, In, W, Out>(const In*, const W*, Out*, std::size_t, std::size_t, \
                                                   float);                                              \
  template void naive_layer_norm<Policy, In, W, Out>(const In*, const W*, const W*, Out*, std::size_t,  \
                                                     std::size_t, float);
NORMKIT_BENCH_FOR_EACH_CASE(NORMKIT_BENCH_INSTANTIATE)

}  // namespace normkit_bench
