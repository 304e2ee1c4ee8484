// SPDX-License-Identifier: MIT
// normkit: the quantize op -- rows of fp32 values v to 8-bit outputs Q (e4m3, e5m2, int8), the
// second stage of the quantized norms (quant.hpp: the norm writes v, the fp32 value it would
// otherwise have rounded to Out, then this op quantizes it). Its arguments, validation, type slot
// and scalar reference, which defines the bits; the SIMD rows are in quantize_simd.hpp. One slot
// (Q), no knobs: three kernels per ISA, the mode a run-time switch.
//
// Conversions (core/fp8.hpp): Q(p) for fp8 rounds to nearest even and saturates to +-max; int8
// is int8_from_float (RNE, clamp to [-128, 127]). A NaN product or quotient is stored as the
// type's canonical NaN (e4m3 0x7F, e5m2 0x7E, sign dropped) or 0 (int8): contract, NaN outputs
// are canonical (docs/contract.md; x86 and Arm propagate different NaNs).
//
// static_scale   q_i = Q(v_i * scale)                      (Transformer Engine's per-tensor fp8
//                amax (optional) = max |v_i| over the call  scale, delayed scaling)
// dynamic_row    vLLM's rms_norm_dynamic_per_token_quant, per row (vllm-project/vllm,
//                csrc/quantization/fused_kernels/layernorm_utils.cuh, compute_dynamic_per_token_scales;
//                fused_layernorm_dynamic_per_token_quant.cu; quant_conversions.cuh; utils.cuh):
//                  amax = max |v_i|
//                  s    = scale_ub > 0 ? fminf(amax, scale_ub) : amax
//                  s    = fmaxf(s / qmax, min_scale)          IEEE division; scales[row] = s
//                    qmax = 127 (int8), 448 (e4m3), 57344 (e5m2, not in vLLM: the same rule)
//                    min_scale = FLT_EPSILON (int8), 1 / (qmax * 512) (fp8), rounded to float
//                  int8: inv = 1.0f / s;  q_i = int8(v_i * inv)     the reciprocal, then multiply
//                  fp8:                   q_i = Q(v_i / s)          a division ("Do not invert
//                                                                   token_scale for exact match
//                                                                   with FBGemm")
//                vLLM clamps to +-qmax before converting; Q's saturation is the same for every
//                non-NaN quotient. Where normkit departs (docs/quantization.md): a row with a NaN
//                v gets s = NaN (vLLM's fmaxf skips the NaN) and so every q_i NaN / 0; a NaN
//                quotient (Inf / Inf) is NaN, not vLLM's clamped +448; scale_ub also caps int8
//                rows (vLLM refuses it there).
// q8_0           ggml's quantize_row_q8_0_ref (ggml-org/ggml, src/ggml-quants.c), per block of 32:
//                  amax = max |v_j|;  d = amax / 127;  id = d != 0 ? 1.0f / d : 0.0f
//                  block.d = fp16(d) (RNE);  block.qs[j] = roundf(v_j * id) (ties away from 0)
//                beyond ggml (where its C is undefined): the rounded value is clamped to
//                [-128, 127], a NaN product gives 0, and a block with a NaN v gets d = the
//                canonical fp16 NaN (0x7E00) and qs = 0.
// max |v| takes NaN above every number (the bits of |v| are compared as integers): a NaN reaches
// amax and the scales instead of being skipped.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int8_t, std::uint8_t, std::uint16_t, std::uint32_t
#include <cstring>      // std::memcpy
#include <type_traits>  // std::is_same

#include "../core/abi.hpp"
#include "../core/ahead.hpp"
#include "../core/fp8.hpp"
#include "../core/math.hpp"
#include "../core/op.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/validate.hpp"

