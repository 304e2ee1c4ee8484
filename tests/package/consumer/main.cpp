// SPDX-License-Identifier: MIT
// Packaging check: the consumer compiles, links what its route brings, gets the reference's bits
// from the path that runs, and runs a SIMD path when the CPU has AVX2 + FMA + F16C (asked of the
// compiler's own cpuid support, independently of normkit's detection).
#include <normkit/normkit.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

#if defined(CONSUMER_EXPECT_SCALAR)
#define CONSUMER_SCALAR_EXPECTED true
#else
#define CONSUMER_SCALAR_EXPECTED false
#endif

static bool cpu_has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

int main() {
  const std::size_t rows = 3, cols = 1000;
  std::vector<normkit::bf16> x(rows * cols), g(cols), y(rows * cols), want(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = normkit::bf16(static_cast<float>(i % 17) - 8.0f);
  for (std::size_t i = 0; i < cols; ++i)
    g[i] = normkit::bf16(1.0f + static_cast<float>(i % 5) / 8.0f);
  if (normkit::rms_norm<normkit::llama>(x.data(), g.data(), y.data(), rows, cols, 1e-6f) !=
      normkit::status::ok)
    return 1;
  if (normkit::reference::rms_norm<normkit::llama>(x.data(), g.data(), want.data(), rows, cols, 1e-6f) !=
      normkit::status::ok)
    return 1;
  if (std::memcmp(y.data(), want.data(), y.size() * sizeof(normkit::bf16)) != 0)
    return 2;
  const normkit::isa active = normkit::active_isa();
#if defined(CONSUMER_EXPECT_SCALAR)
  if (active != normkit::isa::scalar) {
    std::printf("consumer FAILED: built without xsimd, yet %s runs\n", normkit::to_string(active));
    return 3;
  }
#endif
  if (cpu_has_avx2() && active == normkit::isa::scalar && !CONSUMER_SCALAR_EXPECTED) {
    std::printf("consumer FAILED: the CPU has AVX2 but the scalar path runs\n");
    return 3;
  }
  std::printf("consumer ok (%s; CPU with AVX2: %s)\n", normkit::to_string(active), cpu_has_avx2() ? "yes" : "no");
  return 0;
}
