// SPDX-License-Identifier: MIT
// normkit: RMSNorm / LayerNorm with 8-bit outputs -- fp8 (normkit::e4m3, normkit::e5m2) or int8
// with a static per-tensor scale, a dynamic per-row scale (vLLM's
// rms_norm_dynamic_per_token_quant), or ggml's Q8_0 blocks (normkit::block_q8_0).
//
// Each call quantizes v, the fp32 value the policy would otherwise have rounded to its output
// type (round-once: n * g (+ beta); round-twice: f(Mid(n)) * g (+ beta); docs/contract.md), with
// the arithmetic of ops/quantize.hpp (docs/quantization.md has the formulas and their sources).
// The bits are those of the composition of the two references -- the norm with Out = float, then
// the quantization -- on every ISA. The call runs them over chunks of rows whose fp32 values stay
// in a per-thread scratch buffer in cache: the norm kernel writes a chunk's v, the quantize kernel
// reads it back, so the tensor is read once and the 1-byte output written once.
//
// Errors, touching nothing, in this order: invalid_eps; invalid_stride (x_stride < cols, q_stride
// < cols, or for Q8_0 y_stride < cols / 32 blocks); invalid_scale (static: scale <= 0, NaN or
// Inf; dynamic: scale_ub NaN or Inf); invalid_block (Q8_0: cols % 32 != 0); then the buffers as
// for rms_norm: null_pointer (x, q / y, row_scales), misaligned_pointer, size_overflow,
// overlapping_output (any output overlapping an input or another output; no in-place form);
// out_of_memory when the per-thread fp32 scratch of one chunk (at least one row: cols * 4 bytes,
// dispatch/compose.hpp) cannot be allocated, before anything is written.
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int8_t
#include <cstdlib>  // std::malloc, std::free

#include "core/fp8.hpp"
#include "core/policy.hpp"
#include "core/status.hpp"
#include "core/storage.hpp"
#include "core/type_list.hpp"
#include "core/validate.hpp"
#include "dispatch/run.hpp"
#include "ops/layer_norm.hpp"
#include "ops/quantize.hpp"
#include "ops/rms_norm.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace impl {

// One quantized-norm call: the norm's operands, and the quantization's (v unset).
template <class In, class W, class Q>
struct norm_quant_call {
  const In* x;
  const W* gamma;
  const W* beta;  // LayerNorm only
  std::size_t rows, cols;
  float eps;
  std::size_t x_stride;
  quantize_op::args<Q> quant;  // q / blocks / scales / amax, q_stride, scale, mode
};

template <class In, class W, class Q>
status validate_norm_quant(const norm_quant_call<In, W, Q>& c) {
  const quantize_op::args<Q>& a = c.quant;
  if (const status st = check_eps(c.eps); st != status::ok)
    return st;
  const bool blocks = a.mode == quant_mode::q8_0;
  const std::size_t out_cols = blocks ? c.cols / block_q8_0::size : c.cols;
  if (c.x_stride < c.cols || a.q_stride < out_cols)
    return status::invalid_stride;
  if (const status st = check_quant_scalars(a.mode, a.scale, c.cols); st != status::ok)
    return st;
  if (c.rows == 0 || c.cols == 0)
    return status::ok;
  const bool dynamic = a.mode == quant_mode::dynamic_row, stat = a.mode == quant_mode::static_scale;
  const operand in[] = {operand_of(c.x, c.rows, c.cols, c.x_stride),
                        operand_of(c.gamma, 1, c.cols, c.cols, true),
                        operand_of(c.beta, 1, c.cols, c.cols, true)};
  const operand out[] = {
      blocks ? operand_of(a.blocks, c.rows, out_cols, a.q_stride)
             : operand_of(a.q, c.rows, c.cols, a.q_stride),
      operand_of(dynamic ? a.scales : static_cast<float*>(nullptr), c.rows, 1, 1, !dynamic),
      operand_of(stat ? a.amax : static_cast<float*>(nullptr), 1, 1, 1, true)};
  return check_operands(in, out, {-1, -1, -1});
}

