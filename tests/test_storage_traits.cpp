// SPDX-License-Identifier: MIT
// The storage-type trait (core/storage.hpp, core/fp8.hpp) states facts the kernels rely on; each
// is checked here against the types' own conversions over every bit pattern (every 4099th float).
#include <gtest/gtest.h>
#include <normkit/normkit.hpp>

#include "common.hpp"

#include <cmath>    // std::isnan, std::isfinite, std::fabs
#include <cstdint>  // std::uint32_t
#include <cstring>  // std::memcpy
#include <set>      // std::set
#include <string>   // std::string

namespace {

using normkit_test::from_bits;  // tests/common.hpp

template <class T>
float widen(T v) {
  return static_cast<float>(v);
}

// Every pattern of T (floats: a stride through all 2^32 plus the ones that matter).
template <class T, class F>
void for_patterns(F f) {
  using traits = normkit::storage_traits<T>;
  if constexpr (sizeof(typename traits::bits) == 4) {
    for (std::uint64_t u = 0; u <= 0xffffffffull; u += 4099)
      f(static_cast<std::uint32_t>(u));
    for (std::uint32_t u : {0x7f7fffffu, 0x7f800000u, 0x7f800001u, 0x7fc00000u, 0xff800000u, 0xffffffffu})
      f(u);
  } else {
    for (std::uint32_t u = 0; u < (1u << (8 * sizeof(typename traits::bits))); ++u)
      f(u);
  }
}

template <class T>
void check_traits() {
  using traits = normkit::storage_traits<T>;
  SCOPED_TRACE(traits::name);
  EXPECT_EQ(sizeof(typename traits::bits), sizeof(T));
  // The canonical NaN is a NaN, and it is what the float canonical NaN narrows to.
  EXPECT_TRUE(std::isnan(widen(from_bits<T>(traits::canonical_nan))));
  float qnan;
  const std::uint32_t q = 0x7fc00000u;
  std::memcpy(&qnan, &q, sizeof qnan);
  if constexpr (!std::is_same<T, float>::value) {
    EXPECT_EQ(T(qnan).bits, traits::canonical_nan);
  }
  // max_finite is the largest finite value the type holds; the magnitude mask clears the sign.
  float largest = 0.0f;
  bool finiteness_rule = true;
  for_patterns<T>([&](std::uint32_t u) {
    const float v = widen(from_bits<T>(u));
    if (std::isfinite(v) && v > largest)
      largest = v;
    const std::uint32_t mag = u & traits::magnitude_mask;
    if (!std::isnan(v)) {
      EXPECT_EQ(widen(from_bits<T>(mag)), std::fabs(v)) << std::hex << u;
    }
    if (traits::input && ((mag >= traits::exponent_mask) != !std::isfinite(v)))
      finiteness_rule = false;
  });
  EXPECT_EQ(largest, traits::max_finite);
  // Input types: with the sign cleared, non-finite values are exactly those >= the exponent mask
  // (the kernels' finiteness scan).
  EXPECT_TRUE(finiteness_rule);
}

TEST(StorageTraits, FactsMatchTheConversions) {
  check_traits<float>();
  check_traits<normkit::bf16>();
  check_traits<normkit::fp16>();
  check_traits<normkit::e4m3>();
  check_traits<normkit::e5m2>();
}

TEST(StorageTraits, InputTypesAreTheNormTypesAndNamesAreDistinct) {
  EXPECT_TRUE(normkit::is_storage_type<float>::value);
  EXPECT_TRUE(normkit::is_storage_type<normkit::bf16>::value);
  EXPECT_TRUE(normkit::is_storage_type<normkit::fp16>::value);
  EXPECT_FALSE(normkit::is_storage_type<normkit::e4m3>::value);  // output-only
  EXPECT_FALSE(normkit::is_storage_type<double>::value);
  EXPECT_FALSE(normkit::storage_traits<normkit::e5m2>::input);
  const std::set<std::string> names = {
      normkit::storage_traits<float>::name, normkit::storage_traits<normkit::bf16>::name,
      normkit::storage_traits<normkit::fp16>::name, normkit::storage_traits<normkit::e4m3>::name,
      normkit::storage_traits<normkit::e5m2>::name};
  EXPECT_EQ(names.size(), 5u);
}

}  // namespace
