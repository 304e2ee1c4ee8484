// SPDX-License-Identifier: MIT
// normkit tests: independent arithmetic for deriving expected bits (fp32 steps, rounding to a
// storage type, ulp distances) and the small helpers the numerics tests (test_rms_norm,
// test_layer_norm, test_presets) share. None of it calls the code under test.
#pragma once

#include "support.hpp"

#include <algorithm>  // std::max
#include <cmath>      // std::sqrt, std::ldexp, std::ilogb, std::nearbyint, std::isfinite, std::fabs
#include <cstddef>    // std::size_t
#include <cstdint>    // std::int64_t, std::uint32_t
#include <cstdlib>    // std::llabs
#include <ostream>    // std::hex, std::dec
#include <string>     // std::string, std::to_string
#include <vector>     // std::vector

namespace normkit_test {

// ---- Independent fp32 arithmetic ----
// One fp32 operation = the exact result rounded once. A float product is exact in double, and a
// float sum, quotient or square root rounded first to double and then to float is the correctly
// rounded float result (53 >= 2 * 24 + 2), so these helpers are the contract's fp32 steps (IEEE
// fp32 ops) without fp32 expressions a compiler could contract into an fma.
inline float f32_add(float a, float b) {
  return static_cast<float>(static_cast<double>(a) + b);
}
inline float f32_mul(float a, float b) {
  return static_cast<float>(static_cast<double>(a) * b);
}
inline float f32_div(float a, float b) {
  return static_cast<float>(static_cast<double>(a) / b);
}
inline float f32_sqrt(float a) {
  return static_cast<float>(std::sqrt(static_cast<double>(a)));
}

// ---- Storage formats, described by their parameters rather than by normkit's conversions ----
template <class T>
struct format;
template <>
struct format<float> {
  static constexpr int digits = 24, emin = -126;
  static constexpr double max = 0x1.fffffep127;
  static constexpr std::uint32_t nan = 0x7fc00000u, sign = 0x80000000u;
};
template <>
struct format<bf16> {
  static constexpr int digits = 8, emin = -126;
  static constexpr double max = 0x1.fep127;
  static constexpr std::uint32_t nan = 0x7fc0u, sign = 0x8000u;
};
template <>
struct format<fp16> {
  static constexpr int digits = 11, emin = -14;
  static constexpr double max = 65504.0;
  static constexpr std::uint32_t nan = 0x7e00u, sign = 0x8000u;
};

// v rounded to T's grid, ties to even, with T's subnormals and overflow to Inf. Written with
// power-of-two scaling and nearbyint, independently of normkit's integer conversions.
template <class T>
double round_to(double v) {
  if (v == 0.0 || !std::isfinite(v))
    return v;
  const int e = std::max(std::ilogb(v), format<T>::emin);
  const double q = std::ldexp(1.0, e - (format<T>::digits - 1));
  const double r = std::nearbyint(v / q) * q;
  return std::fabs(r) > format<T>::max ? std::copysign(HUGE_VAL, v) : r;
}

// Position of a value in T's ordered set of values (+0 and -0 share 0): differences are ulps.
template <class T>
std::int64_t ordered(T v) {
  const std::uint32_t b = bits(v);
  const std::int64_t mag = static_cast<std::int64_t>(b & (format<T>::sign - 1u));
  return (b & format<T>::sign) ? -mag : mag;
}

// ulps of T between y and the value `exact` rounded to T.
template <class T>
std::int64_t ulp_distance(T y, double exact) {
  const T r = normkit::from_float<T>(static_cast<float>(round_to<T>(exact)));  // on T's grid: exact
  return std::llabs(ordered(y) - ordered(r));
}

// The output a contract value v (already an fp32 result) must store as: Out(v), with NaN
// canonical.
template <class Out>
::testing::AssertionResult stores(Out y, double v) {
  const bool ok = v != v ? bits(y) == format<Out>::nan
                         : bits(y) == bits(normkit::from_float<Out>(static_cast<float>(round_to<Out>(v))));
  if (ok)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "stored 0x" << std::hex << bits(y) << std::dec << " ("
                                       << normkit::to_float(y) << "), expected Out(" << v << ")";
}

// Distribution of ulp distances against the oracle, printed so a regression in accuracy shows
// before it crosses a budget.
struct ulp_histogram {
  std::size_t count[3] = {0, 0, 0};  // 0 ulp (correctly rounded), 1 ulp, more
  std::int64_t max = 0;
  void add(std::int64_t d) {
    ++count[d < 2 ? d : 2];
    max = std::max(max, d);
  }
  std::string str() const {
    return "0 ulp: " + std::to_string(count[0]) + ", 1 ulp: " + std::to_string(count[1]) +
           ", >1 ulp: " + std::to_string(count[2]) + " (max " + std::to_string(max) + ")";
  }
};

// ---- Rows and messages ----
template <class T>
std::vector<T> from_floats(const std::vector<float>& v) {
  std::vector<T> r;
  for (float f : v)
    r.push_back(as<T>(f));
  return r;
}

// The ISA a test runs on, for failure messages.
inline std::string isa_name() {
  return normkit::to_string(normkit::active_isa());
}

}  // namespace normkit_test
