// SPDX-License-Identifier: MIT
// normkit: RMSNorm / LayerNorm with 8-bit outputs -- fp8 (normkit::e4m3, normkit::e5m2) or int8
// with a static per-tensor scale, a dynamic per-row scale (vLLM's
// rms_norm_dynamic_per_token_quant), or ggml's Q8_0 blocks (normkit::block_q8_0).
//
// Each call quantizes v, the fp32 value the policy would otherwise have rounded to its output
// type (round-once: n * g (+ beta); round-twice: f(Mid(n)) * g (+ beta); docs/contract.md), with
// the arithmetic of ops/quantize.hpp (docs/quantization.md has the formulas and their sources).
// The bits are those of the composition of the two references -- the norm with Out = float, then
// the quantization -- on every ISA. The call is a composite op (ops/norm_quant.hpp, run by
// dispatch/compose.hpp) over chunks of rows whose fp32 values stay in a per-thread scratch buffer
// in cache: the norm kernel writes a chunk's v, the quantize kernel reads it back, so the tensor
// is read once and the 1-byte output written once. A static scale skips the scratch where the
// build has the kernel (ops/norm_static_quant.hpp: x and gains of one type, e4m3 or int8, a named
// preset): the norm's output pass quantizes in registers. Same bits either way.
//
// Fused with the residual add (add_rms_norm_quant, add_layer_norm_quant, their _dynamic_quant and
// _q8_0 forms; x and residual of one storage type Res): exactly residual_add (add_norm.hpp:
// residual = Res(f(x) + f(residual)), round to nearest even) followed by the quantized norm above
// of what the policy normalizes -- the stored residual (residual_norm::stored_residual, every
// model preset), or the fp32 sums (residual_norm::fp32_sum, the flashinfer presets; In = float).
// One pass per chunk of rows: the add, the norm into the scratch, the quantization.
//
// Errors, touching nothing, in this order: invalid_eps; invalid_stride (x_stride < cols, q_stride
// < cols, or for Q8_0 y_stride < cols / 32 blocks; fused: residual_stride < cols); invalid_scale
// (static: scale <= 0, NaN or Inf; dynamic: scale_ub NaN or Inf); invalid_block (Q8_0: cols % 32
// != 0); then the buffers as for rms_norm: null_pointer (x, residual, q / y, row_scales),
// misaligned_pointer, size_overflow, overlapping_output (any output -- the residual, which is
// also read, included -- overlapping an input or another output; no in-place form);
// out_of_memory when the per-thread fp32 scratch of one chunk (at least one row: cols * 4 bytes,
// twice that for a fused fp32_sum call; dispatch/compose.hpp) cannot be allocated, before
// anything is written (a static call that runs its single kernel takes none). A static call's amax is set (0
// for an empty call) only when it returns ok. An empty call (rows or cols 0) checks no buffer after the
// scalars, except amax, which it writes: a misaligned amax is misaligned_pointer there too.
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int8_t

#include "core/fp8.hpp"
#include "core/policy.hpp"
#include "core/status.hpp"
#include "core/storage.hpp"
#include "core/type_list.hpp"
#include "core/validate.hpp"
#include "dispatch/run.hpp"
#include "ops/norm_quant.hpp"
#include "ops/quantize.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace impl {

// The quantization half of a call's bundle (ops/quantize.hpp, quantize_args; v, rows, cols and
// v_stride are each chunk's, set by the composite: ops/norm_quant.hpp).
template <class Q>
quantize_op::args<Q> static_quant(Q* q, float scale, float* amax, std::size_t q_stride) {
  return {nullptr, q, nullptr, nullptr, amax, 0, 0, 0, q_stride, scale, quant_mode::static_scale};
}
template <class Q>
quantize_op::args<Q> dynamic_quant(Q* q, float* row_scales, float scale_ub, std::size_t q_stride) {
  return {nullptr, q, nullptr, row_scales, nullptr, 0, 0, 0, q_stride, scale_ub, quant_mode::dynamic_row};
}
inline quantize_op::args<std::int8_t> q8_0_quant(block_q8_0* y, std::size_t y_stride) {
  return {nullptr, nullptr, y, nullptr, nullptr, 0, 0, 0, y_stride, 0.0f, quant_mode::q8_0};
}

