// SPDX-License-Identifier: MIT
// normkit: 8-bit output types -- fp8 e4m3 and e5m2 -- and the saturating int8 conversion.
//
// Output-only: an op may write them, never read them as x, gamma or beta. Each is a plain byte,
// layout-compatible with torch.float8_e4m3fn / torch.float8_e5m2 (OCP 8-bit floating point).
//   e4m3 (OCP "E4M3", torch float8_e4m3fn): bias 7, largest finite 448 (0x7E), no Inf, NaN only
//        S.1111.111 (0x7F / 0xFF); smallest subnormal 2^-9, smallest normal 2^-6.
//   e5m2 (OCP "E5M2", torch float8_e5m2): bias 15, largest finite 57344 (0x7B), IEEE-like
//        Inf S.11111.00 and NaN S.11111.{01,10,11}; smallest subnormal 2^-16, normal 2^-14.
// Widening to float is exact. Narrowing from float rounds to nearest, ties to even, and
// SATURATES: a finite value beyond +-max and +-Inf give +-max -- what Transformer Engine and vLLM
// produce by clamping to +-max before their conversion (an fp8 Inf is never produced, so e5m2's
// Inf pattern is reached only through from_bits). Subnormals are kept (never flushed); the sign of
// zero is kept. NaN stays NaN, sign kept:
//   e4m3: S.1111.111, the only NaN pattern it has (no payload to keep);
//   e5m2: quiet NaN, S.11111.1p with p the float's top payload bit -- the rule fp16 follows in
//         core/storage.hpp, so an e5m2 NaN is the top byte of the fp16 NaN of the same float.
// Only integer operations are used, so the FP environment (FTZ/DAZ, rounding mode) cannot change
// a result, and no FP exception flag is raised (saturation is not an IEEE overflow).
//
// int8_from_float(v): round to nearest, ties to even, then clamp to [-128, 127]; NaN gives 0.
// That is PTX's cvt.rni.sat.s8.f32, which vLLM's float_to_int8_rn uses on CUDA
// (vllm-project/vllm, csrc/quantization/fused_kernels/quant_conversions.cuh); docs/quantization.md
// has the details.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int8_t, std::uint8_t, std::uint32_t

#include "abi.hpp"
#include "storage.hpp"  // NORMKIT_ALWAYS_INLINE, float_bits, bits_float, storage_traits

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {  // every function: core/abi.hpp
namespace detail {

// An 8-bit binary float with ExpBits exponent and ManBits mantissa bits, as the conversions see
// it. max_bits is the pattern of the largest finite value, max_float_bits the same value as a
// float's bits.
template <unsigned ExpBits, unsigned ManBits, std::uint32_t MaxBits>
struct fp8_format {
  static constexpr unsigned exp_bits = ExpBits;
  static constexpr unsigned man_bits = ManBits;
  static constexpr std::uint32_t bias = (1u << (ExpBits - 1)) - 1u;
  static constexpr std::uint32_t max_bits = MaxBits;
  static constexpr std::uint32_t exp_mask = ((1u << ExpBits) - 1u) << ManBits;  // in the byte
  // The largest finite value, as float bits: rebias its exponent field, widen its mantissa.
  static constexpr std::uint32_t max_float_bits =
      (((MaxBits >> ManBits) + 127u - bias) << 23) | ((MaxBits & ((1u << ManBits) - 1u)) << (23 - ManBits));
  // The smallest normal, 2^(1 - bias), as float bits.
  static constexpr std::uint32_t min_normal_float_bits = (128u - bias) << 23;
};

using e4m3_format = fp8_format<4, 3, 0x7eu>;  // max 1.75 * 2^8 = 448
using e5m2_format = fp8_format<5, 2, 0x7bu>;  // max 1.75 * 2^15 = 57344
static_assert(e4m3_format::max_float_bits == 0x43e00000u, "448.0f");
static_assert(e5m2_format::max_float_bits == 0x47600000u, "57344.0f");

// Finite float bits a (sign cleared, a < max_float_bits) -> the fp8 magnitude pattern, round to
// nearest even with subnormal results. a below max cannot round past max (max is representable).
template <class F>
NORMKIT_ALWAYS_INLINE std::uint32_t fp8_round_magnitude(std::uint32_t a) noexcept {
  constexpr unsigned drop = 23u - F::man_bits;  // float mantissa bits that do not fit
  if (a >= F::min_normal_float_bits) {
    const std::uint32_t r = a + ((1u << (drop - 1u)) - 1u) + ((a >> drop) & 1u);
    return (r - ((127u - F::bias) << 23)) >> drop;  // rebias 127 -> bias; a carry moves the exponent
  }
  // Subnormal result (or zero): count units of 2^(1 - bias - man_bits). |x| = m * 2^(e - 150)
  // for a normal float with exponent field e, so the count is m >> (151 - bias - man_bits - e).
  // Below half the smallest subnormal (shift > 24) it rounds to zero; float subnormals are far
  // below that (e = 0 included).
  constexpr std::uint32_t shift_base = 151u - F::bias - F::man_bits;
  const std::uint32_t e = a >> 23;
  if (e + 24u < shift_base)
    return 0;
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = shift_base - e;  // in [drop + 1, 24]
  std::uint32_t q = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u)))
    ++q;  // may carry into the smallest normal, whose pattern is the next integer
  return q;
}

