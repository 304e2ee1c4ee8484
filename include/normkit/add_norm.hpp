// SPDX-License-Identifier: MIT
// normkit: the residual add, alone and fused in front of the norms -- a pre-norm decoder block's
//   residual += x;  y = norm(residual)
// in one call that reads x and the residual once from memory (docs/contract.md, fused residual
// add). Which value the norm reads is the policy's residual knob (core/policy.hpp): the residual
// as stored (every model preset: HF transformers, vLLM) or the fp32 sum (flashinfer presets,
// fp32_sum_residual<P>). Same bits on every ISA, alignment, stride, row count and row position.
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t, std::nullptr_t
#include <type_traits>  // std::is_same, std::remove_cv_t, std::remove_pointer_t

#include "core/policy.hpp"
#include "core/status.hpp"
#include "core/storage.hpp"
#include "dispatch/run.hpp"
#include "ops/add_norm.hpp"
#include "ops/residual_add.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {
// The gain type of a gamma / beta argument: its pointee, or (nullptr) the other's, or Res's.
template <class G>
using pointee_t = std::remove_cv_t<std::remove_pointer_t<G>>;
template <class G, class B, class Res>
using gain_type_t =
    std::conditional_t<!std::is_same<G, std::nullptr_t>::value, pointee_t<G>,
                       std::conditional_t<!std::is_same<B, std::nullptr_t>::value, pointee_t<B>, Res>>;
template <class G, class W>
constexpr bool gain_arg_ok =
    std::is_same<G, std::nullptr_t>::value || std::is_same<G, const W*>::value || std::is_same<G, W*>::value;
}  // namespace detail

// residual[r][i] = Res(f(x[r][i]) + f(residual[r][i])): one fp32 add, round to nearest even, a NaN
// sum stored as the canonical NaN. Statuses as rms_norm; x and residual must not overlap.
template <class Res>
[[nodiscard]] status residual_add(const Res* x, Res* residual, std::size_t rows, std::size_t cols,
                                  std::size_t x_stride, std::size_t residual_stride) {
  static_assert(is_storage_type<Res>::value, "normkit: Res must be float, normkit::bf16 or normkit::fp16");
  return impl::call<detail::residual_add_op, round_once, Res>(
      {x, residual, nullptr, rows, cols, x_stride, residual_stride});
}
template <class Res>
[[nodiscard]] status residual_add(const Res* x, Res* residual, std::size_t rows, std::size_t cols) {
  return normkit::residual_add(x, residual, rows, cols, cols, cols);
}