namespace normkit {

// The argument bundle (its namespace: ops/rms_norm.hpp).
namespace NORMKIT_TABLE_NAMESPACE {
enum class quant_mode : unsigned char { static_scale, dynamic_row, q8_0 };

template <class Q>
struct quantize_args {
  const float* v;      // rows x cols, rows v_stride apart
  Q* q;                // static_scale, dynamic_row: rows x cols, rows q_stride apart
  block_q8_0* blocks;  // q8_0 (Q = std::int8_t): rows x cols / 32 blocks, rows q_stride blocks apart
  float* scales;       // dynamic_row: one per row
  float* amax;         // static_scale: null, or max(*amax, max |v|) in the order above (in/out)
  std::size_t rows, cols, v_stride, q_stride;
  float scale;  // static_scale: the multiplier; dynamic_row: scale_ub (<= 0: no cap)
  quant_mode mode;
  // The rows the caller reads next (core/ahead.hpp), prefetched as the rows go: the quantized
  // norms pass their next chunk's inputs (ops/norm_quant.hpp). Empty: none.
  rows_ahead ahead = {};
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

using quant_mode = NORMKIT_TABLE_NAMESPACE::quant_mode;

// The quantized types, in table order.
using quant_types = type_list<e4m3, e5m2, std::int8_t>;

// qmax and vLLM's smallest scale (csrc/quantization/utils.cuh, quant_type_max and
// min_scaling_factor) per output type.
template <class Q>
struct quant_limits;
template <>
struct quant_limits<e4m3> {
  static constexpr float qmax = 448.0f;
  static constexpr float min_scale = 1.0f / (448.0f * 512.0f);
};
template <>
struct quant_limits<e5m2> {
  static constexpr float qmax = 57344.0f;
  static constexpr float min_scale = 1.0f / (57344.0f * 512.0f);
};
template <>
struct quant_limits<std::int8_t> {
  static constexpr float qmax = 127.0f;
  static constexpr float min_scale = 0x1p-23f;  // FLT_EPSILON
};

constexpr std::uint32_t f32_inf_bits = 0x7f800000u;

// |v| as integer bits: ordered as |v| for numbers, every NaN above +Inf.
NORMKIT_ALWAYS_INLINE std::uint32_t magnitude_bits(float v) noexcept {
  return float_bits(v) & 0x7fffffffu;
}

// p -> the bits Q stores (see the header comment).
template <class Q>
NORMKIT_ALWAYS_INLINE std::uint8_t quantized_bits(float p) noexcept {
  const std::uint32_t u = float_bits(p);
  if constexpr (std::is_same<Q, std::int8_t>::value) {
    return static_cast<std::uint8_t>(int8_from_float_bits(u));
  } else {
    if ((u & 0x7fffffffu) > f32_inf_bits)
      return storage_traits<Q>::canonical_nan;
    return std::is_same<Q, e4m3>::value ? e4m3_from_float_bits(u) : e5m2_from_float_bits(u);
  }
}

template <class Q>
NORMKIT_ALWAYS_INLINE void store_quantized(Q* p, std::uint8_t bits) noexcept {
  std::memcpy(static_cast<void*>(p), &bits, 1);
}

// dynamic_row: the scale of a row whose max |v| has the bits amax_bits.
template <class Q>
inline float dynamic_scale(std::uint32_t amax_bits, float scale_ub) noexcept {
  if (amax_bits > f32_inf_bits)
    return bits_float(storage_traits<float>::canonical_nan);
  float s = bits_float(amax_bits);
  if (scale_ub > 0.0f && scale_ub < s)  // fminf(amax, scale_ub); neither is NaN here
    s = scale_ub;
  s = s / quant_limits<Q>::qmax;
  return s < quant_limits<Q>::min_scale ? quant_limits<Q>::min_scale : s;  // fmaxf
}

// q8_0: a block's d (fp16 bits) and the multiplier id, from its max |v| bits.
struct q8_0_scale {
  std::uint16_t d;
  float id;
};
inline q8_0_scale q8_0_scale_of(std::uint32_t amax_bits) noexcept {
  if (amax_bits > f32_inf_bits)
    return {storage_traits<fp16>::canonical_nan, bits_float(storage_traits<float>::canonical_nan)};
  const float d = bits_float(amax_bits) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  return {fp16_from_float_bits(float_bits(d)), id};
}

// The argument checks of a quantization, shared with the quantized norms (quant.hpp): the scale,
// then the block size. Static: scale finite and > 0; dynamic: scale_ub not NaN or Inf. On the
// bits, so that a NaN raises no FE_INVALID.
inline status check_quant_scalars(quant_mode mode, float scale, std::size_t cols) {
  const std::uint32_t u = float_bits(scale);
  if (mode == quant_mode::static_scale && (u == 0u || u >= f32_inf_bits))  // +0, negative, Inf, NaN
    return status::invalid_scale;
  if (mode == quant_mode::dynamic_row && (u & 0x7fffffffu) >= f32_inf_bits)
    return status::invalid_scale;
  if (mode == quant_mode::q8_0 && cols % block_q8_0::size != 0)
    return status::invalid_block;
  return status::ok;
}

}  // namespace detail

namespace reference {

// One row of the quantize op; returns the row's max |v| bits (static_scale) or 0.
template <class Q>
std::uint32_t quantize_row(const NORMKIT_TABLE_NAMESPACE::quantize_args<Q>& a, std::size_t r) {
  using namespace detail;
  const float* v = a.v + r * a.v_stride;
  std::uint32_t amax = 0;
  if (a.mode == quant_mode::static_scale) {
    Q* q = a.q + r * a.q_stride;
    for (std::size_t i = 0; i < a.cols; ++i) {
      store_quantized(q + i, quantized_bits<Q>(v[i] * a.scale));
      amax = max_of(amax, magnitude_bits(v[i]));
    }
    return amax;
  }
  if (a.mode == quant_mode::dynamic_row) {
    Q* q = a.q + r * a.q_stride;
    for (std::size_t i = 0; i < a.cols; ++i)
      amax = max_of(amax, magnitude_bits(v[i]));
    const float s = dynamic_scale<Q>(amax, a.scale);
    a.scales[r] = s;
    if constexpr (std::is_same<Q, std::int8_t>::value) {
      const float inv = 1.0f / s;
      for (std::size_t i = 0; i < a.cols; ++i)
        store_quantized(q + i, quantized_bits<Q>(v[i] * inv));
    } else {
      for (std::size_t i = 0; i < a.cols; ++i)
        store_quantized(q + i, quantized_bits<Q>(v[i] / s));
    }
    return 0;
  }
  if constexpr (std::is_same<Q, std::int8_t>::value) {  // q8_0
    block_q8_0* out = a.blocks + r * a.q_stride;
    for (std::size_t b = 0; b < a.cols / block_q8_0::size; ++b) {
      const float* x = v + b * block_q8_0::size;
      std::uint32_t m = 0;
      for (std::size_t j = 0; j < block_q8_0::size; ++j)
        m = max_of(m, magnitude_bits(x[j]));
      const q8_0_scale sc = q8_0_scale_of(m);
      out[b].d.bits = sc.d;  // the bits member: no out-of-namespace function in ISA objects (ODR trap)
      for (std::size_t j = 0; j < block_q8_0::size; ++j)
        out[b].qs[j] = int8_round_away_bits(float_bits(x[j] * sc.id));
    }
  }
  return 0;
}

}  // namespace reference

namespace detail {

struct quantize_op {
  static constexpr const char* name = "quantize";
  using slots = type_list<quant_types>;  // Q
  using knobs = no_knobs;

