// SPDX-License-Identifier: MIT
// normkit: RMSNorm training: the forward pass that saves its fp32 statistics, and the backward
// pass (docs/contract.md, "Saved statistics" and "Backward").
//
//   rms_norm_fwd:       y as rms_norm (the same bits), rstd[r] = the row's 1 / sqrt(ms + eps)
//   rms_norm_backward:  n = f(x) * rstd, t = f(dy) * g, b = mean(t * n) (canonical sum),
//                       dx = T((t - n * b) * rstd), dgamma = sum over rows of f(dy) * n
//
// dgamma is fp32, overwritten, summed in a fixed order of 64-row blocks and a fixed tree
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
#include "ops/rms_norm.hpp"
#include "ops/rms_norm_backward.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

// y exactly as rms_norm<Policy>(x, gamma, y, ...); rstd: rows floats, the forward's factor
// (times 2^-e on the overflow path; NaN for a row with a NaN or Inf). Statuses as rms_norm, rstd
// counting as an output (null_pointer, misaligned_pointer, overlapping_output).
template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm_fwd(const In* x, const W* gamma, Out* y, float* rstd, std::size_t rows,
                                  std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: In, W and Out must each be float, normkit::bf16 or normkit::fp16");
  return impl::forward_with_stats<detail::rms_norm_op, Policy, false, In, W, Out>(
      {x, gamma, y, rows, cols, eps, x_stride, y_stride}, nullptr, rstd);
}

template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm_fwd(const In* x, const W* gamma, Out* y, float* rstd, std::size_t rows,
                                  std::size_t cols, float eps) {
  return normkit::rms_norm_fwd<Policy>(x, gamma, y, rstd, rows, cols, eps, cols, cols);
}

template <class Policy, class In, class Out>
[[nodiscard]] status rms_norm_fwd(const In* x, std::nullptr_t, Out* y, float* rstd, std::size_t rows,
                                  std::size_t cols, float eps) {
  return normkit::rms_norm_fwd<Policy>(x, static_cast<const In*>(nullptr), y, rstd, rows, cols, eps, cols,
                                       cols);
}

// dy, x, dx: rows x cols of one storage type T (row strides dy_stride, x_stride, dx_stride);
// gamma: cols values or nullptr (g = 1); rstd: what rms_norm_fwd saved; dgamma: cols floats, or
// nullptr when not wanted. dx may be dy (same stride: in place). Zero rows give dgamma = +0.
// Returns, touching nothing: invalid_stride, null_pointer, misaligned_pointer, size_overflow,
// overlapping_output, in that order.
template <class Policy, class T, class W>
[[nodiscard]] status rms_norm_backward(const T* dy, const T* x, const W* gamma, const float* rstd, T* dx,
                                       float* dgamma, std::size_t rows, std::size_t cols,
                                       std::size_t dy_stride, std::size_t x_stride, std::size_t dx_stride) {
  static_assert(is_storage_type<T>::value && is_storage_type<W>::value,
                "normkit: T and W must each be float, normkit::bf16 or normkit::fp16");
  return impl::backward_call<detail::rms_norm_backward_op, Policy, false, T>(
      {dy, x, nullptr, rstd, dx, dgamma, rows, cols, dy_stride, x_stride, dx_stride,
       impl::dx_streams<T>(rows, cols)},
      gamma, false);
}

template <class Policy, class T, class W>
[[nodiscard]] status rms_norm_backward(const T* dy, const T* x, const W* gamma, const float* rstd, T* dx,
                                       float* dgamma, std::size_t rows, std::size_t cols) {
  return normkit::rms_norm_backward<Policy>(dy, x, gamma, rstd, dx, dgamma, rows, cols, cols, cols, cols);
}

template <class Policy, class T>
[[nodiscard]] status rms_norm_backward(const T* dy, const T* x, std::nullptr_t, const float* rstd, T* dx,
                                       float* dgamma, std::size_t rows, std::size_t cols) {
  return normkit::rms_norm_backward<Policy>(dy, x, static_cast<const T*>(nullptr), rstd, dx, dgamma, rows,
                                            cols, cols, cols, cols);
}

// The partial half of the pair (backward_reduce.hpp): dx as rms_norm_backward, and in
// dgamma_partials (backward_blocks(rows) x cols floats, or nullptr) the partial of each 64-row
// block of this call's rows.
template <class Policy, class T, class W>
[[nodiscard]] status rms_norm_backward_partial(const T* dy, const T* x, const W* gamma, const float* rstd,
                                               T* dx, float* dgamma_partials, std::size_t rows,
                                               std::size_t cols, std::size_t dy_stride, std::size_t x_stride,
                                               std::size_t dx_stride) {
  static_assert(is_storage_type<T>::value && is_storage_type<W>::value,
                "normkit: T and W must each be float, normkit::bf16 or normkit::fp16");
  return impl::backward_call<detail::rms_norm_backward_op, Policy, false, T>(
      {dy, x, nullptr, rstd, dx, dgamma_partials, rows, cols, dy_stride, x_stride, dx_stride,
       impl::dx_streams<T>(rows, cols)},
      gamma, true);
}

template <class Policy, class T, class W>
[[nodiscard]] status rms_norm_backward_partial(const T* dy, const T* x, const W* gamma, const float* rstd,
                                               T* dx, float* dgamma_partials, std::size_t rows,
                                               std::size_t cols) {
  return normkit::rms_norm_backward_partial<Policy>(dy, x, gamma, rstd, dx, dgamma_partials, rows, cols, cols,
                                                    cols, cols);
}

namespace reference {

// The scalar path always (the bits), with the same checks; contiguous rows.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm_fwd(const In* x, const W* gamma, Out* y, float* rstd, std::size_t rows,
                                  std::size_t cols, float eps) {
  return impl::forward_with_stats<detail::rms_norm_op, Policy, true, In, W, Out>(
      {x, gamma, y, rows, cols, eps, cols, cols}, nullptr, rstd);
}

template <class Policy, class T, class W>
[[nodiscard]] status rms_norm_backward(const T* dy, const T* x, const W* gamma, const float* rstd, T* dx,
                                       float* dgamma, std::size_t rows, std::size_t cols) {
  return impl::backward_call<detail::rms_norm_backward_op, Policy, true, T>(
      {dy, x, nullptr, rstd, dx, dgamma, rows, cols, cols, cols, cols, false}, gamma, false);
}

template <class Policy, class T>
[[nodiscard]] status rms_norm_backward(const T* dy, const T* x, std::nullptr_t, const float* rstd, T* dx,
                                       float* dgamma, std::size_t rows, std::size_t cols) {
  return reference::rms_norm_backward<Policy>(dy, x, static_cast<const T*>(nullptr), rstd, dx, dgamma, rows,
                                              cols);
}

template <class Policy, class T, class W>
[[nodiscard]] status rms_norm_backward_partial(const T* dy, const T* x, const W* gamma, const float* rstd,
                                               T* dx, float* dgamma_partials, std::size_t rows,
                                               std::size_t cols) {
  return impl::backward_call<detail::rms_norm_backward_op, Policy, true, T>(
      {dy, x, nullptr, rstd, dx, dgamma_partials, rows, cols, cols, cols, cols, false}, gamma, true);
}

}  // namespace reference
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