// The fused add + RMSNorm: per row, residual = Res(f(x) + f(residual)), then
// y = rms_norm<Policy>(the stored residual, or the fp32 sums under residual_norm::fp32_sum).
// x, residual: rows x cols (Res = float, bf16 or fp16); gamma: cols values of W, or nullptr;
// y: rows x cols of Out. y may be x exactly (same type and stride: the output over the input).
// Returns, touching nothing: invalid_eps, invalid_stride (a stride < cols), null_pointer,
// misaligned_pointer, size_overflow, overlapping_output (the residual overlapping x, gamma or y;
// y overlapping anything but x exactly), out_of_memory (fp32_sum mode, its scratch).
template <class Policy, class Res, class G, class Out>
[[nodiscard]] status add_rms_norm(const Res* x, Res* residual, G gamma, Out* y, std::size_t rows,
                                  std::size_t cols, float eps, std::size_t x_stride,
                                  std::size_t residual_stride, std::size_t y_stride) {
  using W = detail::gain_type_t<G, std::nullptr_t, Res>;
  static_assert(is_storage_type<Res>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: Res, W and Out must each be float, normkit::bf16 or normkit::fp16");
  static_assert(detail::gain_arg_ok<G, W>, "normkit: gamma must be a pointer to W or nullptr");
  return impl::call<detail::add_rms_norm_op, Policy, Res, W, Out>(
      {x, residual, gamma, nullptr, y, rows, cols, eps, x_stride, residual_stride, y_stride});
}
template <class Policy, class Res, class G, class Out>
[[nodiscard]] status add_rms_norm(const Res* x, Res* residual, G gamma, Out* y, std::size_t rows,
                                  std::size_t cols, float eps) {
  return normkit::add_rms_norm<Policy>(x, residual, gamma, y, rows, cols, eps, cols, cols, cols);
}

// The fused add + LayerNorm: as add_rms_norm, with beta (cols values of W, or nullptr).
template <class Policy, class Res, class G, class B, class Out>
[[nodiscard]] status add_layer_norm(const Res* x, Res* residual, G gamma, B beta, Out* y, std::size_t rows,
                                    std::size_t cols, float eps, std::size_t x_stride,
                                    std::size_t residual_stride, std::size_t y_stride) {
  using W = detail::gain_type_t<G, B, Res>;
  static_assert(
      Policy::layer_norm_exact,
      "normkit: this policy's LayerNorm has a rounding layer_norm does not model (core/policy.hpp)");
  static_assert(is_storage_type<Res>::value && is_storage_type<W>::value && is_storage_type<Out>::value,
                "normkit: Res, W and Out must each be float, normkit::bf16 or normkit::fp16");
  static_assert(detail::gain_arg_ok<G, W> && detail::gain_arg_ok<B, W>,
                "normkit: gamma and beta must be pointers to one type W, or nullptr");
  return impl::call<detail::add_layer_norm_op, Policy, Res, W, Out>(
      {x, residual, gamma, beta, y, rows, cols, eps, x_stride, residual_stride, y_stride});
}
template <class Policy, class Res, class G, class B, class Out>
[[nodiscard]] status add_layer_norm(const Res* x, Res* residual, G gamma, B beta, Out* y, std::size_t rows,
                                    std::size_t cols, float eps) {
  return normkit::add_layer_norm<Policy>(x, residual, gamma, beta, y, rows, cols, eps, cols, cols, cols);
}

namespace reference {

// The scalar references, with the same checks (normkit::reference, reference.hpp).
template <class Policy, class Res, class G, class Out>
[[nodiscard]] status add_rms_norm(const Res* x, Res* residual, G gamma, Out* y, std::size_t rows,
                                  std::size_t cols, float eps, std::size_t x_stride,
                                  std::size_t residual_stride, std::size_t y_stride) {
  using W = detail::gain_type_t<G, std::nullptr_t, Res>;
  return impl::call_reference<detail::add_rms_norm_op, Policy, Res, W, Out>(
      {x, residual, gamma, nullptr, y, rows, cols, eps, x_stride, residual_stride, y_stride});
}
template <class Policy, class Res, class G, class Out>
[[nodiscard]] status add_rms_norm(const Res* x, Res* residual, G gamma, Out* y, std::size_t rows,
                                  std::size_t cols, float eps) {
  return reference::add_rms_norm<Policy>(x, residual, gamma, y, rows, cols, eps, cols, cols, cols);
}
template <class Policy, class Res, class G, class B, class Out>
[[nodiscard]] status add_layer_norm(const Res* x, Res* residual, G gamma, B beta, Out* y, std::size_t rows,
                                    std::size_t cols, float eps, std::size_t x_stride,
                                    std::size_t residual_stride, std::size_t y_stride) {
  using W = detail::gain_type_t<G, B, Res>;
  return impl::call_reference<detail::add_layer_norm_op, Policy, Res, W, Out>(
      {x, residual, gamma, beta, y, rows, cols, eps, x_stride, residual_stride, y_stride});
}
template <class Policy, class Res, class G, class B, class Out>
[[nodiscard]] status add_layer_norm(const Res* x, Res* residual, G gamma, B beta, Out* y, std::size_t rows,
                                    std::size_t cols, float eps) {
  return reference::add_layer_norm<Policy>(x, residual, gamma, beta, y, rows, cols, eps, cols, cols, cols);
}
template <class Res>
[[nodiscard]] status residual_add(const Res* x, Res* residual, std::size_t rows, std::size_t cols,
                                  std::size_t x_stride, std::size_t residual_stride) {
  return impl::call_reference<detail::residual_add_op, round_once, Res>(
      {x, residual, nullptr, rows, cols, x_stride, residual_stride});
}

}  // namespace reference
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