// One call of a quantized norm, fused with the residual add or not, on the SIMD path or the
// reference (both through dispatch/run.hpp: validation, then the composite).
template <class Op, class Policy, bool Reference, class... Ts>
status quant_call(const typename Op::template args<Ts...>& a) {
  if constexpr (Reference)
    return call_reference<Op, Policy, Ts...>(a);
  else
    return call<Op, Policy, Ts...>(a);
}
template <class Norm, class Policy, bool Reference, class In, class W, class Q>
status norm_quant(const In* x, const W* gamma, const W* beta, std::size_t rows, std::size_t cols, float eps,
                  std::size_t x_stride, const quantize_op::args<Q>& quant) {
  return quant_call<norm_quant_op<Norm>, Policy, Reference, In, W, Q>(
      {x, gamma, beta, rows, cols, eps, x_stride, quant});
}
template <class Norm, class Policy, bool Reference, class Res, class W, class Q>
status add_norm_quant(const Res* x, Res* residual, const W* gamma, const W* beta, std::size_t rows,
                      std::size_t cols, float eps, std::size_t x_stride, std::size_t residual_stride,
                      const quantize_op::args<Q>& quant) {
  return quant_call<add_norm_quant_op<Norm>, Policy, Reference, Res, W, Q>(
      {x, residual, gamma, beta, rows, cols, eps, x_stride, residual_stride, quant});
}

template <class Policy, class In, class W, class Q>
constexpr bool norm_quant_types() {
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value,
                "normkit: In (Res) and W must each be float, normkit::bf16 or normkit::fp16");
  static_assert(contains<Q, quant_types>::value,
                "normkit: the quantized output must be normkit::e4m3, normkit::e5m2 or std::int8_t");
  return true;
}

template <class Policy>
constexpr bool layer_norm_policy() {
  static_assert(Policy::layer_norm_exact,
                "normkit: this preset's LayerNorm convention is not reproduced exactly (layer_norm.hpp)");
  return true;
}

}  // namespace impl

// ---- Static per-tensor scale: q = Q(v * scale), saturating (fp8: RNE to +-max; int8: RNE, clamp
// to [-128, 127]); a NaN v gives the canonical NaN (e4m3 0x7F, e5m2 0x7E) or int8 0. amax: null,
// or receives max |v| over the call (0 for an empty call; NaN when some v is NaN).

