// SPDX-License-Identifier: MIT
// normkit: the storage types, their exact conversions, and the one trait that describes them.
//
// bf16 and fp16 are plain 2-byte values, layout-compatible with torch.bfloat16 / torch.float16 /
// Eigen::bfloat16 / Eigen::half. Widening to float is exact. Narrowing from float rounds to
// nearest, ties to even; +-Inf stays +-Inf; subnormals are kept (never flushed); overflow follows
// IEEE round-to-nearest-even (fp16: |x| >= 65520 gives Inf); NaN stays NaN, quieted, sign and top
// payload bits kept. Only integer operations are used, so the FP environment (FTZ/DAZ, rounding
// mode) cannot change a result; an fp16 overflow raises FE_OVERFLOW, as F16C and Arm do.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstdint>      // std::uint16_t, std::uint32_t
#include <cstring>      // std::memcpy
#include <type_traits>  // std::is_same, std::integral_constant

#include "abi.hpp"
#include "type_list.hpp"

#if defined(__GNUC__)
// Conversions are forced inline so that no out-of-line copy compiled with one TU's -m flags can
// be picked by the linker for another TU (core/abi.hpp).
#define NORMKIT_ALWAYS_INLINE inline __attribute__((always_inline))
// Forced inline for a lambda (the attribute goes after its parameter list); the kernels use it
// for speed, on the per-row loop of write_row (simd/rows.hpp).
#define NORMKIT_LAMBDA_ALWAYS_INLINE __attribute__((always_inline))
// The branch the kernels take on all but a few rows, laid out first.
#define NORMKIT_EXPECT(c, v) __builtin_expect(static_cast<bool>(c), v)
#else
#define NORMKIT_ALWAYS_INLINE inline
#define NORMKIT_LAMBDA_ALWAYS_INLINE
#define NORMKIT_EXPECT(c, v) (c)
#endif

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {  // every function: core/abi.hpp
namespace detail {

NORMKIT_ALWAYS_INLINE std::uint32_t float_bits(float f) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

NORMKIT_ALWAYS_INLINE float bits_float(std::uint32_t u) noexcept {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// float -> bf16 bits, round to nearest even; NaN -> quiet NaN with sign and top payload kept.
NORMKIT_ALWAYS_INLINE std::uint16_t bf16_from_float_bits(std::uint32_t u) noexcept {
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  const std::uint32_t lsb = (u >> 16) & 1u;
  return static_cast<std::uint16_t>((u + 0x7fffu + lsb) >> 16);
}

NORMKIT_ALWAYS_INLINE std::uint32_t bf16_to_float_bits(std::uint16_t h) noexcept {
  return static_cast<std::uint32_t>(h) << 16;  // exact, payload and sNaN-ness kept
}

// FE_OVERFLOW (and FE_INEXACT) as the FP operation that rounds a finite value to Inf raises
// them: a finite float that narrows to an fp16 Inf raises them in vcvtps2ph and fcvtn too, so
// every path of a call raises the same flags (and traps alike when the caller enabled the trap).
// volatile: the product is computed at run time, never folded. Only the flags change; the
// result never depends on it.
NORMKIT_ALWAYS_INLINE void raise_overflow() noexcept {
  volatile float big = 0x1p127f;
  big = big * big;
}

// float -> fp16 bits, round to nearest even with subnormal results; NaN -> quiet, top 10 payload
// bits kept (what F16C vcvtps2ph and Arm fcvt produce).
NORMKIT_ALWAYS_INLINE std::uint16_t fp16_from_float_bits(std::uint32_t u) noexcept {
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) {  // >= 65520: Inf
    if (a != 0x7f800000u)
      raise_overflow();
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  }
  if (a >= 0x38800000u) {  // >= 2^-14: normal
    const std::uint32_t r = a + 0x0fffu + ((a >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | ((r - 0x38000000u) >> 13));  // rebias 127 -> 15
  }
  // Subnormal fp16 (or zero): the result counts units of 2^-24.
  const std::uint32_t e = a >> 23;
  if (e < 102)
    return static_cast<std::uint16_t>(sign);  // < 2^-25: rounds to zero
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126u - e;  // in [14, 24]
  std::uint32_t q = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u)))
    ++q;  // may carry into the smallest normal
  return static_cast<std::uint16_t>(sign | q);
}

// fp16 bits -> float bits, exact; a signalling NaN is quieted (as F16C and Arm fcvt do).
NORMKIT_ALWAYS_INLINE std::uint32_t fp16_to_float_bits(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu;
  const std::uint32_t m = h & 0x3ffu;
  if (e == 0x1f)
    return sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0u);
  if (e != 0)
    return sign | ((e + 112u) << 23) | (m << 13);
  if (m == 0)
    return sign;
  // Subnormal: m * 2^-24, normalized by hand (no FP arithmetic, so DAZ cannot interfere).
  std::uint32_t shift = 0;
  std::uint32_t mm = m;
  while ((mm & 0x400u) == 0) {
    mm <<= 1;
    ++shift;
  }
  return sign | ((113u - shift) << 23) | ((mm & 0x3ffu) << 13);
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE

