// SPDX-License-Identifier: MIT
// normkit tests: independent formulas for the quantized outputs -- the fp8 / int8 / fp16
// encodings worked out on real values in double, and vLLM's and ggml's quantization arithmetic
// transcribed step by step from their sources. Standard library only (no gtest, no normkit
// header), so nothing here can share a mistake with include/normkit/fp8.hpp.
//
// The quantization helpers take v[], the fp32 values a norm would otherwise have rounded to its
// output type, and produce what the cited code produces from them. docs/quantization.md has the
// same formulas in prose, with the NaN and saturation cases.
#pragma once

#include <algorithm>  // std::sort, std::upper_bound
#include <cfloat>     // FLT_EPSILON
#include <cmath>      // std::fabs, std::fmax, std::fmin, std::floor, std::isnan, std::ldexp, std::frexp
#include <cstddef>    // std::size_t
#include <cstdint>    // std::int8_t, std::uint8_t, std::uint16_t, std::uint32_t
#include <cstring>    // std::memcpy
#include <limits>     // std::numeric_limits
#include <utility>    // std::pair
#include <vector>     // std::vector

// IEEE semantics for the formulas under clang's unsafe-math flags (as support.hpp).
#if defined(__clang__)
#pragma float_control(precise, on, push)
#endif

namespace normkit_test {
namespace formula {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round a finite t >= 0 to an integer, ties to even, with exact double operations only (floor
// and a subtraction of numbers of the same binade are exact), so the FP rounding mode cannot
// change the answer.
inline double round_half_even(double t) {
  const double fl = std::floor(t);
  const double frac = t - fl;
  if (frac > 0.5)
    return fl + 1.0;
  if (frac < 0.5)
    return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

// ---- fp8, from the definition of the formats (OCP 8-bit floating point, E4M3 and E5M2).
enum class fp8_kind { e4m3, e5m2 };

// The 256 patterns decoded by the formula value = (-1)^s * 2^(e - bias) * (1 + m / 2^M) (e > 0)
// or (-1)^s * 2^(1 - bias) * (m / 2^M) (e = 0), with the special patterns of each format; and
// float -> fp8 by searching the sorted finite values for the nearest one.
class fp8_reference {
 public:
  explicit fp8_reference(fp8_kind k)
      : exp_bits_(k == fp8_kind::e4m3 ? 4 : 5),
        man_bits_(k == fp8_kind::e4m3 ? 3 : 2),
        ieee_(k == fp8_kind::e5m2) {
    for (unsigned b = 0; b < 0x80u; ++b) {
      const double v = value(static_cast<std::uint8_t>(b));
      if (!std::isnan(v) && !std::isinf(v))
        table_.emplace_back(v, static_cast<std::uint8_t>(b));
    }
    std::sort(table_.begin(), table_.end());
  }

  int bias() const { return (1 << (exp_bits_ - 1)) - 1; }

  // The value of pattern b, from the definition (NaN and Inf where the format has them).
  double value(std::uint8_t b) const {
    const unsigned emax = (1u << exp_bits_) - 1u, mmax = (1u << man_bits_) - 1u;
    const unsigned e = (b >> man_bits_) & emax, m = b & mmax;
    const double s = (b & 0x80u) ? -1.0 : 1.0;
    if (ieee_ && e == emax)
      return m == 0 ? s * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    if (!ieee_ && e == emax && m == mmax)
      return std::numeric_limits<double>::quiet_NaN();
    if (e == 0)
      return s * std::ldexp(static_cast<double>(m), 1 - bias() - man_bits_);
    return s * std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -man_bits_), static_cast<int>(e) - bias());
  }

  double max_finite() const { return table_.back().first; }
  std::uint8_t max_pattern() const { return table_.back().second; }

  // float bits -> fp8 pattern: nearest finite value, ties to the even pattern (even mantissa),
  // |x| >= max (Inf included) -> max; NaN -> the NaN that fp8.hpp documents (e4m3: S.1111.111;
  // e5m2: S.11111.1p, p = the float's mantissa bit 21).
  std::uint8_t from_float_bits(std::uint32_t u) const {
    const std::uint8_t sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
    const float f = bits_float(u);
    if (std::isnan(f)) {
      if (!ieee_)
        return static_cast<std::uint8_t>(sign | 0x7fu);
      return static_cast<std::uint8_t>(sign | 0x7eu | ((u >> 21) & 1u));
    }
    const double a = std::fabs(static_cast<double>(f));
    if (a >= max_finite())
      return static_cast<std::uint8_t>(sign | max_pattern());
    // table_[i].first <= a < table_[i + 1].first
    const auto hi = std::upper_bound(table_.begin(), table_.end(), std::make_pair(a, std::uint8_t{0xff}));
    const auto lo = hi - 1;
    // Compare 2a with lo + hi rather than the two distances: both sides are exact in double.
    const double twice = 2.0 * a, mid = lo->first + hi->first;
    std::uint8_t code;
    if (twice < mid)
      code = lo->second;
    else if (twice > mid)
      code = hi->second;
    else
      code = (lo->second & 1u) == 0 ? lo->second : hi->second;
    return static_cast<std::uint8_t>(sign | code);
  }
  std::uint8_t from_float(float f) const { return from_float_bits(float_bits(f)); }

 private:
  int exp_bits_, man_bits_;
  bool ieee_;
  std::vector<std::pair<double, std::uint8_t>> table_;  // the non-negative finite values
};

inline const fp8_reference& e4m3_reference() {
  static const fp8_reference r(fp8_kind::e4m3);
  return r;
}
inline const fp8_reference& e5m2_reference() {
  static const fp8_reference r(fp8_kind::e5m2);
  return r;
}

// float -> int8: round to nearest, ties to even, then clamp to [-128, 127]; NaN -> 0. PTX's
// cvt.rni.sat.s8.f32 (vLLM's float_to_int8_rn on CUDA).
inline std::int8_t int8_rne_sat(float x) {
  if (std::isnan(x))
    return 0;
  const double a = std::fabs(static_cast<double>(x));
  const double r = a >= 256.0 ? 256.0 : round_half_even(a);  // clamped below anyway
  const double s = x < 0 ? -r : r;
  if (s > 127.0)
    return 127;
  if (s < -128.0)
    return -128;
  return static_cast<std::int8_t>(s);
}

// float -> IEEE binary16 bits, round to nearest even (what GGML_FP32_TO_FP16 computes on F16C
// (_cvtss_sh(x, 0)), on Arm (__fp16) and in its portable fallback, for every non-NaN input):
// |x| >= 65520 -> Inf; subnormal results kept. NaN -> 0x7E00 with the sign (the portable
// fallback's NaN; F16C keeps payload bits instead -- never reached by the formulas below, whose d
// is never NaN where the C code is defined).
inline std::uint16_t fp16_rne(float x) {
  const std::uint16_t sign = static_cast<std::uint16_t>((float_bits(x) >> 16) & 0x8000u);
  if (std::isnan(x))
    return static_cast<std::uint16_t>(sign | 0x7e00u);
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0)
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (a == 0.0)
    return sign;
  int e;
  std::frexp(a, &e);                        // a = f * 2^e, f in [0.5, 1): the binade is [2^(e-1), 2^e)
  const int q = std::max(e - 1, -14) - 10;  // the unit in the last place
  const double n = round_half_even(std::ldexp(a, -q));     // exact scaling
  const std::uint32_t ni = static_cast<std::uint32_t>(n);  // <= 2^11
  std::uint32_t bits;
  if (e - 1 < -14)
    bits = ni;  // subnormal units; 2^10 is exactly the smallest normal's pattern
  else
    bits = (static_cast<std::uint32_t>(e - 1 + 15) << 10) + (ni - 1024u);  // n = 2^11 carries
  return static_cast<std::uint16_t>(sign | bits);
}

// ---- vLLM: rms_norm_dynamic_per_token_quant (repository vllm-project/vllm).
// csrc/quantization/fused_kernels/layernorm_utils.cuh, compute_dynamic_per_token_scales:
//   amax  = fmaxf over |v_i|, starting from 0.0f        (fmaxf ignores NaN: a NaN v_i is skipped)
//   s     = scale_ub ? min(amax, *scale_ub) : amax      (min on floats = fminf)
//   s     = max(s / qmax, min_scaling_factor<T>::val()) (max = fmaxf); written to scales[row]
// csrc/quantization/utils.cuh, quant_type_max / min_scaling_factor:
//   qmax = numeric_limits<T>::max(): 127 for int8, 448 for Float8_e4m3fn
//   min_scaling_factor: 1.0f / (qmax * 512.0f) for fp8; FLT_EPSILON (2^-23) for int8
// csrc/quantization/fused_kernels/fused_layernorm_dynamic_per_token_quant.cu,
// rms_norm_dynamic_per_token_quant_kernel: int8 inverts the scale once (token_scale = 1.0f /
// token_scale) and multiplies; fp8 divides ("Do not invert ... for exact match with FBGemm").
// csrc/quantization/fused_kernels/quant_conversions.cuh, ScaledQuant::quant_fn:
//   int8: q_i = float_to_int8_rn(v_i * inv)  -- cvt.rni.sat.s8.f32: RNE, clamp, NaN -> 0
//   fp8:  q_i = Float8_e4m3fn(fmax(-448, fmin(v_i / s, 448)))  (float_to_fp8: clamp, then RNE;
//         fmin/fmax ignore NaN, so a NaN v_i becomes +448)
// rms_norm_dynamic_per_token_quant refuses scale_ub with an int8 output (TORCH_CHECK), so the
// int8 helper has no scale_ub.

inline float vllm_min_scaling_factor_e4m3() {
  return 1.0f / (448.0f * 512.0f);
}
inline float vllm_min_scaling_factor_int8() {
  return FLT_EPSILON;
}

// compute_dynamic_per_token_scales for one row.
inline float vllm_token_scale(const float* v, std::size_t n, const float* scale_ub, float qmax,
                              float min_scale) {
  float amax = 0.0f;
  for (std::size_t i = 0; i < n; ++i)
    amax = std::fmax(amax, std::fabs(v[i]));
  float s = scale_ub != nullptr ? std::fmin(amax, *scale_ub) : amax;
  s = std::fmax(s / qmax, min_scale);
  return s;
}

// One row to int8; returns the row's scale.
inline float vllm_dynamic_per_token_int8(const float* v, std::size_t n, std::int8_t* q) {
  const float s = vllm_token_scale(v, n, nullptr, 127.0f, vllm_min_scaling_factor_int8());
  const float inv = 1.0f / s;
  for (std::size_t i = 0; i < n; ++i) {
    const float p = v[i] * inv;
    q[i] = int8_rne_sat(p);
  }
  return s;
}

// One row to e4m3 (pattern bytes); scale_ub may be null (no cap). Returns the row's scale.
inline float vllm_dynamic_per_token_e4m3(const float* v, std::size_t n, const float* scale_ub,
                                         std::uint8_t* q) {
  const float s = vllm_token_scale(v, n, scale_ub, 448.0f, vllm_min_scaling_factor_e4m3());
  for (std::size_t i = 0; i < n; ++i) {
    const float r = std::fmax(-448.0f, std::fmin(v[i] / s, 448.0f));
    q[i] = e4m3_reference().from_float(r);
  }
  return s;
}

// ---- ggml: quantize_row_q8_0_ref (repository ggml-org/ggml, src/ggml-quants.c), per block of
// QK8_0 = 32 values:
//   amax = 0.0f; amax = MAX(amax, fabsf(v_j))  with MAX(a, b) = ((a) > (b) ? (a) : (b))
//                                              (src/ggml-impl.h: a NaN |v_j| makes amax NaN and
//                                              the next element replaces it)
//   d    = amax / ((1 << 7) - 1)               float division by 127
//   id   = d ? 1.0f/d : 0.0f
//   y.d  = GGML_FP32_TO_FP16(d)                IEEE RNE to binary16 (src/ggml-impl.h: F16C
//                                              _cvtss_sh(x, 0), Arm __fp16, or the portable
//                                              bit-trick fallback; all RNE, overflow -> Inf)
//   y.qs[j] = roundf(v_j * id)                 roundf: half AWAY from zero (C99 7.12.9.6), not
//                                              the even rounding of the rest of this file; the
//                                              float result is converted to int8_t, which C
//                                              defines only for values in [-128, 127]
// The block scale is used from its fp16 bits (dequantize_row_q8_0: v ~ qs[j] * fp16_to_fp32(d)),
// but q was computed with the fp32 d: the two differ by d's fp16 rounding.
struct q8_0_block {
  std::uint16_t d;  // fp16 bits
  std::int8_t qs[32];
};

// Returns false when some roundf(v_j * id) lies outside [-128, 127] or is NaN (the C conversion
// is undefined there: a NaN, Inf or, through the MAX quirk, an element before a NaN); such an
// element is stored as 0 here. n must be a multiple of 32 (ggml asserts it).
inline bool ggml_quantize_row_q8_0_ref(const float* v, std::size_t n, q8_0_block* out) {
  bool defined = true;
  for (std::size_t b = 0; b < n / 32; ++b) {
    const float* x = v + 32 * b;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) {
      const float a = std::fabs(x[j]);
      amax = amax > a ? amax : a;
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;  // `d ? ...`: NaN is true in C
    out[b].d = fp16_rne(d);
    for (int j = 0; j < 32; ++j) {
      const float x0 = x[j] * id;
      const float r = std::round(x0);  // roundf
      if (std::isnan(r) || r < -128.0f || r > 127.0f) {
        defined = false;
        out[b].qs[j] = 0;
      } else {
        out[b].qs[j] = static_cast<std::int8_t>(r);
      }
    }
  }
  return defined;
}

}  // namespace formula
}  // namespace normkit_test

#if defined(__clang__)
#pragma float_control(pop)
#endif
