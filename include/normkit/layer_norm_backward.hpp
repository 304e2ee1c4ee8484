// SPDX-License-Identifier: MIT
// normkit: LayerNorm training: the forward pass that saves its fp32 statistics, and the backward
// pass (docs/contract.md, "Saved statistics" and "Backward").
//
//   layer_norm_fwd:       y as layer_norm (the same bits), mean[r] = K + m, rstd[r] = the row's
//                         1 / sqrt(var + eps)
//   layer_norm_backward:  n = (f(x) - mean) * rstd, t = f(dy) * g, a = mean(t), b = mean(t * n)
//                         (canonical sums), dx = T((t - a - n * b) * rstd),
//                         dgamma = sum over rows of f(dy) * n, dbeta = sum over rows of f(dy)
//
// dgamma and dbeta are fp32, overwritten, summed in a fixed order of 64-row blocks and a fixed tree
// (backward_reduce.hpp), so it has the same bits on every ISA and for any split of the rows.
// The policy's gain offset (Gemma's 1 + gamma) enters g; its roundings are treated as the
// identity. Saved statistics a forward could not produce (rstd <= 0, NaN, Inf) are computed
// through, not rejected.
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t, std::nullptr_t

#include "backward_reduce.hpp"
#include "core/policy.hpp"
#include "core/status.hpp"
#include "core/storage.hpp"
#include "dispatch/backward_call.hpp"
#include "dispatch/run.hpp"
#include "ops/layer_norm.hpp"
#include "ops/layer_norm_backward.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

// y exactly as layer_norm<Policy>(x, gamma, beta, y, ...); mean, rstd: rows floats each, the
// row's K + m and the forward's factor (times 2^-e on the overflow path, mean back at scale 1;
// NaN for a row with a NaN or Inf). Statuses as layer_norm, mean and rstd counting as outputs.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm_fwd(const In* x, const W* gamma, const W* beta, Out* y, float* mean,
                                    float* rstd, std::size_t rows, std::size_t cols, float eps,
                                    std::size_t x_stride, std::size_t y_stride) {
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: In, W and Out must each be float, normkit::bf16 or normkit::fp16");
  static_assert(Policy::layer_norm_exact,
                "normkit: this preset's LayerNorm convention is not reproduced exactly (layer_norm.hpp)");
  return impl::forward_with_stats<detail::layer_norm_op, Policy, false, In, W, Out>(
      {x, gamma, beta, y, rows, cols, eps, x_stride, y_stride}, mean, rstd);
}

template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm_fwd(const In* x, const W* gamma, const W* beta, Out* y, float* mean,
                                    float* rstd, std::size_t rows, std::size_t cols, float eps) {
  return normkit::layer_norm_fwd<Policy>(x, gamma, beta, y, mean, rstd, rows, cols, eps, cols, cols);
}

template <class Policy, class In, class Out>
[[nodiscard]] status layer_norm_fwd(const In* x, std::nullptr_t, std::nullptr_t, Out* y, float* mean,
                                    float* rstd, std::size_t rows, std::size_t cols, float eps) {
  return normkit::layer_norm_fwd<Policy>(x, static_cast<const In*>(nullptr), static_cast<const In*>(nullptr),
                                         y, mean, rstd, rows, cols, eps, cols, cols);
}

// dy, x, dx: rows x cols of one storage type T; gamma: cols values or nullptr (g = 1); mean,
// rstd: what layer_norm_fwd saved; dgamma, dbeta: cols floats each, or nullptr when not wanted.
// dx may be dy (same stride: in place). Zero rows give dgamma = dbeta = +0. Returns, touching
// nothing: invalid_stride, null_pointer, misaligned_pointer, size_overflow, overlapping_output.
template <class Policy, class T, class W>
[[nodiscard]] status layer_norm_backward(const T* dy, const T* x, const W* gamma, const float* mean,
                                         const float* rstd, T* dx, float* dgamma, float* dbeta,
                                         std::size_t rows, std::size_t cols, std::size_t dy_stride,
                                         std::size_t x_stride, std::size_t dx_stride) {
  static_assert(is_storage_type<T>::value && is_storage_type<W>::value,
                "normkit: T and W must each be float, normkit::bf16 or normkit::fp16");
  return impl::backward_call<detail::layer_norm_backward_op, Policy, false, T>(
      {dy, x, nullptr, mean, rstd, dx, dgamma, dbeta, rows, cols, dy_stride, x_stride, dx_stride,
       impl::dx_streams<T>(rows, cols)},
      gamma, false);
}