// float -> e4m3 bits: RNE, saturating to +-448; NaN -> S.1111.111 (its only NaN).
NORMKIT_ALWAYS_INLINE std::uint8_t e4m3_from_float_bits(std::uint32_t u) noexcept {
  const std::uint32_t sign = (u >> 24) & 0x80u;
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return static_cast<std::uint8_t>(sign | 0x7fu);
  if (a >= e4m3_format::max_float_bits)  // +-448 and beyond, +-Inf included: saturate
    return static_cast<std::uint8_t>(sign | e4m3_format::max_bits);
  return static_cast<std::uint8_t>(sign | fp8_round_magnitude<e4m3_format>(a));
}

// float -> e5m2 bits: RNE, saturating to +-57344; NaN -> quiet NaN, sign and top payload bit kept.
NORMKIT_ALWAYS_INLINE std::uint8_t e5m2_from_float_bits(std::uint32_t u) noexcept {
  const std::uint32_t sign = (u >> 24) & 0x80u;
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return static_cast<std::uint8_t>(sign | 0x7eu | ((a >> 21) & 0x1u));
  if (a >= e5m2_format::max_float_bits)
    return static_cast<std::uint8_t>(sign | e5m2_format::max_bits);
  return static_cast<std::uint8_t>(sign | fp8_round_magnitude<e5m2_format>(a));
}

// fp8 bits (not Inf/NaN) -> float bits, exact.
template <class F>
NORMKIT_ALWAYS_INLINE std::uint32_t fp8_finite_to_float_bits(std::uint32_t h) noexcept {
  const std::uint32_t sign = (h & 0x80u) << 24;
  const std::uint32_t e = (h & F::exp_mask) >> F::man_bits;
  const std::uint32_t m = h & ((1u << F::man_bits) - 1u);
  if (e != 0)
    return sign | ((e + 127u - F::bias) << 23) | (m << (23 - F::man_bits));
  if (m == 0)
    return sign;
  // Subnormal: m * 2^(1 - bias - man_bits), normalized by hand (no FP arithmetic: DAZ cannot
  // interfere).
  std::uint32_t shift = 0;
  std::uint32_t mm = m;
  while ((mm & (1u << F::man_bits)) == 0) {
    mm <<= 1;
    ++shift;
  }
  return sign | ((128u - F::bias - shift) << 23) | ((mm & ((1u << F::man_bits) - 1u)) << (23 - F::man_bits));
}

// e4m3 bits -> float bits, exact; NaN -> the quiet float NaN 0x7FC00000 with the sign kept.
NORMKIT_ALWAYS_INLINE std::uint32_t e4m3_to_float_bits(std::uint8_t h) noexcept {
  if ((h & 0x7fu) == 0x7fu)
    return (static_cast<std::uint32_t>(h & 0x80u) << 24) | 0x7fc00000u;
  return fp8_finite_to_float_bits<e4m3_format>(h);
}

// e5m2 bits -> float bits, exact; Inf -> Inf; NaN -> quiet, payload kept (as fp16 in core/storage.hpp).
NORMKIT_ALWAYS_INLINE std::uint32_t e5m2_to_float_bits(std::uint8_t h) noexcept {
  if ((h & 0x7cu) == 0x7cu) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x80u) << 24;
    const std::uint32_t m = h & 0x3u;
    return sign | 0x7f800000u | (m ? 0x400000u | (m << 21) : 0u);
  }
  return fp8_finite_to_float_bits<e5m2_format>(h);
}

// float bits -> int8: round to nearest even, then clamp to [-128, 127]; NaN -> 0 (what PTX's
// cvt.rni.sat.s8.f32 does; docs/quantization.md).
NORMKIT_ALWAYS_INLINE std::int8_t int8_from_float_bits(std::uint32_t u) noexcept {
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 0;
  const bool negative = (u >> 31) != 0;
  if (a >= 0x43000000u)  // |x| >= 128, Inf included: clamps whatever the rounding
    return negative ? static_cast<std::int8_t>(-128) : static_cast<std::int8_t>(127);
  const std::uint32_t e = a >> 23;
  if (e < 126u)  // |x| < 0.5
    return 0;
  // 0.5 <= |x| < 128: |x| = m * 2^(e - 150), the integer part is m >> (150 - e).
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 150u - e;  // in [17, 24]
  std::uint32_t q = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u)))
    ++q;  // q <= 128
  if (negative)
    return static_cast<std::int8_t>(-static_cast<int>(q));  // >= -128
  return static_cast<std::int8_t>(q < 127u ? q : 127u);     // 127.5 and above round to 128: clamp
}