// The norm's argument bundle for rows [r0, r0 + n), writing their fp32 values to v.
template <class In, class W, class Q>
rms_norm_op::args<In, W, float> norm_chunk_args(const norm_quant_call<In, W, Q>& c, rms_norm_op,
                                                std::size_t r0, std::size_t n, float* v) {
  return {c.x + r0 * c.x_stride, c.gamma, v, n, c.cols, c.eps, c.x_stride, c.cols};
}
template <class In, class W, class Q>
layer_norm_op::args<In, W, float> norm_chunk_args(const norm_quant_call<In, W, Q>& c, layer_norm_op,
                                                  std::size_t r0, std::size_t n, float* v) {
  return {c.x + r0 * c.x_stride, c.gamma, c.beta, v, n, c.cols, c.eps, c.x_stride, c.cols};
}

// Validation, then per chunk of rows the norm (Out = float) into the scratch and the quantization
// of the scratch. Reference: both stages run their scalar references -- the bits.
template <class NormOp, class Policy, bool Reference, class In, class W, class Q>
status norm_quant(const norm_quant_call<In, W, Q>& c) {
  if (const status st = validate_norm_quant(c); st != status::ok)
    return st;
  const quantize_op::args<Q>& a = c.quant;
  const bool amax = a.mode == quant_mode::static_scale && a.amax;
  if (c.rows == 0 || c.cols == 0) {
    if (amax)
      *a.amax = 0.0f;  // the max over no value
    return status::ok;
  }
  const std::size_t row_bytes = c.cols * sizeof(float);
  const std::size_t chunk_max = compose_chunk_bytes / row_bytes > 1 ? compose_chunk_bytes / row_bytes : 1;
  const std::size_t chunk = chunk_max < c.rows ? chunk_max : c.rows;
  float* const v = scratch_f32(chunk * c.cols);  // dispatch/compose.hpp
  if (!v)
    return status::out_of_memory;
  if (amax)
    *a.amax = 0.0f;
  for (std::size_t r0 = 0; r0 < c.rows; r0 += chunk) {
    const std::size_t n = c.rows - r0 < chunk ? c.rows - r0 : chunk;
    const typename NormOp::template args<In, W, float> na = norm_chunk_args(c, NormOp{}, r0, n, v);
    quantize_op::args<Q> qa = a;
    qa.v = v;
    qa.v_stride = c.cols;
    qa.rows = n;
    if (a.q)
      qa.q = a.q + r0 * a.q_stride;
    if (a.blocks)
      qa.blocks = a.blocks + r0 * a.q_stride;
    if (a.scales)
      qa.scales = a.scales + r0;
    if constexpr (Reference) {
      NormOp::template reference<Policy, In, W, float>(na);
      quantize_op::reference<round_once, Q>(qa);
    } else {
      run<NormOp, Policy, In, W, float>(na);
      run<quantize_op, round_once, Q>(qa);
    }
  }
  return status::ok;
}

template <class Policy, class In, class W, class Q>
constexpr bool norm_quant_types() {
  static_assert(is_storage_type<In>::value && is_storage_type<W>::value,
                "normkit: In and W must each be float, normkit::bf16 or normkit::fp16");
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

template <class In, class W, class Q>
norm_quant_call<In, W, Q> static_call(const In* x, const W* gamma, const W* beta, Q* q, std::size_t rows,
                                      std::size_t cols, float eps, float scale, float* amax,
                                      std::size_t x_stride, std::size_t q_stride) {
  return {x,
          gamma,
          beta,
          rows,
          cols,
          eps,
          x_stride,
          {nullptr, q, nullptr, nullptr, amax, rows, cols, cols, q_stride, scale, quant_mode::static_scale}};
}
template <class In, class W, class Q>
norm_quant_call<In, W, Q> dynamic_call(const In* x, const W* gamma, const W* beta, Q* q, float* row_scales,
                                       std::size_t rows, std::size_t cols, float eps, float scale_ub,
                                       std::size_t x_stride, std::size_t q_stride) {
  return {x,
          gamma,
          beta,
          rows,
          cols,
          eps,
          x_stride,
          {nullptr, q, nullptr, row_scales, nullptr, rows, cols, cols, q_stride, scale_ub,
           quant_mode::dynamic_row}};
}
template <class In, class W>
norm_quant_call<In, W, std::int8_t> q8_0_call(const In* x, const W* gamma, const W* beta, block_q8_0* y,
                                              std::size_t rows, std::size_t cols, float eps,
                                              std::size_t x_stride, std::size_t y_stride) {
  return {
      x,        gamma,
      beta,     rows,
      cols,     eps,
      x_stride, {nullptr, nullptr, y, nullptr, nullptr, rows, cols, cols, y_stride, 0.0f, quant_mode::q8_0}};
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
  return impl::norm_quant<detail::rms_norm_op, Policy, false>(impl::static_call(
      x, gamma, static_cast<const W*>(nullptr), q, rows, cols, eps, scale, amax, x_stride, q_stride));
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
  return impl::norm_quant<detail::layer_norm_op, Policy, false>(
      impl::static_call(x, gamma, beta, q, rows, cols, eps, scale, amax, x_stride, q_stride));
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
      impl::dynamic_call(x, gamma, static_cast<const W*>(nullptr), q, row_scales, rows, cols, eps, scale_ub,
                         x_stride, q_stride));
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
      impl::dynamic_call(x, gamma, beta, q, row_scales, rows, cols, eps, scale_ub, x_stride, q_stride));
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
      impl::q8_0_call(x, gamma, static_cast<const W*>(nullptr), y, rows, cols, eps, x_stride, y_stride));
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
  return impl::norm_quant<detail::layer_norm_op, Policy, false>(
      impl::q8_0_call(x, gamma, beta, y, rows, cols, eps, x_stride, y_stride));
}
template <class Policy, class In, class W>
[[nodiscard]] status layer_norm_q8_0(const In* x, const W* gamma, const W* beta, block_q8_0* y,
                                     std::size_t rows, std::size_t cols, float eps) {
  return normkit::layer_norm_q8_0<Policy>(x, gamma, beta, y, rows, cols, eps, cols, cols / block_q8_0::size);
}