  template <class Q>
  using args = NORMKIT_TABLE_NAMESPACE::quantize_args<Q>;

  template <class Knobs, class Q>
  using canonical = Knobs;
  // Q8_0 also rounds its block scales to fp16 (NEON's rounding follows FPCR: dispatch/run.hpp).
  template <class Knobs, class Q>
  using narrows = std::conditional_t<std::is_same<Q, std::int8_t>::value, type_list<Q, fp16>, type_list<Q>>;

  // invalid_stride, the scale / block checks, then the buffers: v; q or the blocks, the scales
  // (dynamic_row), amax (static_scale, optional).
  template <class Q>
  static status validate(const args<Q>& a) {
    const bool blocks = a.mode == quant_mode::q8_0;
    if (blocks && !std::is_same<Q, std::int8_t>::value)
      return status::invalid_block;
    const std::size_t out_cols = blocks ? a.cols / block_q8_0::size : a.cols;
    if (a.v_stride < a.cols || a.q_stride < out_cols)
      return status::invalid_stride;
    if (const status st = check_quant_scalars(a.mode, a.scale, a.cols); st != status::ok)
      return st;
    if (empty(a))
      return status::ok;
    const impl::operand in[] = {impl::operand_of(a.v, a.rows, a.cols, a.v_stride)};
    const bool dynamic = a.mode == quant_mode::dynamic_row, stat = a.mode == quant_mode::static_scale;
    const impl::operand out[] = {
        blocks ? impl::operand_of(a.blocks, a.rows, out_cols, a.q_stride)
               : impl::operand_of(a.q, a.rows, a.cols, a.q_stride),
        impl::operand_of(dynamic ? a.scales : static_cast<float*>(nullptr), a.rows, 1, 1, !dynamic),
        impl::operand_of(stat ? a.amax : static_cast<float*>(nullptr), 1, 1, 1, true)};
    return impl::check_operands(in, out, {-1, -1, -1});
  }
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }

  template <class Policy, class Q>
  static void reference(const args<Q>& a) {
    std::uint32_t amax = 0;
    for (std::size_t r = 0; r < a.rows; ++r)
      amax = max_of(amax, normkit::reference::quantize_row(a, r));
    if (a.mode == quant_mode::static_scale && a.amax)
      accumulate_amax(a.amax, amax);
  }

  // *p = max(*p, amax) in the order of the header comment; a NaN is stored as the canonical NaN.
  static void accumulate_amax(float* p, std::uint32_t amax) {
    const std::uint32_t m = max_of(magnitude_bits(*p), amax);
    *p = bits_float(m > f32_inf_bits ? storage_traits<float>::canonical_nan : m);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