// float bits -> int8 as ggml's Q8_0 rounds: roundf (half AWAY from zero, C99 7.12.9.6), then
// clamp to [-128, 127]; NaN -> 0. ggml converts roundf's result to int8_t, which C defines only
// inside [-128, 127]; the clamp and the NaN rule are normkit's (docs/quantization.md).
NORMKIT_ALWAYS_INLINE std::int8_t int8_round_away_bits(std::uint32_t u) noexcept {
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 0;
  const bool negative = (u >> 31) != 0;
  if (a >= 0x43000000u)  // |x| >= 128, Inf included
    return negative ? static_cast<std::int8_t>(-128) : static_cast<std::int8_t>(127);
  const std::uint32_t e = a >> 23;
  if (e < 126u)  // |x| < 0.5
    return 0;
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 150u - e;  // in [17, 24]
  std::uint32_t q = m >> shift;
  if ((m & ((1u << shift) - 1u)) >= (1u << (shift - 1u)))
    ++q;  // a tie goes up in magnitude; q <= 128
  if (negative)
    return static_cast<std::int8_t>(-static_cast<int>(q));
  return static_cast<std::int8_t>(q < 127u ? q : 127u);
}

}  // namespace detail

// Saturating float -> int8 for the quantized ops: round to nearest even, clamp to [-128, 127],
// NaN -> 0 (header comment). Independent of the FP environment.
NORMKIT_ALWAYS_INLINE std::int8_t int8_from_float(float v) noexcept {
  return detail::int8_from_float_bits(detail::float_bits(v));
}

}  // namespace NORMKIT_ABI_NAMESPACE

// OCP E4M3 (torch.float8_e4m3fn): 1 sign, 4 exponent, 3 mantissa bits; no Inf.
struct e4m3 {
  std::uint8_t bits;

  e4m3() = default;  // trivial: uninitialized like float
  NORMKIT_ALWAYS_INLINE explicit e4m3(float f) noexcept
      : bits(detail::e4m3_from_float_bits(detail::float_bits(f))) {}
  NORMKIT_ALWAYS_INLINE explicit operator float() const noexcept {
    return detail::bits_float(detail::e4m3_to_float_bits(bits));
  }
  static constexpr e4m3 from_bits(std::uint8_t b) noexcept {
    e4m3 r{};
    r.bits = b;
    return r;
  }
};

// OCP E5M2 (torch.float8_e5m2): 1 sign, 5 exponent, 2 mantissa bits; IEEE-like Inf and NaN.
struct e5m2 {
  std::uint8_t bits;

  e5m2() = default;
  NORMKIT_ALWAYS_INLINE explicit e5m2(float f) noexcept
      : bits(detail::e5m2_from_float_bits(detail::float_bits(f))) {}
  NORMKIT_ALWAYS_INLINE explicit operator float() const noexcept {
    return detail::bits_float(detail::e5m2_to_float_bits(bits));
  }
  static constexpr e5m2 from_bits(std::uint8_t b) noexcept {
    e5m2 r{};
    r.bits = b;
    return r;
  }
};

static_assert(sizeof(e4m3) == 1 && alignof(e4m3) == 1, "e4m3 must be a plain byte");
static_assert(sizeof(e5m2) == 1 && alignof(e5m2) == 1, "e5m2 must be a plain byte");

// Their storage-type facts (core/storage.hpp): output-only, so they are in no op's input slots.
// canonical_nan is the NaN a NaN result is stored as (the float canonical NaN narrowed).
template <>
struct storage_traits<e4m3> {
  using bits = std::uint8_t;
  static constexpr bits exponent_mask = 0x78u, magnitude_mask = 0x7fu, canonical_nan = 0x7fu;
  static constexpr float max_finite = 448.0f;
  static constexpr const char* name = "e4m3";
  static constexpr bool input = false;
};
template <>
struct storage_traits<e5m2> {
  using bits = std::uint8_t;
  static constexpr bits exponent_mask = 0x7cu, magnitude_mask = 0x7fu, canonical_nan = 0x7eu;
  static constexpr float max_finite = 57344.0f;
  static constexpr const char* name = "e5m2";
  static constexpr bool input = false;
};

// int8 as a quantized output (core/storage.hpp lists the members): output-only, no NaN -- a NaN
// result is stored as 0 (int8_from_float), which canonical_nan records.
template <>
struct storage_traits<std::int8_t> {
  using bits = std::uint8_t;
  static constexpr bits exponent_mask = 0x00u, magnitude_mask = 0x7fu, canonical_nan = 0x00u;
  static constexpr float max_finite = 127.0f;
  static constexpr const char* name = "i8";
  static constexpr bool input = false;
};

// One block of ggml's Q8_0 (ggml-common.h, block_q8_0: { ggml_half d; int8_t qs[QK8_0]; }, 34
// bytes): 32 int8 values and the fp16 scale d they are multiplied by; ops/quantize.hpp has the
// arithmetic. Layout-compatible with ggml's, so the blocks feed its Q8_0 dot products as they are.
struct block_q8_0 {
  static constexpr std::size_t size = 32;  // QK8_0
  fp16 d;
  std::int8_t qs[size];
};
static_assert(sizeof(block_q8_0) == 34 && alignof(block_q8_0) == 2, "ggml's block_q8_0 is 34 bytes");

}  // namespace normkit

#include "fp_precise_end.hpp"