// ---- The references: the same checks, both stages on the scalar path (the bits).
namespace reference {

template <class Policy, class In, class W, class Q>
[[nodiscard]] status rms_norm_quant(const In* x, const W* gamma, Q* q, std::size_t rows, std::size_t cols,
                                    float eps, float scale, float* amax, std::size_t x_stride,
                                    std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, true>(impl::static_call(
      x, gamma, static_cast<const W*>(nullptr), q, rows, cols, eps, scale, amax, x_stride, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status layer_norm_quant(const In* x, const W* gamma, const W* beta, Q* q, std::size_t rows,
                                      std::size_t cols, float eps, float scale, float* amax,
                                      std::size_t x_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::norm_quant<detail::layer_norm_op, Policy, true>(
      impl::static_call(x, gamma, beta, q, rows, cols, eps, scale, amax, x_stride, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status rms_norm_dynamic_quant(const In* x, const W* gamma, Q* q, float* row_scales,
                                            std::size_t rows, std::size_t cols, float eps, float scale_ub,
                                            std::size_t x_stride, std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, true>(
      impl::dynamic_call(x, gamma, static_cast<const W*>(nullptr), q, row_scales, rows, cols, eps, scale_ub,
                         x_stride, q_stride));
}
template <class Policy, class In, class W, class Q>
[[nodiscard]] status layer_norm_dynamic_quant(const In* x, const W* gamma, const W* beta, Q* q,
                                              float* row_scales, std::size_t rows, std::size_t cols,
                                              float eps, float scale_ub, std::size_t x_stride,
                                              std::size_t q_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, Q>() && impl::layer_norm_policy<Policy>(), "");
  return impl::norm_quant<detail::layer_norm_op, Policy, true>(
      impl::dynamic_call(x, gamma, beta, q, row_scales, rows, cols, eps, scale_ub, x_stride, q_stride));
}
template <class Policy, class In, class W>
[[nodiscard]] status rms_norm_q8_0(const In* x, const W* gamma, block_q8_0* y, std::size_t rows,
                                   std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, std::int8_t>(), "");
  return impl::norm_quant<detail::rms_norm_op, Policy, true>(
      impl::q8_0_call(x, gamma, static_cast<const W*>(nullptr), y, rows, cols, eps, x_stride, y_stride));
}
template <class Policy, class In, class W>
[[nodiscard]] status layer_norm_q8_0(const In* x, const W* gamma, const W* beta, block_q8_0* y,
                                     std::size_t rows, std::size_t cols, float eps, std::size_t x_stride,
                                     std::size_t y_stride) {
  static_assert(impl::norm_quant_types<Policy, In, W, std::int8_t>() && impl::layer_norm_policy<Policy>(),
                "");
  return impl::norm_quant<detail::layer_norm_op, Policy, true>(
      impl::q8_0_call(x, gamma, beta, y, rows, cols, eps, x_stride, y_stride));
}

}  // namespace reference
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
