// SPDX-License-Identifier: MIT
// Exhaustive fp8 / int8 narrowing (ctest label "exhaustive"): every one of the 2^32 float bit
// patterns, converted by e4m3(float), e5m2(float) and int8_from_float (include/normkit/fp8.hpp),
// is checked against the independent formulas of quant_formulas.hpp (nearest value of a sorted
// table of the decoded patterns, compared in double). Two threads; prints the time of each check.
#include "quant_formulas.hpp"

#include <gtest/gtest.h>
#include <normkit/fp8.hpp>

#include <algorithm>  // std::min
#include <atomic>     // std::atomic
#include <chrono>     // std::chrono::steady_clock
#include <cstdint>    // std::uint32_t, std::uint64_t
#include <cstdio>     // std::printf, std::snprintf, std::fflush
#include <ctime>      // std::clock
#include <mutex>      // std::mutex
#include <string>     // std::string
#include <thread>     // std::thread
#include <vector>     // std::vector

namespace {

using normkit_test::formula::bits_float;

// check(u) -> (got, want) for pattern u; every pattern, on two threads, in chunks of 2^20.
template <class Check>
void all_floats(const char* name, Check check) {
  constexpr std::uint64_t total = std::uint64_t{1} << 32, chunk = std::uint64_t{1} << 20;
  std::atomic<std::uint64_t> next{0}, mismatches{0};
  std::mutex mu;
  std::vector<std::string> examples;
  auto worker = [&] {
    for (std::uint64_t b; (b = next.fetch_add(chunk)) < total;) {
      for (std::uint64_t k = b; k < b + chunk; ++k) {
        const std::uint32_t u = static_cast<std::uint32_t>(k);
        int got, want;
        check(u, got, want);
        if (got == want)
          continue;
        if (mismatches.fetch_add(1) < 8) {
          char buf[96];
          std::snprintf(buf, sizeof buf, "0x%08x -> %d, formula %d", static_cast<unsigned>(u), got, want);
          std::lock_guard<std::mutex> lock(mu);
          examples.push_back(buf);
        }
      }
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("[ timing   ] %s: 2^32 patterns, %.1f s wall, %.1f s CPU, %llu mismatches\n", name, wall, cpu,
              static_cast<unsigned long long>(mismatches.load()));
  std::fflush(stdout);
  for (const std::string& e : examples)
    ADD_FAILURE() << name << ": " << e;
  EXPECT_EQ(mismatches.load(), 0u) << name;
}

TEST(Fp8Exhaustive, EveryFloatNarrowsToE4m3AsTheFormulaSays) {
  const auto& ref = normkit_test::formula::e4m3_reference();
  all_floats("e4m3(float)", [&ref](std::uint32_t u, int& got, int& want) {
    got = normkit::e4m3(bits_float(u)).bits;
    want = ref.from_float_bits(u);
  });
}

TEST(Fp8Exhaustive, EveryFloatNarrowsToE5m2AsTheFormulaSays) {
  const auto& ref = normkit_test::formula::e5m2_reference();
  all_floats("e5m2(float)", [&ref](std::uint32_t u, int& got, int& want) {
    got = normkit::e5m2(bits_float(u)).bits;
    want = ref.from_float_bits(u);
  });
}

TEST(Fp8Exhaustive, EveryFloatNarrowsToInt8AsTheFormulaSays) {
  all_floats("int8_from_float", [](std::uint32_t u, int& got, int& want) {
    got = normkit::int8_from_float(bits_float(u));
    want = normkit_test::formula::int8_rne_sat(bits_float(u));
  });
}

}  // namespace