template <class Policy, class In, class W, class Q>
[[nodiscard]] status rms_norm_quant(const In* x, const W* gamma, Q* q, std::size_t rows, std::size_t cols,
                                    float eps, float scale, float* amax, std::size_t x_stride,
                                    std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, false>(x, gamma, static_cast<const W*>(nullptr), rows,
                                                              cols, eps, x_stride,
                                                              impl::static_quant(q, scale, amax, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status rms_norm_quant(const In* x, const W* gamma, Q* q, std::size_t rows, std::size_t cols,
                                    float eps, float scale, float* amax) {
  return normkit::rms_norm_quant<Policy>(x, gamma, q, rows, cols, eps, scale, amax, cols, cols);
}

template <class Policy, class In, class W, class Q>
[[nodiscard]] status layer_norm_quant(const In* x, const W* gamma, const W* beta, Q* q, std::size_t rows,
                                      std::size_t cols, float eps, float scale, float* amax,
                                      std::size_t x_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::norm_quant<detail::layer_norm_op, Policy, false>(x, gamma, beta, rows, cols, eps, x_stride,
                                                                impl::static_quant(q, scale, amax, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status layer_norm_quant(const In* x, const W* gamma, const W* beta, Q* q, std::size_t rows,
                                      std::size_t cols, float eps, float scale, float* amax) {
  return normkit::layer_norm_quant<Policy>(x, gamma, beta, q, rows, cols, eps, scale, amax, cols, cols);
}

// ---- Dynamic per-row scale (vLLM's rms_norm_dynamic_per_token_quant, ops/quantize.hpp):
// row_scales[r] = max(min(max_i |v_i|, scale_ub) / qmax, min_scale), scale_ub <= 0 meaning no
// cap; int8 q = int8(v * (1 / s)), fp8 q = Q(v / s). A row with a NaN v: row scale NaN, q the
// canonical NaN (fp8) or 0 (int8).

template <class Policy, class In, class W, class Q>
[[nodiscard]] status rms_norm_dynamic_quant(const In* x, const W* gamma, Q* q, float* row_scales,
                                            std::size_t rows, std::size_t cols, float eps, float scale_ub,
                                            std::size_t x_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, false>(
      x, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride,
      impl::dynamic_quant(q, row_scales, scale_ub, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status rms_norm_dynamic_quant(const In* x, const W* gamma, Q* q, float* row_scales,
                                            std::size_t rows, std::size_t cols, float eps, float scale_ub) {
  return normkit::rms_norm_dynamic_quant<Policy>(x, gamma, q, row_scales, rows, cols, eps, scale_ub, cols,
                                                 cols);
}

template <class Policy, class In, class W, class Q>
[[nodiscard]] status layer_norm_dynamic_quant(const In* x, const W* gamma, const W* beta, Q* q,
                                              float* row_scales, std::size_t rows, std::size_t cols,
                                              float eps, float scale_ub, std::size_t x_stride,
                                              std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::norm_quant<detail::layer_norm_op, Policy, false>(
      x, gamma, beta, rows, cols, eps, x_stride, impl::dynamic_quant(q, row_scales, scale_ub, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status layer_norm_dynamic_quant(const In* x, const W* gamma, const W* beta, Q* q,
                                              float* row_scales, std::size_t rows, std::size_t cols,
                                              float eps, float scale_ub) {
  return normkit::layer_norm_dynamic_quant<Policy>(x, gamma, beta, q, row_scales, rows, cols, eps, scale_ub,
                                                   cols, cols);
}

// ---- ggml Q8_0 blocks (quantize_row_q8_0_ref, ops/quantize.hpp): cols a multiple of 32; row r
// is cols / 32 blocks starting at y + r * y_stride (y_stride in blocks).

template <class Policy, class In, class W>
[[nodiscard]] status rms_norm_q8_0(const In* x, const W* gamma, block_q8_0* y, std::size_t rows,
                                   std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, std::int8_t>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, false>(
      x, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride, impl::q8_0_quant(y, y_stride));
}
template <class Policy, class In, class W>
[[nodiscard]] status rms_norm_q8_0(const In* x, const W* gamma, block_q8_0* y, std::size_t rows,
                                   std::size_t cols, float eps) {
  return normkit::rms_norm_q8_0<Policy>(x, gamma, y, rows, cols, eps, cols, cols / block_q8_0::size);
}

template <class Policy, class In, class W>
[[nodiscard]] status layer_norm_q8_0(const In* x, const W* gamma, const W* beta, block_q8_0* y,
                                     std::size_t rows, std::size_t cols, float eps, std::size_t x_stride,
                                     std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, std::int8_t>() && impl::layer_norm_policy<Policy>(),
                "");
  return impl::norm_quant<detail::layer_norm_op, Policy, false>(x, gamma, beta, rows, cols, eps, x_stride,
                                                                impl::q8_0_quant(y, y_stride));
}
template <class Policy, class In, class W>
[[nodiscard]] status layer_norm_q8_0(const In* x, const W* gamma, const W* beta, block_q8_0* y,
                                     std::size_t rows, std::size_t cols, float eps) {
  return normkit::layer_norm_q8_0<Policy>(x, gamma, beta, y, rows, cols, eps, cols, cols / block_q8_0::size);
}

// ---- Fused with the residual add (the header comment): residual = Res(f(x) + f(residual)), then
// the quantized norm above of the stored residual, or of the fp32 sums under fp32_sum. x,
// residual: rows x cols of Res with their own strides; gamma, beta: cols values of W, or null.

template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_rms_norm_quant(const Res* x, Res* residual, const W* gamma, Q* q, std::size_t rows,
                                        std::size_t cols, float eps, float scale, float* amax,
                                        std::size_t x_stride, std::size_t residual_stride,
                                        std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, Q>(), "");
  return impl::add_norm_quant<detail::rms_norm_op, Policy, false>(
      x, residual, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride, residual_stride,
      impl::static_quant(q, scale, amax, q_stride));
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_rms_norm_quant(const Res* x, Res* residual, const W* gamma, Q* q, std::size_t rows,
                                        std::size_t cols, float eps, float scale, float* amax) {
  return normkit::add_rms_norm_quant<Policy>(x, residual, gamma, q, rows, cols, eps, scale, amax, cols, cols,
                                             cols);
}

template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_layer_norm_quant(const Res* x, Res* residual, const W* gamma, const W* beta, Q* q,
                                          std::size_t rows, std::size_t cols, float eps, float scale,
                                          float* amax, std::size_t x_stride, std::size_t residual_stride,
                                          std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::add_norm_quant<detail::layer_norm_op, Policy, false>(
      x, residual, gamma, beta, rows, cols, eps, x_stride, residual_stride,
      impl::static_quant(q, scale, amax, q_stride));
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_layer_norm_quant(const Res* x, Res* residual, const W* gamma, const W* beta, Q* q,
                                          std::size_t rows, std::size_t cols, float eps, float scale,
                                          float* amax) {
  return normkit::add_layer_norm_quant<Policy>(x, residual, gamma, beta, q, rows, cols, eps, scale, amax,
                                               cols, cols, cols);
}

template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_rms_norm_dynamic_quant(const Res* x, Res* residual, const W* gamma, Q* q,
                                                float* row_scales, std::size_t rows, std::size_t cols,
                                                float eps, float scale_ub, std::size_t x_stride,
                                                std::size_t residual_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, Q>(), "");
  return impl::add_norm_quant<detail::rms_norm_op, Policy, false>(
      x, residual, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride, residual_stride,
      impl::dynamic_quant(q, row_scales, scale_ub, q_stride));
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_rms_norm_dynamic_quant(const Res* x, Res* residual, const W* gamma, Q* q,
                                                float* row_scales, std::size_t rows, std::size_t cols,
                                                float eps, float scale_ub) {
  return normkit::add_rms_norm_dynamic_quant<Policy>(x, residual, gamma, q, row_scales, rows, cols, eps,
                                                     scale_ub, cols, cols, cols);
}

template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_layer_norm_dynamic_quant(const Res* x, Res* residual, const W* gamma, const W* beta,
                                                  Q* q, float* row_scales, std::size_t rows, std::size_t cols,
                                                  float eps, float scale_ub, std::size_t x_stride,
                                                  std::size_t residual_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::add_norm_quant<detail::layer_norm_op, Policy, false>(
      x, residual, gamma, beta, rows, cols, eps, x_stride, residual_stride,
      impl::dynamic_quant(q, row_scales, scale_ub, q_stride));
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_layer_norm_dynamic_quant(const Res* x, Res* residual, const W* gamma, const W* beta,
                                                  Q* q, float* row_scales, std::size_t rows, std::size_t cols,
                                                  float eps, float scale_ub) {
  return normkit::add_layer_norm_dynamic_quant<Policy>(x, residual, gamma, beta, q, row_scales, rows, cols,
                                                       eps, scale_ub, cols, cols, cols);
}

template <class Policy, class Res, class W>
[[nodiscard]] status add_rms_norm_q8_0(const Res* x, Res* residual, const W* gamma, block_q8_0* y,
                                       std::size_t rows, std::size_t cols, float eps, std::size_t x_stride,
                                       std::size_t residual_stride, std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, std::int8_t>(), "");
  return impl::add_norm_quant<detail::rms_norm_op, Policy, false>(
      x, residual, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride, residual_stride,
      impl::q8_0_quant(y, y_stride));
}
template <class Policy, class Res, class W>
[[nodiscard]] status add_rms_norm_q8_0(const Res* x, Res* residual, const W* gamma, block_q8_0* y,
                                       std::size_t rows, std::size_t cols, float eps) {
  return normkit::add_rms_norm_q8_0<Policy>(x, residual, gamma, y, rows, cols, eps, cols, cols,
                                            cols / block_q8_0::size);
}

template <class Policy, class Res, class W>
[[nodiscard]] status add_layer_norm_q8_0(const Res* x, Res* residual, const W* gamma, const W* beta,
                                         block_q8_0* y, std::size_t rows, std::size_t cols, float eps,
                                         std::size_t x_stride, std::size_t residual_stride,
                                         std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, std::int8_t>() && impl::layer_norm_policy<Policy>(),
                "");
  return impl::add_norm_quant<detail::layer_norm_op, Policy, false>(
      x, residual, gamma, beta, rows, cols, eps, x_stride, residual_stride, impl::q8_0_quant(y, y_stride));
}
template <class Policy, class Res, class W>
[[nodiscard]] status add_layer_norm_q8_0(const Res* x, Res* residual, const W* gamma, const W* beta,
                                         block_q8_0* y, std::size_t rows, std::size_t cols, float eps) {
  return normkit::add_layer_norm_q8_0<Policy>(x, residual, gamma, beta, y, rows, cols, eps, cols, cols,
                                              cols / block_q8_0::size);
}

// ---- The references: the same checks, every stage on the scalar path (the bits).
namespace reference {

template <class Policy, class In, class W, class Q>
[[nodiscard]] status rms_norm_quant(const In* x, const W* gamma, Q* q, std::size_t rows, std::size_t cols,
                                    float eps, float scale, float* amax, std::size_t x_stride,
                                    std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, true>(x, gamma, static_cast<const W*>(nullptr), rows,
                                                             cols, eps, x_stride,
                                                             impl::static_quant(q, scale, amax, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status layer_norm_quant(const In* x, const W* gamma, const W* beta, Q* q, std::size_t rows,
                                      std::size_t cols, float eps, float scale, float* amax,
                                      std::size_t x_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::norm_quant<detail::layer_norm_op, Policy, true>(x, gamma, beta, rows, cols, eps, x_stride,
                                                               impl::static_quant(q, scale, amax, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status rms_norm_dynamic_quant(const In* x, const W* gamma, Q* q, float* row_scales,
                                            std::size_t rows, std::size_t cols, float eps, float scale_ub,
                                            std::size_t x_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, true>(
      x, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride,
      impl::dynamic_quant(q, row_scales, scale_ub, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status layer_norm_dynamic_quant(const In* x, const W* gamma, const W* beta, Q* q,
                                              float* row_scales, std::size_t rows, std::size_t cols,
                                              float eps, float scale_ub, std::size_t x_stride,
                                              std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::norm_quant<detail::layer_norm_op, Policy, true>(
      x, gamma, beta, rows, cols, eps, x_stride, impl::dynamic_quant(q, row_scales, scale_ub, q_stride));
}
template <class Policy, class In, class W>
[[nodiscard]] status rms_norm_q8_0(const In* x, const W* gamma, block_q8_0* y, std::size_t rows,
                                   std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, std::int8_t>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, true>(
      x, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride, impl::q8_0_quant(y, y_stride));
}
template <class Policy, class In, class W>
[[nodiscard]] status layer_norm_q8_0(const In* x, const W* gamma, const W* beta, block_q8_0* y,
                                     std::size_t rows, std::size_t cols, float eps, std::size_t x_stride,
                                     std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, std::int8_t>() && impl::layer_norm_policy<Policy>(),
                "");
  return impl::norm_quant<detail::layer_norm_op, Policy, true>(x, gamma, beta, rows, cols, eps, x_stride,
                                                               impl::q8_0_quant(y, y_stride));
}

// The fused forms' references.
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_rms_norm_quant(const Res* x, Res* residual, const W* gamma, Q* q, std::size_t rows,
                                        std::size_t cols, float eps, float scale, float* amax,
                                        std::size_t x_stride, std::size_t residual_stride,
                                        std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, Q>(), "");
  return impl::add_norm_quant<detail::rms_norm_op, Policy, true>(
      x, residual, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride, residual_stride,
      impl::static_quant(q, scale, amax, q_stride));
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_rms_norm_quant(const Res* x, Res* residual, const W* gamma, Q* q, std::size_t rows,
                                        std::size_t cols, float eps, float scale, float* amax) {
  return reference::add_rms_norm_quant<Policy>(x, residual, gamma, q, rows, cols, eps, scale, amax, cols,
                                               cols, cols);
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_layer_norm_quant(const Res* x, Res* residual, const W* gamma, const W* beta, Q* q,
                                          std::size_t rows, std::size_t cols, float eps, float scale,
                                          float* amax, std::size_t x_stride, std::size_t residual_stride,
                                          std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::add_norm_quant<detail::layer_norm_op, Policy, true>(
      x, residual, gamma, beta, rows, cols, eps, x_stride, residual_stride,
      impl::static_quant(q, scale, amax, q_stride));
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_layer_norm_quant(const Res* x, Res* residual, const W* gamma, const W* beta, Q* q,
                                          std::size_t rows, std::size_t cols, float eps, float scale,
                                          float* amax) {
  return reference::add_layer_norm_quant<Policy>(x, residual, gamma, beta, q, rows, cols, eps, scale, amax,
                                                 cols, cols, cols);
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_rms_norm_dynamic_quant(const Res* x, Res* residual, const W* gamma, Q* q,
                                                float* row_scales, std::size_t rows, std::size_t cols,
                                                float eps, float scale_ub, std::size_t x_stride,
                                                std::size_t residual_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, Q>(), "");
  return impl::add_norm_quant<detail::rms_norm_op, Policy, true>(
      x, residual, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride, residual_stride,
      impl::dynamic_quant(q, row_scales, scale_ub, q_stride));
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_rms_norm_dynamic_quant(const Res* x, Res* residual, const W* gamma, Q* q,
                                                float* row_scales, std::size_t rows, std::size_t cols,
                                                float eps, float scale_ub) {
  return reference::add_rms_norm_dynamic_quant<Policy>(x, residual, gamma, q, row_scales, rows, cols, eps,
                                                       scale_ub, cols, cols, cols);
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_layer_norm_dynamic_quant(const Res* x, Res* residual, const W* gamma, const W* beta,
                                                  Q* q, float* row_scales, std::size_t rows, std::size_t cols,
                                                  float eps, float scale_ub, std::size_t x_stride,
                                                  std::size_t residual_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::add_norm_quant<detail::layer_norm_op, Policy, true>(
      x, residual, gamma, beta, rows, cols, eps, x_stride, residual_stride,
      impl::dynamic_quant(q, row_scales, scale_ub, q_stride));
}
template <class Policy, class Res, class W, class Q>
[[nodiscard]] status add_layer_norm_dynamic_quant(const Res* x, Res* residual, const W* gamma, const W* beta,
                                                  Q* q, float* row_scales, std::size_t rows, std::size_t cols,
                                                  float eps, float scale_ub) {
  return reference::add_layer_norm_dynamic_quant<Policy>(x, residual, gamma, beta, q, row_scales, rows, cols,
                                                         eps, scale_ub, cols, cols, cols);
}
template <class Policy, class Res, class W>
[[nodiscard]] status add_rms_norm_q8_0(const Res* x, Res* residual, const W* gamma, block_q8_0* y,
                                       std::size_t rows, std::size_t cols, float eps, std::size_t x_stride,
                                       std::size_t residual_stride, std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, std::int8_t>(), "");
  return impl::add_norm_quant<detail::rms_norm_op, Policy, true>(
      x, residual, gamma, static_cast<const W*>(nullptr), rows, cols, eps, x_stride, residual_stride,
      impl::q8_0_quant(y, y_stride));
}
template <class Policy, class Res, class W>
[[nodiscard]] status add_rms_norm_q8_0(const Res* x, Res* residual, const W* gamma, block_q8_0* y,
                                       std::size_t rows, std::size_t cols, float eps) {
  return reference::add_rms_norm_q8_0<Policy>(x, residual, gamma, y, rows, cols, eps, cols, cols,
                                              cols / block_q8_0::size);
}
template <class Policy, class Res, class W>
[[nodiscard]] status add_layer_norm_q8_0(const Res* x, Res* residual, const W* gamma, const W* beta,
                                         block_q8_0* y, std::size_t rows, std::size_t cols, float eps,
                                         std::size_t x_stride, std::size_t residual_stride,
                                         std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, Res, W, std::int8_t>() && impl::layer_norm_policy<Policy>(),
                "");
  return impl::add_norm_quant<detail::layer_norm_op, Policy, true>(
      x, residual, gamma, beta, rows, cols, eps, x_stride, residual_stride, impl::q8_0_quant(y, y_stride));
}
template <class Policy, class Res, class W>
[[nodiscard]] status add_layer_norm_q8_0(const Res* x, Res* residual, const W* gamma, const W* beta,
                                         block_q8_0* y, std::size_t rows, std::size_t cols, float eps) {
  return reference::add_layer_norm_q8_0<Policy>(x, residual, gamma, beta, y, rows, cols, eps, cols, cols,
                                                cols / block_q8_0::size);
}

}  // namespace reference
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
