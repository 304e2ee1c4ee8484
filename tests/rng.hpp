// SPDX-License-Identifier: MIT
// normkit tests: the deterministic generator, shared by the GoogleTest suites (via support.hpp)
// and the fuzz harnesses (tests/fuzz/guarded.hpp), which must not depend on GoogleTest.
#pragma once

#include <cmath>    // std::fma
#include <cstdint>  // std::uint32_t, std::uint64_t

// The test's own floating-point code (input generators, checks) keeps IEEE semantics under
// clang's unsafe-math flags, which define no macro: the corpus_clang_* tests build this with
// them to probe normkit's own float_control region (core/fp_precise_begin.hpp), and the
// inputs must not change with the flags under test.
#if defined(__clang__)
#pragma float_control(precise, on, push)
#endif

namespace normkit_test {

// Deterministic, integer-only generator (splitmix64): the same values on every platform and
// compiler, so corpus hashes can be compared across x86 and AArch64.
class rng {
 public:
  explicit rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint32_t u32() { return static_cast<std::uint32_t>(next() >> 32); }
  // Uniform in [0, 1): 24 random bits, exact.
  float uniform() { return static_cast<float>(next() >> 40) * 0x1p-24f; }
  // Explicit fma: a contraction flag must not change the generated values (hash comparisons
  // across builds depend on it).
  float uniform(float lo, float hi) { return std::fma(hi - lo, uniform(), lo); }
  // Approximately N(0, 1): Irwin-Hall of 4 uniforms, IEEE adds only (no libm).
  float normal() {
    const float s = (uniform() + uniform()) + (uniform() + uniform());
    return (s - 2.0f) * 1.7320508f;
  }

 private:
  std::uint64_t s_;
};

}  // namespace normkit_test

#if defined(__clang__)
#pragma float_control(pop)
#endif