// Brain float: 1 sign, 8 exponent, 7 mantissa bits.
struct bf16 {
  std::uint16_t bits;

  bf16() = default;  // trivial: uninitialized like float
  NORMKIT_ALWAYS_INLINE explicit bf16(float f) noexcept
      : bits(detail::bf16_from_float_bits(detail::float_bits(f))) {}
  NORMKIT_ALWAYS_INLINE explicit operator float() const noexcept {
    return detail::bits_float(detail::bf16_to_float_bits(bits));
  }
  static constexpr bf16 from_bits(std::uint16_t b) noexcept {
    bf16 r{};
    r.bits = b;
    return r;
  }
};

// IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits.
struct fp16 {
  std::uint16_t bits;

  fp16() = default;
  NORMKIT_ALWAYS_INLINE explicit fp16(float f) noexcept
      : bits(detail::fp16_from_float_bits(detail::float_bits(f))) {}
  NORMKIT_ALWAYS_INLINE explicit operator float() const noexcept {
    return detail::bits_float(detail::fp16_to_float_bits(bits));
  }
  static constexpr fp16 from_bits(std::uint16_t b) noexcept {
    fp16 r{};
    r.bits = b;
    return r;
  }
};

static_assert(sizeof(bf16) == 2 && alignof(bf16) == 2, "bf16 must be a plain 2-byte value");
static_assert(sizeof(fp16) == 2 && alignof(fp16) == 2, "fp16 must be a plain 2-byte value");
static_assert(std::is_trivially_copyable<bf16>::value && std::is_trivially_copyable<fp16>::value,
              "storage types must be trivially copyable");

// ---- The storage-type trait: every fact about a storage type that the library uses, in one
// place. No primary definition: a type without a specialization is a compile error wherever a
// fact about it is asked. Members:
//   bits            the unsigned integer of the same size
//   exponent_mask   the exponent field; for input types, with the sign cleared, NaN and +-Inf
//                   are exactly the values >= it (the kernels' finiteness scans rely on it; e4m3,
//                   output-only, has finite values with an all-ones exponent)
//   magnitude_mask  every bit but the sign
//   canonical_nan   the NaN every path stores for a NaN result (docs/contract.md, NaN outputs)
//   max_finite      the largest finite value, as a float
//   name            as in test names, bench rows and the build's type selection
//   input           whether it may be an op's input, gain or bias (output-only types, such as the
//                   coming quantized formats, are not)
template <class T>
struct storage_traits;

template <>
struct storage_traits<float> {
  using bits = std::uint32_t;
  static constexpr bits exponent_mask = 0x7f800000u, magnitude_mask = 0x7fffffffu,
                        canonical_nan = 0x7fc00000u;
  static constexpr float max_finite = 0x1.fffffep127f;
  static constexpr const char* name = "f32";
  static constexpr bool input = true;
};
template <>
struct storage_traits<bf16> {
  using bits = std::uint16_t;
  static constexpr bits exponent_mask = 0x7f80u, magnitude_mask = 0x7fffu, canonical_nan = 0x7fc0u;
  static constexpr float max_finite = 0x1.fep127f;
  static constexpr const char* name = "bf16";
  static constexpr bool input = true;
};
template <>
struct storage_traits<fp16> {
  using bits = std::uint16_t;
  static constexpr bits exponent_mask = 0x7c00u, magnitude_mask = 0x7fffu, canonical_nan = 0x7e00u;
  static constexpr float max_finite = 65504.0f;
  static constexpr const char* name = "f16";
  static constexpr bool input = true;
};

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {
template <class T>
struct is_input_type : std::integral_constant<bool, storage_traits<T>::input> {};
// Every storage type, in table order; the input types (x, gamma, beta) are derived from it.
using storage_types = type_list<float, bf16, fp16>;
using input_types = typename filter<is_input_type, storage_types>::type;
}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE

// The storage types an op accepts for In, W and Out.
template <class T>
struct is_storage_type : detail::contains<T, detail::input_types> {};

inline namespace NORMKIT_ABI_NAMESPACE {

// Exact widening of any storage type to the compute type.
NORMKIT_ALWAYS_INLINE float to_float(float v) noexcept {
  return v;
}
NORMKIT_ALWAYS_INLINE float to_float(bf16 v) noexcept {
  return static_cast<float>(v);
}
NORMKIT_ALWAYS_INLINE float to_float(fp16 v) noexcept {
  return static_cast<float>(v);
}

// Rounding of a compute value to a storage type (identity for float).
template <class T>
NORMKIT_ALWAYS_INLINE T from_float(float v) noexcept {
  return T(v);
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