template <class Policy, class T, class W>
[[nodiscard]] status layer_norm_backward(const T* dy, const T* x, const W* gamma, const float* mean,
                                         const float* rstd, T* dx, float* dgamma, float* dbeta,
                                         std::size_t rows, std::size_t cols) {
  return normkit::layer_norm_backward<Policy>(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols, cols,
                                              cols, cols);
}

template <class Policy, class T>
[[nodiscard]] status layer_norm_backward(const T* dy, const T* x, std::nullptr_t, const float* mean,
                                         const float* rstd, T* dx, float* dgamma, float* dbeta,
                                         std::size_t rows, std::size_t cols) {
  return normkit::layer_norm_backward<Policy>(dy, x, static_cast<const T*>(nullptr), mean, rstd, dx, dgamma,
                                              dbeta, rows, cols, cols, cols, cols);
}

// The partial half of the pair (backward_reduce.hpp): dx as layer_norm_backward, and in
// dgamma_partials / dbeta_partials (backward_blocks(rows) x cols floats each, or nullptr) the
// partial of each 64-row block of this call's rows.
template <class Policy, class T, class W>
[[nodiscard]] status layer_norm_backward_partial(const T* dy, const T* x, const W* gamma, const float* mean,
                                                 const float* rstd, T* dx, float* dgamma_partials,
                                                 float* dbeta_partials, std::size_t rows, std::size_t cols,
                                                 std::size_t dy_stride, std::size_t x_stride,
                                                 std::size_t dx_stride) {
  static_assert(is_storage_type<T>::value && is_storage_type<W>::value,
                "normkit: T and W must each be float, normkit::bf16 or normkit::fp16");
  return impl::backward_call<detail::layer_norm_backward_op, Policy, false, T>(
      {dy, x, nullptr, mean, rstd, dx, dgamma_partials, dbeta_partials, rows, cols, dy_stride, x_stride,
       dx_stride, impl::dx_streams<T>(rows, cols)},
      gamma, true);
}

template <class Policy, class T, class W>
[[nodiscard]] status layer_norm_backward_partial(const T* dy, const T* x, const W* gamma, const float* mean,
                                                 const float* rstd, T* dx, float* dgamma_partials,
                                                 float* dbeta_partials, std::size_t rows, std::size_t cols) {
  return normkit::layer_norm_backward_partial<Policy>(dy, x, gamma, mean, rstd, dx, dgamma_partials,
                                                      dbeta_partials, rows, cols, cols, cols, cols);
}

namespace reference {

// The scalar path always (the bits), with the same checks; contiguous rows.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status layer_norm_fwd(const In* x, const W* gamma, const W* beta, Out* y, float* mean,
                                    float* rstd, std::size_t rows, std::size_t cols, float eps) {
  return impl::forward_with_stats<detail::layer_norm_op, Policy, true, In, W, Out>(
      {x, gamma, beta, y, rows, cols, eps, cols, cols}, mean, rstd);
}

template <class Policy, class T, class W>
[[nodiscard]] status layer_norm_backward(const T* dy, const T* x, const W* gamma, const float* mean,
                                         const float* rstd, T* dx, float* dgamma, float* dbeta,
                                         std::size_t rows, std::size_t cols) {
  return impl::backward_call<detail::layer_norm_backward_op, Policy, true, T>(
      {dy, x, nullptr, mean, rstd, dx, dgamma, dbeta, rows, cols, cols, cols, cols, false}, gamma, false);
}

template <class Policy, class T>
[[nodiscard]] status layer_norm_backward(const T* dy, const T* x, std::nullptr_t, const float* mean,
                                         const float* rstd, T* dx, float* dgamma, float* dbeta,
                                         std::size_t rows, std::size_t cols) {
  return reference::layer_norm_backward<Policy>(dy, x, static_cast<const T*>(nullptr), mean, rstd, dx, dgamma,
                                                dbeta, rows, cols);
}

template <class Policy, class T, class W>
[[nodiscard]] status layer_norm_backward_partial(const T* dy, const T* x, const W* gamma, const float* mean,
                                                 const float* rstd, T* dx, float* dgamma_partials,
                                                 float* dbeta_partials, std::size_t rows, std::size_t cols) {
  return impl::backward_call<detail::layer_norm_backward_op, Policy, true, T>(
      {dy, x, nullptr, mean, rstd, dx, dgamma_partials, dbeta_partials, rows, cols, cols, cols, cols, false},
      gamma, true);
}

}  // namespace reference
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
