// SPDX-License-Identifier: MIT
// normkit: LayerNorm forward, shifted two-pass (never E[x^2] - E[x]^2).
//
//   y[r][i] = Out(policy((f(x[r][i]) - mean) / sqrt(var + eps), gamma[i], beta[i]))
//
// with the exact rounding points, reduction order and special-value rules of docs/contract.md.
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t, std::nullptr_t

#include "core/policy.hpp"
#include "core/status.hpp"
#include "core/storage.hpp"
#include "dispatch/run.hpp"
#include "ops/layer_norm.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

// gamma and beta: cols values each, or nullptr (gain 1 / no bias). Errors as for rms_norm, and y
// must not overlap beta either.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows,
                                std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: In, W and Out must each be float, normkit::bf16 or normkit::fp16");
  static_assert(Policy::layer_norm_exact,
                "normkit: this preset's LayerNorm convention is not reproduced exactly (the ONNX "
                "LayerNormalization spec rounds the scaled value before adding B); use pytorch or "
                "round_twice and check the difference");
  return impl::call<detail::layer_norm_op, Policy, In, W, Out>(
      {x, gamma, beta, y, rows, cols, eps, x_stride, y_stride});
}

template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows,
                                std::size_t cols, float eps) {
  return normkit::layer_norm<Policy>(x, gamma, beta, y, rows, cols, eps, cols, cols);
}

// nullptr for gamma and/or beta (their type cannot be deduced from nullptr).
template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, std::nullptr_t, const W* beta, Out* y, std::size_t rows,
                                std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  return normkit::layer_norm<Policy>(x, static_cast<const W*>(nullptr), beta, y, rows, cols, eps, x_stride,
                                     y_stride);
}
template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, const W* gamma, std::nullptr_t, Out* y, std::size_t rows,
                                std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  return normkit::layer_norm<Policy>(x, gamma, static_cast<const W*>(nullptr), y, rows, cols, eps, x_stride,
                                     y_stride);
}
template <class Policy, class In, class Out>
[[nodiscard]] status layer_norm(const In* x, std::nullptr_t, std::nullptr_t, Out* y, std::size_t rows,
                                std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  return normkit::layer_norm<Policy>(x, static_cast<const In*>(nullptr), static_cast<const In*>(nullptr), y,
                                     rows, cols, eps, x_stride, y_stride);
}
template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, std::nullptr_t, const W* beta, Out* y, std::size_t rows,
                                std::size_t cols, float eps) {
  return normkit::layer_norm<Policy>(x, static_cast<const W*>(nullptr), beta, y, rows, cols, eps, cols, cols);
}
template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm(const In* x, const W* gamma, std::nullptr_t, Out* y, std::size_t rows,
                                std::size_t cols, float eps) {
  return normkit::layer_norm<Policy>(x, gamma, static_cast<const W*>(nullptr), y, rows, cols, eps, cols,
                                     cols);
}
template <class Policy, class In, class Out>
[[nodiscard]] status layer_norm(const In* x, std::nullptr_t, std::nullptr_t, Out* y, std::size_t rows,
                                std::size_t cols, float eps) {
  return normkit::layer_norm<Policy>(x, static_cast<const In*>(nullptr), static_cast<const In*>(nullptr), y,
                                     rows, cols, eps, cols, cols);
}

// Head-wise LayerNorm over views of [tokens, heads, head_dim] (see rms_norm_heads): gamma and
// beta shared by every head (gain_head_stride == 0) or one vector each per head, gain_head_stride
// elements apart; either may be nullptr.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm_heads(const In* x, const W* gamma, const W* beta, Out* y, std::size_t tokens,
                                      std::size_t heads, std::size_t head_dim, float eps,
                                      std::size_t x_token_stride, std::size_t x_head_stride,
                                      std::size_t y_token_stride, std::size_t y_head_stride,
                                      std::size_t gain_head_stride = 0) {
  static_assert(
      Policy::layer_norm_exact,
      "normkit: this policy's LayerNorm has a rounding layer_norm does not model (core/policy.hpp)");
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: In, W and Out must each be float, normkit::bf16 or normkit::fp16");
  return impl::call<detail::layer_norm_op, Policy, In, W, Out>(
      {x, gamma, beta, y, tokens, head_dim, eps, x_token_stride, y_token_stride, heads, x_head_stride,
       y_head_stride, gain_head_stride});
}

// In place.
template <class Policy, class T, class W>
[[nodiscard]] status layer_norm_heads(T* x, const W* gamma, const W* beta, std::size_t tokens,
                                      std::size_t heads, std::size_t head_dim, float eps,
                                      std::size_t token_stride, std::size_t head_stride,
                                      std::size_t gain_head_stride = 0) {
  return normkit::layer_norm_heads<Policy>(static_cast<const T*>(x), gamma, beta, x, tokens, heads, head_dim,
                                           eps, token_stride, head_stride, token_stride, head_stride,
                                           gain_head_stride);
}

// On the caller's thread pool (see rms_norm): gamma and beta as above, or nullptr.
template <class Policy, class ParallelFor, class In, class G, class B, class Out,
          impl::if_parallel_for<ParallelFor> = 0>
[[nodiscard]] status layer_norm(ParallelFor&& parallel_for, const In* x, G gamma, B beta, Out* y,
                                std::size_t rows, std::size_t cols, float eps, std::size_t x_stride,
                                std::size_t y_stride) {
  using W = impl::weight_of<In, G, B>;
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: In, W and Out must each be float, normkit::bf16 or normkit::fp16");
  static_assert(Policy::layer_norm_exact,
                "normkit: this preset's LayerNorm convention is not reproduced exactly (the ONNX "
                "LayerNormalization spec rounds the scaled value before adding B); use pytorch or "
                "round_twice and check the difference");
  const W* const g = gamma;
  const W* const b = beta;
  return impl::call_parallel<detail::layer_norm_op, Policy, In, W, Out>(
      parallel_for, {x, g, b, y, rows, cols, eps, x_stride, y_stride});
}

template <class Policy, class ParallelFor, class In, class G, class B, class Out,
          impl::if_parallel_for<ParallelFor> = 0>
[[nodiscard]] status layer_norm(ParallelFor&& parallel_for, const In* x, G gamma, B beta, Out* y,
                                std::size_t rows, std::size_t cols, float eps) {
  return normkit::layer_norm<Policy>(parallel_for, x, gamma, beta, y, rows, cols, eps, cols, cols);
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
