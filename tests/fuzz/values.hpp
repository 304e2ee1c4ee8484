// SPDX-License-Identifier: MIT
// normkit fuzzing support: storage values from the fuzz input -- raw bit patterns, and classes
// of rows that reach every branch of the kernels (ordinary, shifted mean, overflow, underflow,
// subnormal, constant, zero, specials sprinkled at chosen positions).
#pragma once

#include <fuzzer/FuzzedDataProvider.h>
#include <normkit/types.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint16_t, std::uint32_t
#include <cstring>      // std::memcpy
#include <type_traits>  // std::is_same
#include <utility>      // std::forward
#include <vector>       // std::vector

#include "../common.hpp"  // storage types, names, bits
#include "guarded.hpp"

namespace normkit_fuzz {

using normkit::bf16;
using normkit::fp16;
using normkit_test::bits;
using normkit_test::bits_at;
using normkit_test::from_bits;
using normkit_test::type_name;

template <class T>
using tag = normkit_test::type_tag<T>;

// Dispatches a runtime type index to a generic lambda taking tag<T>, T one of the library's
// storage types (tests/common.hpp).
template <class F>
void with_storage_type(unsigned t, F&& f) {
  normkit_test::visit(normkit_test::dtype{t % normkit_test::storage_types::size}, std::forward<F>(f));
}

inline float f32(std::uint32_t u) {
  return normkit::detail::bits_float(u);
}

// Storage value from a float bit pattern: float keeps all bits, bf16 the top half (so the
// classes below keep their meaning), fp16 rounds (RNE) from the float.
template <class T>
T from_pattern(std::uint32_t u) {
  if constexpr (std::is_same<T, float>::value)
    return f32(u);
  else if constexpr (std::is_same<T, bf16>::value)
    return bf16::from_bits(static_cast<std::uint16_t>(u >> 16));
  else
    return fp16(f32(u));
}

// Values that sit on a branch or a rounding edge somewhere (as float bit patterns).
constexpr std::uint32_t special_patterns[] = {
    0x00000000u, 0x80000000u,  // +-0
    0x3f800000u, 0xbf800000u,  // +-1
    0x7fc00000u, 0xffc00001u,  // quiet NaNs (with payload, negative)
    0x7f800001u, 0x7fa00000u,  // signalling NaNs
    0x7f800000u, 0xff800000u,  // +-Inf
    0x7f7fffffu, 0xff7fffffu,  // +-FLT_MAX
    0x00800000u, 0x00000001u,  // FLT_MIN, smallest subnormal
    0x807fffffu, 0x00400000u,  // subnormals
    0x5f800000u, 0x5f7fffffu,  // 2^64 and just below: sqrt(FLT_MAX) ~ 1.8447e19 is between
    0x5f8a0000u, 0xdf900000u,  // a bit above 2^64 (squares overflow)
    0x477fe000u, 0x477ff000u,  // 65504 (fp16 max), 65520 (rounds to fp16 Inf)
    0x1e3ce508u, 0x33d6bf95u,  // 1e-20 (square underflows), 1e-7
    0x461c4000u, 0x4b800000u,  // 1e4, 2^24
};
constexpr std::size_t n_specials = sizeof(special_patterns) / sizeof(special_patterns[0]);

template <class T>
struct span {
  T* b;
  T* e;
  T* begin() const { return b; }
  T* end() const { return e; }
};
template <class T>
span<T> span_of(T* p, std::size_t n) {
  return {p, p + n};
}

// Type-erased filler: what the harnesses store per storage type.
using fill_fn = void (*)(void* v, std::size_t n, unsigned value_class, prng& g, FuzzedDataProvider& in);

enum class value_class : unsigned {
  raw,       // fuzz-input bytes, then random bit patterns: NaN/Inf/subnormal all appear
  ordinary,  // |x| in [2^-8, 2^5), random sign and mantissa
  shifted,   // a large mean (1e4 .. 1e6) with a small spread: the cancellation case
  huge,      // |x| in [2^60, 2^127]: squares overflow, the scaled path
  tiny,      // |x| < 2^-100, subnormals included: squares underflow
  constant,  // one value repeated (LayerNorm gives beta exactly)
  zeros,     // all zero
  count
};

// Fills v according to the class; the first bytes of a raw tensor come from the input itself so
// libFuzzer can steer exact values.
template <class T>
void fill_values(T* v, std::size_t n, value_class c, prng& g, FuzzedDataProvider& in) {
  auto pattern = [&](std::uint32_t sign, std::uint32_t exp_lo, std::uint32_t exp_hi) {
    const std::uint32_t u = g.u32();
    const std::uint32_t e = exp_lo + u % (exp_hi - exp_lo + 1);
    return (sign ? 0x80000000u : 0u) | (e << 23) | (g.u32() & 0x7fffffu);
  };
  switch (c) {
    case value_class::raw: {
      const std::vector<std::uint8_t> bytes = in.ConsumeBytes<std::uint8_t>(n * sizeof(T));
      std::size_t i = 0;
      for (; i < bytes.size() / sizeof(T); ++i)
        std::memcpy(&v[i], bytes.data() + i * sizeof(T), sizeof(T));
      for (; i < n; ++i)
        v[i] = from_bits<T>(g.u32());  // every pattern of the type
      break;
    }
    case value_class::ordinary:
      for (T& e : span_of(v, n))
        e = from_pattern<T>(pattern(g.u32() & 1u, 127 - 8, 127 + 4));
      break;
    case value_class::shifted: {
      const float mean = f32(pattern(g.u32() & 1u, 127 + 13, 127 + 19));
      const float spread = mean * f32(pattern(0, 127 - 16, 127 - 8));
      for (T& e : span_of(v, n)) {
        const float u = static_cast<float>(g.u32() >> 8) * 0x1p-24f - 0.5f;  // [-0.5, 0.5)
        e = normkit::from_float<T>(mean + spread * u);
      }
      break;
    }
    case value_class::huge:
      for (T& e : span_of(v, n))
        e = from_pattern<T>(pattern(g.u32() & 1u, 127 + 60, 254));
      break;
    case value_class::tiny:
      for (T& e : span_of(v, n))
        e = from_pattern<T>(pattern(g.u32() & 1u, 0, 27));
      break;
    case value_class::constant: {
      const std::uint32_t u = (g.u32() & 1u) ? special_patterns[g.u32() % n_specials] : g.u32();
      for (T& e : span_of(v, n))
        e = from_pattern<T>(u);
      break;
    }
    case value_class::zeros:
    case value_class::count:
      for (T& e : span_of(v, n))
        e = from_pattern<T>(0u);
      break;
  }
  // Specials at positions the fuzzer picks (e.g. one NaN in a vector tail).
  const int n_overrides = in.ConsumeIntegralInRange<int>(0, 4);
  for (int k = 0; k < n_overrides && n > 0; ++k) {
    const std::size_t at = in.ConsumeIntegralInRange<std::size_t>(0, n - 1);
    v[at] = from_pattern<T>(special_patterns[in.ConsumeIntegralInRange<std::size_t>(0, n_specials - 1)]);
  }
}

template <class T>
void fill_erased(void* v, std::size_t n, unsigned c, prng& g, FuzzedDataProvider& in) {
  fill_values(static_cast<T*>(v), n, static_cast<value_class>(c % static_cast<unsigned>(value_class::count)),
              g, in);
}

// cols in [0, 4096], biased to vector-width boundaries: multiples of 4/8/16/64, +-1.
inline std::size_t pick_cols(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {
      constexpr std::size_t units[] = {4, 8, 16, 64};
      const std::size_t u = units[in.ConsumeIntegralInRange<int>(0, 3)];
      const std::size_t k = in.ConsumeIntegralInRange<std::size_t>(0, 4096 / u);
      const int d = in.ConsumeIntegralInRange<int>(-1, 1);
      if (k == 0 && d < 0)
        return 0;
      const std::size_t c = k * u + static_cast<std::size_t>(d + 1) - 1;
      return c > 4096 ? 4096 : c;
    }
    case 1:
      return in.ConsumeIntegralInRange<std::size_t>(0, 70);
    default:
      return in.ConsumeIntegralInRange<std::size_t>(0, 4096);
  }
}

}  // namespace normkit_fuzz
