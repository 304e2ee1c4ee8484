// SPDX-License-Identifier: MIT
// normkit_bench_backward's baselines (backward_baselines.cpp, -O3 -march=native): the naive
// two-loop backward and PyTorch's CPU formulas, bf16 dy/x/dx/gamma, fp32 statistics and
// parameter gradients.
#pragma once

#include <cstddef>  // std::size_t

#include <normkit/types.hpp>

namespace normkit_bench {

void naive_rms_norm_backward(const normkit::bf16* dy, const normkit::bf16* x, const normkit::bf16* gamma,
                             const float* rstd, normkit::bf16* dx, float* dgamma, std::size_t rows,
                             std::size_t cols);
void naive_layer_norm_backward(const normkit::bf16* dy, const normkit::bf16* x, const normkit::bf16* gamma,
                               const float* mean, const float* rstd, normkit::bf16* dx, float* dgamma,
                               float* dbeta, std::size_t rows, std::size_t cols);
void pytorch_rms_norm_backward(const normkit::bf16* dy, const normkit::bf16* x, const normkit::bf16* gamma,
                               const float* rstd, normkit::bf16* dx, float* dgamma, std::size_t rows,
                               std::size_t cols);
void pytorch_layer_norm_backward(const normkit::bf16* dy, const normkit::bf16* x, const normkit::bf16* gamma,
                                 const float* mean, const float* rstd, normkit::bf16* dx, float* dgamma,
                                 float* dbeta, std::size_t rows, std::size_t cols);

}  // namespace normkit_bench
