// SPDX-License-Identifier: MIT
// normkit: RMSNorm forward.
//
//   y[r][i] = Out(policy(f(x[r][i]) / sqrt(mean_i f(x[r][i])^2 + eps), gamma[i]))
//
// for every row r, with the exact rounding points, reduction order and special-value rules of
// docs/contract.md. Same bits on every ISA, alignment, stride, row count and row position.
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t, std::nullptr_t

#include "core/policy.hpp"
#include "core/status.hpp"
#include "core/storage.hpp"
#include "dispatch/run.hpp"
#include "ops/rms_norm.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

// x: rows x cols (row stride x_stride elements), gamma: cols values or nullptr (no gain),
// y: rows x cols (row stride y_stride). y == x (same type and stride) runs in place.
// Returns, touching nothing: invalid_eps (eps < 0 / NaN / Inf), invalid_stride (stride < cols),
// null_pointer (null x / y with non-zero sizes), misaligned_pointer, size_overflow (extent beyond
// PTRDIFF_MAX), overlapping_output (y overlapping x or gamma otherwise), checked in that order.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols,
                              float eps, std::size_t x_stride, std::size_t y_stride) {
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: In, W and Out must each be float, normkit::bf16 or normkit::fp16");
  return impl::call<detail::rms_norm_op, Policy, In, W, Out>(
      {x, gamma, y, rows, cols, eps, x_stride, y_stride});
}

// Contiguous rows.
template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols,
                              float eps) {
  return normkit::rms_norm<Policy>(x, gamma, y, rows, cols, eps, cols, cols);
}

// No gain (e.g. Gemma3n's weightless norm): gamma == nullptr means g = 1.
template <class Policy, class In, class Out>
[[nodiscard]] status rms_norm(const In* x, std::nullptr_t, Out* y, std::size_t rows, std::size_t cols,
                              float eps, std::size_t x_stride, std::size_t y_stride) {
  return normkit::rms_norm<Policy>(x, static_cast<const In*>(nullptr), y, rows, cols, eps, x_stride,
                                   y_stride);
}

template <class Policy, class In, class Out>
[[nodiscard]] status rms_norm(const In* x, std::nullptr_t, Out* y, std::size_t rows, std::size_t cols,
                              float eps) {
  return normkit::rms_norm<Policy>(x, static_cast<const In*>(nullptr), y, rows, cols, eps, cols, cols);
}

// Head-wise RMSNorm (per-head Q/K norms: Qwen3, Gemma3, OLMo2 q_norm / k_norm; Cohere's per-head
// gains) over views of [tokens, heads, head_dim] read in place, e.g. from a packed QKV buffer:
// element i of head h of token t is x[t * x_token_stride + h * x_head_stride + i] (y likewise).
// gamma: head_dim values shared by every head (gamma_head_stride == 0), or one vector per head,
// gamma_head_stride elements apart (>= head_dim; head_dim for a [heads, head_dim] array); nullptr
// for no gain. Every head is one row of rms_norm: the same bits as a call per row.
// Statuses as rms_norm, plus invalid_stride when a stride is below head_dim, when a view would
// overlap itself (two heads sharing an element), or gamma_head_stride is in (0, head_dim).
template <class Policy, class In, class W, class Out>
[[nodiscard]] status rms_norm_heads(const In* x, const W* gamma, Out* y, std::size_t tokens,
                                    std::size_t heads, std::size_t head_dim, float eps,
                                    std::size_t x_token_stride, std::size_t x_head_stride,
                                    std::size_t y_token_stride, std::size_t y_head_stride,
                                    std::size_t gamma_head_stride = 0) {
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: In, W and Out must each be float, normkit::bf16 or normkit::fp16");
  return impl::call<detail::rms_norm_op, Policy, In, W, Out>(
      {x, gamma, y, tokens, head_dim, eps, x_token_stride, y_token_stride, heads, x_head_stride,
       y_head_stride, gamma_head_stride});
}

// In place (the usual q_norm / k_norm on a packed QKV buffer).
template <class Policy, class T, class W>
[[nodiscard]] status rms_norm_heads(T* x, const W* gamma, std::size_t tokens, std::size_t heads,
                                    std::size_t head_dim, float eps, std::size_t token_stride,
                                    std::size_t head_stride, std::size_t gamma_head_stride = 0) {
  return normkit::rms_norm_heads<Policy>(static_cast<const T*>(x), gamma, x, tokens, heads, head_dim, eps,
                                         token_stride, head_stride, token_stride, head_stride,
                                         gamma_head_stride);
}

// On the caller's thread pool: parallel_for(std::size_t n_tasks, F&& task) must run task(i) for
// every i < n_tasks, on any threads in any order, and return when all are done. The rows are
// split into tasks of about a megabyte (none for calls under half a megabyte, which run on the
// calling thread); the bits are those of the single-threaded call for any split, order and thread
// count, and each task runs in the caller's floating-point environment. gamma: as above, or
// nullptr. Same checks and statuses, made once before any task runs.
template <class Policy, class ParallelFor, class In, class G, class Out,
          impl::if_parallel_for<ParallelFor> = 0>
[[nodiscard]] status rms_norm(ParallelFor&& parallel_for, const In* x, G gamma, Out* y, std::size_t rows,
                              std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  using W = impl::weight_of<In, G>;
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: In, W and Out must each be float, normkit::bf16 or normkit::fp16");
  const W* const g = gamma;
  return impl::call_parallel<detail::rms_norm_op, Policy, In, W, Out>(
      parallel_for, {x, g, y, rows, cols, eps, x_stride, y_stride});
}

template <class Policy, class ParallelFor, class In, class G, class Out,
          impl::if_parallel_for<ParallelFor> = 0>
[[nodiscard]] status rms_norm(ParallelFor&& parallel_for, const In* x, G gamma, Out* y, std::size_t rows,
                              std::size_t cols, float eps) {
  return normkit::rms_norm<Policy>(parallel_for, x, gamma, y, rows, cols, eps, cols, cols);
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
