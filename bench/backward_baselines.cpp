// SPDX-License-Identifier: MIT
// The backward baselines of normkit_bench_backward, compiled at -O3 -march=native like the
// forward ones (naive.cpp): what an engineer writes first, and PyTorch's CPU formulas written
// plainly. bf16 only (the benchmarked case); float sums in row order, no bit promise.
#include <cmath>    // std::sqrt
#include <cstddef>  // std::size_t

#include "backward_baselines.hpp"

namespace normkit_bench {

using normkit::bf16;

namespace {
inline float f(bf16 v) {
  return normkit::to_float(v);
}
}  // namespace

// Two loops per row (sum, then dx), dgamma accumulated row after row.
void naive_rms_norm_backward(const bf16* dy, const bf16* x, const bf16* gamma, const float* rstd, bf16* dx,
                             float* dgamma, std::size_t rows, std::size_t cols) {
  for (std::size_t j = 0; j < cols; ++j)
    dgamma[j] = 0.0f;
  for (std::size_t r = 0; r < rows; ++r) {
    const bf16* dyr = dy + r * cols;
    const bf16* xr = x + r * cols;
    float s = 0.0f;
    for (std::size_t i = 0; i < cols; ++i)
      s += f(dyr[i]) * f(gamma[i]) * f(xr[i]) * rstd[r];
    const float b = s / static_cast<float>(cols);
    for (std::size_t i = 0; i < cols; ++i) {
      const float n = f(xr[i]) * rstd[r];
      dx[r * cols + i] = bf16((f(dyr[i]) * f(gamma[i]) - n * b) * rstd[r]);
      dgamma[i] += f(dyr[i]) * n;
    }
  }
}

void naive_layer_norm_backward(const bf16* dy, const bf16* x, const bf16* gamma, const float* mean,
                               const float* rstd, bf16* dx, float* dgamma, float* dbeta, std::size_t rows,
                               std::size_t cols) {
  for (std::size_t j = 0; j < cols; ++j)
    dgamma[j] = dbeta[j] = 0.0f;
  for (std::size_t r = 0; r < rows; ++r) {
    const bf16* dyr = dy + r * cols;
    const bf16* xr = x + r * cols;
    float sa = 0.0f, sb = 0.0f;
    for (std::size_t i = 0; i < cols; ++i) {
      const float t = f(dyr[i]) * f(gamma[i]);
      sa += t;
      sb += t * (f(xr[i]) - mean[r]) * rstd[r];
    }
    const float a = sa / static_cast<float>(cols), b = sb / static_cast<float>(cols);
    for (std::size_t i = 0; i < cols; ++i) {
      const float n = (f(xr[i]) - mean[r]) * rstd[r];
      dx[r * cols + i] = bf16((f(dyr[i]) * f(gamma[i]) - a - n * b) * rstd[r]);
      dgamma[i] += f(dyr[i]) * n;
      dbeta[i] += f(dyr[i]);
    }
  }
}

// PyTorch's CPU LayerNorm backward (aten/src/ATen/native/cpu/layer_norm_kernel.cpp,
// LayerNormBackwardKernelImplInternal): ds = sum(dy * gamma * x), db = sum(dy * gamma);
// b = (db * mean - ds) * rstd^3 / N; c = -b * mean - db * rstd / N; dx = rstd * dy * gamma + b * x + c;
// dgamma += dy * (x - mean) * rstd, dbeta += dy, row after row.
void pytorch_layer_norm_backward(const bf16* dy, const bf16* x, const bf16* gamma, const float* mean,
                                 const float* rstd, bf16* dx, float* dgamma, float* dbeta, std::size_t rows,
                                 std::size_t cols) {
  for (std::size_t j = 0; j < cols; ++j)
    dgamma[j] = dbeta[j] = 0.0f;
  const float scale = 1.0f / static_cast<float>(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const bf16* dyr = dy + r * cols;
    const bf16* xr = x + r * cols;
    float ds = 0.0f, db = 0.0f;
    for (std::size_t i = 0; i < cols; ++i) {
      ds += f(dyr[i]) * f(gamma[i]) * f(xr[i]);
      db += f(dyr[i]) * f(gamma[i]);
    }
    const float a = rstd[r];
    const float b = (db * mean[r] - ds) * a * a * a * scale;
    const float c = -b * mean[r] - db * a * scale;
    for (std::size_t i = 0; i < cols; ++i) {
      dx[r * cols + i] = bf16(a * f(dyr[i]) * f(gamma[i]) + b * f(xr[i]) + c);
      dgamma[i] += f(dyr[i]) * (f(xr[i]) - mean[r]) * a;
      dbeta[i] += f(dyr[i]);
    }
  }
}

// PyTorch's RMSNorm backward as autograd differentiates the composite x * rsqrt(mean(x^2) + eps)
// * w: dx = rstd * (dy * w) - x * rstd^3 * mean(dy * w * x); dw = sum(dy * x * rstd).
void pytorch_rms_norm_backward(const bf16* dy, const bf16* x, const bf16* gamma, const float* rstd, bf16* dx,
                               float* dgamma, std::size_t rows, std::size_t cols) {
  for (std::size_t j = 0; j < cols; ++j)
    dgamma[j] = 0.0f;
  const float scale = 1.0f / static_cast<float>(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const bf16* dyr = dy + r * cols;
    const bf16* xr = x + r * cols;
    float s = 0.0f;
    for (std::size_t i = 0; i < cols; ++i)
      s += f(dyr[i]) * f(gamma[i]) * f(xr[i]);
    const float a = rstd[r], k = a * a * a * s * scale;
    for (std::size_t i = 0; i < cols; ++i) {
      dx[r * cols + i] = bf16(a * f(dyr[i]) * f(gamma[i]) - f(xr[i]) * k);
      dgamma[i] += f(dyr[i]) * f(xr[i]) * a;
    }
  }
}

}  // namespace normkit_bench
