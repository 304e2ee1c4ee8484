// SPDX-License-Identifier: MIT
// normkit tests: shared generators, bit comparison and ISA selection.
#pragma once

#include "common.hpp"  // storage types, names, bits
#include "rng.hpp"     // rng

#include <gtest/gtest.h>
#include <normkit/normkit.hpp>

#include <cstdint>  // std::uint16_t, std::uint32_t, std::uint64_t
#include <cstdio>   // std::snprintf
#include <cstring>  // std::memcpy
#include <ostream>  // std::ostream
#include <string>   // std::string
#include <type_traits>
#include <vector>  // std::vector

// IEEE semantics for the generators under clang's unsafe-math flags (see rng.hpp).
#if defined(__clang__)
#pragma float_control(precise, on, push)
#endif

namespace normkit_test {

template <class T>
T as(float v) {
  return normkit::from_float<T>(v);
}

template <class T>
std::vector<T> normal_vec(rng& r, std::size_t n, float sigma = 1.0f, float mean = 0.0f) {
  std::vector<T> v(n);
  for (auto& e : v)
    e = as<T>(mean + sigma * r.normal());
  return v;
}

template <class T>
std::vector<T> uniform_vec(rng& r, std::size_t n, float lo, float hi) {
  std::vector<T> v(n);
  for (auto& e : v)
    e = as<T>(r.uniform(lo, hi));
  return v;
}

// Raw random bit patterns: NaN, Inf, subnormals and huge values all appear.
template <class T>
std::vector<T> raw_bits_vec(rng& r, std::size_t n) {
  std::vector<T> v(n);
  for (auto& e : v) {
    e = from_bits<T>(r.u32());
  }
  return v;
}

// Bitwise comparison: reports the first differing index, both values in hex and `what` (the
// ISA or case). NaNs are compared by bits too: the contract pins the canonical NaN.
template <class T>
::testing::AssertionResult same_bits(const T* a, const T* b, std::size_t n, const std::string& what) {
  for (std::size_t i = 0; i < n; ++i) {
    if (bits(a[i]) != bits(b[i])) {
      char buf[160];
      std::snprintf(
          buf, sizeof buf, "%s: first difference at index %zu of %zu: 0x%08x vs 0x%08x (%.9g vs %.9g)",
          what.c_str(), i, n, static_cast<unsigned>(bits(a[i])), static_cast<unsigned>(bits(b[i])),
          static_cast<double>(normkit::to_float(a[i])), static_cast<double>(normkit::to_float(b[i])));
      return ::testing::AssertionFailure() << buf;
    }
  }
  return ::testing::AssertionSuccess();
}

template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& a, const std::vector<T>& b,
                                     const std::string& what) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << what << ": sizes differ";
  return same_bits(a.data(), b.data(), a.size(), what);
}

// A row of gains (or bias) whose special-value positions land in each part of the kernels'
// per-call finiteness scan (simd/rows.hpp, all_finite_bits) for every lane count: the four-batch
// loop, the one-batch loop and the zero-padded tail.
constexpr std::size_t gain_scan_cols = 203;
constexpr std::size_t gain_scan_positions[] = {5, 130, 198, 202};

#define EXPECT_SAME_BITS(a, b, what) EXPECT_TRUE(::normkit_test::same_bits(a, b, what))
#define ASSERT_SAME_BITS(a, b, what) ASSERT_TRUE(::normkit_test::same_bits(a, b, what))

// ---- ISAs: tests take the ISA as a value parameter named scalar/avx2/avx512/avx512bf16/
// avx512fp16/neon.
inline std::vector<normkit::isa> all_isas() {
  return {normkit::isa::scalar,     normkit::isa::avx2,       normkit::isa::avx512,
          normkit::isa::avx512bf16, normkit::isa::avx512fp16, normkit::isa::neon};
}

}  // namespace normkit_test

namespace normkit {
// Readable ISA names in gtest output ("GetParam() = avx2").
inline void PrintTo(isa i, std::ostream* os) {
  *os << to_string(i);
}
}  // namespace normkit

namespace normkit_test {

inline std::string isa_param_name(const ::testing::TestParamInfo<normkit::isa>& info) {
  return normkit::to_string(info.param);
}

// Pins the streaming threshold (normkit::set_stream_min_bytes) for the scope of a test -- the
// machine's may be tens of MiB -- and restores it after.
struct pinned_stream_threshold {
  std::size_t before = normkit::stream_min_bytes();
  explicit pinned_stream_threshold(std::size_t bytes) { normkit::set_stream_min_bytes(bytes); }
  ~pinned_stream_threshold() { normkit::set_stream_min_bytes(before); }
};

// Pins the backward's group size (normkit::impl::set_grad_group_rows: 2 or 4) for the scope of a
// test -- the CPU's may be either -- and restores it after.
struct pinned_grad_group_rows {
  std::size_t before = normkit::impl::grad_group_rows();
  explicit pinned_grad_group_rows(std::size_t rows) { normkit::impl::set_grad_group_rows(rows); }
  ~pinned_grad_group_rows() { normkit::impl::set_grad_group_rows(before); }
};

// Selects an ISA for the scope of a test and restores the previous one.
class isa_scope {
 public:
  explicit isa_scope(normkit::isa i) : prev_(normkit::active_isa()) {
    ok_ = normkit::set_isa(i) == normkit::status::ok;
  }
  ~isa_scope() { (void)normkit::set_isa(prev_); }
  bool ok() const { return ok_; }
  isa_scope(const isa_scope&) = delete;
  isa_scope& operator=(const isa_scope&) = delete;

 private:
  normkit::isa prev_;
  bool ok_ = false;
};

// In a TEST_P over ISAs: selects the ISA or skips, visibly, when this CPU or build lacks it.
#define NORMKIT_USE_ISA(i)                         \
  ::normkit_test::isa_scope normkit_isa_scope_(i); \
  if (!normkit_isa_scope_.ok())                    \
  GTEST_SKIP() << "ISA " << normkit::to_string(i) << " is not available on this CPU/build"

// 64-bit FNV-1a over raw bytes: the corpus hash.
inline std::uint64_t fnv1a(const void* p, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ull) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace normkit_test

#if defined(__clang__)
#pragma float_control(pop)
#endif
