// SPDX-License-Identifier: MIT
// Exhaustive narrowing (ctest label "exhaustive"): every one of the 2^32 float bit patterns,
// narrowed to bf16 and to fp16 by the scalar conversion and by normkit::convert on every ISA this
// CPU runs, is checked against an independent formula -- rounding done on the real value in
// double, not the integer carry trick of types.hpp. And every pattern quantized to e4m3, e5m2 and
// int8 by the quantized norms' kernels on every SIMD ISA, against the scalar conversions; and every
// float up to 127 in magnitude through Q8_0 on every ISA, against ggml's roundf. Prints the time of
// each check.
#include "support.hpp"

#include <algorithm>    // std::max, std::min
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono::steady_clock
#include <cmath>        // std::fabs, std::round
#include <cstdint>      // std::int8_t, std::uint16_t, std::uint32_t, std::uint64_t
#include <cstdio>       // std::printf, std::snprintf
#include <cstring>      // std::memcpy, std::memcmp
#include <ctime>        // std::clock
#include <functional>   // std::function
#include <memory>       // std::unique_ptr
#include <mutex>        // std::mutex
#include <string>       // std::string
#include <thread>       // std::thread
#include <type_traits>  // std::is_same, std::is_trivially_copyable
#include <utility>      // std::move
#include <vector>       // std::vector

namespace {

using namespace normkit_test;
using normkit::e4m3;
using normkit::e5m2;
using normkit::isa;

double pow2(int k) {  // 2^k for normal-range k, built from its bit pattern (exact, no libm)
  const std::uint64_t b = static_cast<std::uint64_t>(1023 + k) << 52;
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

// The independent formula. A binary format with ExpBits exponent and ManBits mantissa bits:
//   finite x: find the binade 2^e <= |x| < 2^(e+1) (e from the double's exponent field; every float
//   is a normal double), the format's unit in the last place there, 2^q with
//   q = max(e, emin) - ManBits, and round |x| / 2^q to an integer n, ties to even, in double
//   ((t + 2^52) - 2^52 rounds a t < 2^52 to an integer under the default rounding mode). The
//   value n * 2^q is then encoded: subnormal binades count units directly; normal ones put
//   (n - 2^ManBits) in the mantissa field, n = 2^(ManBits+1) carrying into the exponent. Anything
//   at or past the Inf pattern is Inf (IEEE RNE overflow).
//   NaN: quiet bit set, sign and top ManBits - 1 payload bits kept. Inf: Inf.
template <int ExpBits, int ManBits>
std::uint16_t narrow_via_double(std::uint32_t u) {
  constexpr int bias = (1 << (ExpBits - 1)) - 1;
  constexpr int emin = 1 - bias;
  constexpr std::uint32_t inf = ((1u << ExpBits) - 1u) << ManBits;
  const std::uint32_t sign = (u >> 31) << 15;
  const std::uint32_t fexp = (u >> 23) & 0xffu, fman = u & 0x7fffffu;
  if (fexp == 0xffu) {
    if (fman == 0)
      return static_cast<std::uint16_t>(sign | inf);
    return static_cast<std::uint16_t>(sign | inf | (1u << (ManBits - 1)) | (fman >> (23 - ManBits)));
  }
  const double a = std::fabs(static_cast<double>(normkit::detail::bits_float(u)));
  if (a == 0.0)
    return static_cast<std::uint16_t>(sign);
  std::uint64_t db;
  std::memcpy(&db, &a, sizeof db);
  const int e = static_cast<int>((db >> 52) & 0x7ffu) - 1023;
  const int q = std::max(e, emin) - ManBits;
  const double t = a * pow2(-q);                           // exact: a power-of-two scaling
  const double n = (t + 0x1p52) - 0x1p52;                  // round to integer, ties to even
  const std::uint32_t ni = static_cast<std::uint32_t>(n);  // <= 2^(ManBits + 1)
  std::uint32_t r;
  if (e < emin)
    r = ni;  // subnormal units; ni == 2^ManBits is exactly the smallest normal's pattern
  else
    r = (static_cast<std::uint32_t>(e + bias) << ManBits) + (ni - (1u << ManBits));
  if (r >= inf)
    r = inf;
  return static_cast<std::uint16_t>(sign | r);
}

std::uint16_t bf16_formula(std::uint32_t u) {
  return narrow_via_double<8, 7>(u);
}
std::uint16_t fp16_formula(std::uint32_t u) {
  return narrow_via_double<5, 10>(u);
}

// The formula against values worked out by hand (so it cannot share a mistake with types.hpp),
// and against two plausible wrong conversions, so a formula that accepted them would be caught.
TEST(Exhaustive, FormulaMatchesHandWorkedCases) {
  const std::uint32_t in[] = {0x3f800000u, 0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0x7f7f8000u, 0x00008000u,
                              0x00018000u, 0x007fffffu, 0x80000000u, 0x7f800001u, 0xffbf0000u, 0x477fefffu,
                              0x477ff000u, 0x33000000u, 0x33000001u, 0x387fe000u, 0x34200000u, 0x7fa00000u};
  const std::uint16_t bf[] = {0x3f80, 0x3f80, 0x3f82, 0x7f80, 0x7f80, 0x0000, 0x0002, 0x0080, 0x8000,
                              0x7fc0, 0xffff, 0x4780, 0x4780, 0x3300, 0x3300, 0x3880, 0x3420, 0x7fe0};
  const std::uint16_t hf[] = {0x3c00, 0x3c04, 0x3c0c, 0x7c00, 0x7c00, 0x0000, 0x0000, 0x0000, 0x8000,
                              0x7e00, 0xfff8, 0x7bff, 0x7c00, 0x0000, 0x0001, 0x0400, 0x0002, 0x7f00};
  for (std::size_t k = 0; k < sizeof in / sizeof in[0]; ++k) {
    EXPECT_EQ(bf16_formula(in[k]), bf[k]) << "bf16 formula at 0x" << std::hex << in[k];
    EXPECT_EQ(fp16_formula(in[k]), hf[k]) << "fp16 formula at 0x" << std::hex << in[k];
  }
  // Truncation and round-half-away differ from it (and from RNE) on these inputs.
  EXPECT_NE(bf16_formula(0x3f80ffffu), 0x3f80);  // truncation would give 0x3f80
  EXPECT_NE(bf16_formula(0x3f808000u), 0x3f81);  // half-away would give 0x3f81
  EXPECT_NE(fp16_formula(0x33000000u), 0x0001);  // half-away would give 0x0001
}

// A check's totals, and their report: the time it took (wall and process CPU: the machine is
// shared, so wall time alone can mislead), then a failure per example and for any mismatch.
struct tally {
  std::string name;
  double wall = 0, cpu = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::string> examples;
};

void report(const tally& t, const char* patterns) {
  std::printf("[ timing   ] %s: %s patterns, %.1f s wall, %.1f s CPU, %llu mismatches\n", t.name.c_str(),
              patterns, t.wall, t.cpu, static_cast<unsigned long long>(t.mismatches));
  std::fflush(stdout);
  for (const auto& e : t.examples)
    ADD_FAILURE() << t.name << ": " << e;
  EXPECT_EQ(t.mismatches, 0u) << t.name;
}

// One check: a conversion of n floats to T, run with `which` selected (the scalar conversion
// needs no ISA), and its totals.
template <class T>
struct check : tally {
  bool uses_isa = false;
  isa which = isa::scalar;
  std::function<void(const float*, T*, std::size_t)> convert;
};

// body(begin, end) over [0, n) in chunks (of 2^20 unless told), on two threads.
template <class Body>
void parallel_chunks(std::size_t n, Body body, std::size_t chunk = std::size_t{1} << 20) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t b; (b = next.fetch_add(chunk)) < n;)
      body(b, std::min(n, b + chunk));
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
}

// All 2^32 patterns, 2^24 at a time: the formula's expected bits are computed once per block and
// every check converts the same block and compares (so the formula is evaluated once per pattern,
// not once per check). Prints the time each check took (wall and process CPU: the machine is
// shared, so wall time alone can mislead).
template <class T>
void run_all_floats(bits_type<T> (*formula)(std::uint32_t), std::vector<check<T>>& checks) {
  static_assert(sizeof(T) == sizeof(bits_type<T>) && std::is_trivially_copyable<T>::value,
                "T's bytes are its pattern");
  constexpr std::size_t block = std::size_t{1} << 24;
  std::vector<float> src(block);
  std::vector<bits_type<T>> want(block);
  std::mutex mu;
  double formula_wall = 0, formula_cpu = 0;
  using clock = std::chrono::steady_clock;
  for (std::uint64_t base = 0; base < (std::uint64_t{1} << 32); base += block) {
    auto t0 = clock::now();
    std::clock_t c0 = std::clock();
    parallel_chunks(block, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k) {
        const std::uint32_t u = static_cast<std::uint32_t>(base + k);
        src[k] = normkit::detail::bits_float(u);
        want[k] = formula(u);
      }
    });
    formula_wall += std::chrono::duration<double>(clock::now() - t0).count();
    formula_cpu += static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    for (check<T>& c : checks) {
      isa_scope scope(c.uses_isa ? c.which : normkit::active_isa());
      ASSERT_TRUE(scope.ok()) << c.name;
      t0 = clock::now();
      c0 = std::clock();
      parallel_chunks(block, [&](std::size_t b, std::size_t e) {
        const std::unique_ptr<T[]> out(new T[e - b]);
        c.convert(src.data() + b, out.get(), e - b);
        if (std::memcmp(out.get(), want.data() + b, (e - b) * sizeof(T)) == 0)
          return;
        std::lock_guard<std::mutex> lock(mu);
        for (std::size_t k = 0; k < e - b; ++k) {
          if (bits(out[k]) == want[b + k])
            continue;
          if (++c.mismatches <= 8) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "0x%08x -> 0x%04x, expected 0x%04x", bits(src[b + k]),
                          static_cast<unsigned>(bits(out[k])), static_cast<unsigned>(want[b + k]));
            c.examples.push_back(buf);
          }
        }
      });
      c.wall += std::chrono::duration<double>(clock::now() - t0).count();
      c.cpu += static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    }
  }
  std::printf("[ timing   ] expected bits: %.1f s wall, %.1f s CPU\n", formula_wall, formula_cpu);
  for (const check<T>& c : checks)
    report(c, "2^32");
}

// The scalar conversion T(float) and normkit::convert<float, T> on every ISA this CPU runs.
template <class T>
std::vector<check<T>> checks_for() {
  std::vector<check<T>> checks(1);
  checks[0].name = std::string("scalar ") + type_name<T>() + "(float)";
  checks[0].convert = [](const float* s, T* o, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k)
      o[k] = T(s[k]);
  };
  for (isa i : all_isas()) {
    if (!normkit::isa_available(i)) {
      std::printf("[ skipped  ] convert<float, %s> on %s: not available on this CPU/build\n", type_name<T>(),
                  normkit::to_string(i));
      continue;
    }
    check<T> c;
    c.name = std::string("convert<float, ") + type_name<T>() + "> on " + normkit::to_string(i);
    c.uses_isa = true;
    c.which = i;
    c.convert = [](const float* s, T* o, std::size_t n) {
      const normkit::status st = normkit::convert(s, o, n);
      if (st != normkit::status::ok)
        ADD_FAILURE() << "convert: " << normkit::to_string(st);
    };
    checks.push_back(std::move(c));
  }
  return checks;
}

TEST(Exhaustive, EveryFloatNarrowsToBf16AsTheFormulaSays) {
  auto checks = checks_for<bf16>();
  run_all_floats(bf16_formula, checks);
}

TEST(Exhaustive, EveryFloatNarrowsToFp16AsTheFormulaSays) {
  auto checks = checks_for<fp16>();
  run_all_floats(fp16_formula, checks);
}

// The quantized norms' conversions, every float through each SIMD ISA's kernels. With x a row
// of ones and eps 0, RMSNorm's factor is 1/sqrt(1) = 1 and n_i = 1, so v_i = n_i * g_i is the
// gain itself, and a static scale of 1 makes q_i = Q(g_i): 2^20 patterns per call, as the gains of
// one row. A block of patterns is all finite or all NaN/Inf (2^20 divides 2^23), so finite blocks
// run the output loop of clean rows and the others the general one. Three routes: the fused
// kernel (x and gains float, e4m3 and int8: the sink's conversion for clean rows, simd/rows.hpp),
// and the two stages (x bf16: the norm, then the quantize kernel's conversion with its NaN
// handling; e5m2 always). Expected: the scalar conversion of v (Q(float), which
// test_fp8_exhaustive checks against the independent formulas on every pattern), a NaN v stored
// as the canonical NaN narrowed (the norms' NaN outputs are canonical). Finite blocks also check
// amax = max |g|. The reference path is that scalar conversion itself, so it is not a check here.
template <class Q>
bits_type<Q> quantized_expected(std::uint32_t u) {
  const float v = normkit::detail::bits_float((u & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : u);
  if constexpr (std::is_same<Q, std::int8_t>::value)
    return static_cast<bits_type<Q>>(normkit::int8_from_float(v));
  else
    return Q(v).bits;
}

template <class In, class Q>
void quantize_as_gains(const float* g, Q* q, std::size_t n) {
  static const std::vector<In> ones(std::size_t{1} << 20, normkit::from_float<In>(1.0f));
  ASSERT_LE(n, ones.size());
  float amax = -1.0f;
  ASSERT_EQ(normkit::rms_norm_quant<normkit::pytorch>(ones.data(), g, q, 1, n, 0.0f, 1.0f, &amax),
            normkit::status::ok);
  std::uint32_t want = 0;
  for (std::size_t k = 0; k < n; ++k)
    want = std::max(want, bits(g[k]) & 0x7fffffffu);
  if (want < 0x7f800000u) {
    ASSERT_EQ(bits(amax), want) << "amax of the block at 0x" << std::hex << bits(g[0]);
  }
}

template <class Q>
void quantized_checks() {
  namespace nd = normkit::detail;
  constexpr bool fused = nd::rms_norm_static_quant_op::has_kernel<float, float, Q>;
  std::vector<check<Q>> checks;
  for (isa i : all_isas()) {
    if (i == isa::scalar)
      continue;
    if (!normkit::isa_available(i)) {
      std::printf("[ skipped  ] rms_norm_quant to %s on %s: not available on this CPU/build\n",
                  type_name<Q>(), normkit::to_string(i));
      continue;
    }
    // Each route must run the kernel it is named after, not fall back to another path (in builds
    // whose dispatch objects hold every kernel).
    isa_scope scope(i);
    ASSERT_TRUE(scope.ok());
    if (NORMKIT_TEST_EVERY_KERNEL) {
      ASSERT_TRUE((normkit::impl::has_kernel<nd::quantize_op, normkit::pytorch, Q>())) << to_string(i);
      ASSERT_FALSE(
          (normkit::impl::has_kernel<nd::rms_norm_static_quant_op, normkit::pytorch, bf16, float, Q>()));
      ASSERT_EQ(
          (normkit::impl::has_kernel<nd::rms_norm_static_quant_op, normkit::pytorch, float, float, Q>()),
          fused)
          << to_string(i);
    }
    check<Q> c;
    c.uses_isa = true;
    c.which = i;
    if (fused) {
      c.name = std::string("rms_norm_quant to ") + type_name<Q>() + ", fused, on " + to_string(i);
      c.convert = quantize_as_gains<float, Q>;
      checks.push_back(c);
    }
    c.name = std::string("rms_norm_quant to ") + type_name<Q>() + ", two stages, on " + to_string(i);
    c.convert = quantize_as_gains<bf16, Q>;
    checks.push_back(c);
  }
  if (checks.empty())
    GTEST_SKIP() << "no SIMD ISA runs here";
  run_all_floats(quantized_expected<Q>, checks);
}

TEST(Exhaustive, EveryFloatQuantizesToE4m3OnEveryIsaAsTheScalarConversion) {
  quantized_checks<e4m3>();
}

TEST(Exhaustive, EveryFloatQuantizesToE5m2OnEveryIsaAsTheScalarConversion) {
  quantized_checks<e5m2>();
}

TEST(Exhaustive, EveryFloatQuantizesToInt8OnEveryIsaAsTheScalarConversion) {
  quantized_checks<std::int8_t>();
}

// Q8_0's round-half-away conversion on every ISA (the scalar reference included), for every float
// it converts as it is: a block whose largest magnitude is 127 has d = 127 / 127 = 1 and id = 1,
// so q_i = round(v_i). Every pattern with |v| <= 127 (2.25e9 of them: both signs, zeros and
// subnormals included) goes through rms_norm_q8_0 as the gains of a row of ones (v_i = g_i, as
// above), 31 per block beside a 127. Expected: ggml's own formula (quantize_row_q8_0_ref: roundf of x * id,
// C99 round half away from zero), with the C library's roundf -- not normkit's conversion. A block whose
// scale is not 1 multiplies first, and |x * id| stays below 127.5 there, so these are all the roundings it
// can meet; NaN, Inf and out-of-range values have their own tests (test_quant).
TEST(Exhaustive, EveryFloatUpTo127QuantizesToQ8_0OnEveryIsaAsGgmlRounds) {
  using normkit::block_q8_0;
  constexpr std::uint32_t top = 0x42fe0000u;                     // 127.0f
  constexpr std::uint64_t count = 2 * (std::uint64_t{top} + 1);  // [+0, 127] and [-0, -127]
  constexpr std::size_t per_block = block_q8_0::size - 1, blocks = 32768, cols = blocks * block_q8_0::size;
  constexpr std::uint64_t per_call = std::uint64_t{per_block} * blocks;
  const std::size_t calls = static_cast<std::size_t>((count + per_call - 1) / per_call);
  auto pattern = [](std::uint64_t k) {
    return k <= top ? static_cast<std::uint32_t>(k) : 0x80000000u | static_cast<std::uint32_t>(k - top - 1);
  };
  const std::vector<bf16> ones(cols, normkit::from_float<bf16>(1.0f));
  for (isa i : all_isas()) {
    if (!normkit::isa_available(i)) {
      std::printf("[ skipped  ] rms_norm_q8_0 on %s: not available on this CPU/build\n",
                  normkit::to_string(i));
      continue;
    }
    isa_scope scope(i);
    ASSERT_TRUE(scope.ok());
    std::mutex mu;
    tally t;
    t.name = std::string("rms_norm_q8_0 on ") + normkit::to_string(i);
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    parallel_chunks(
        calls,
        [&](std::size_t c0, std::size_t c1) {
          std::vector<float> g(cols);
          std::vector<block_q8_0> q(blocks);
          for (std::size_t c = c0; c < c1; ++c) {
            const std::uint64_t k0 = c * per_call;
            for (std::size_t b = 0; b < blocks; ++b) {
              for (std::size_t j = 0; j < per_block; ++j) {
                const std::uint64_t k = k0 + b * per_block + j;
                g[b * block_q8_0::size + j] = normkit::detail::bits_float(k < count ? pattern(k) : 0u);
              }
              g[b * block_q8_0::size + per_block] = 127.0f;
            }
            const normkit::status st =
                normkit::rms_norm_q8_0<normkit::pytorch>(ones.data(), g.data(), q.data(), 1, cols, 0.0f);
            std::uint64_t bad = 0;
            char buf[128] = "";
            for (std::size_t b = 0; b < blocks; ++b) {
              const bool scale_ok = q[b].d.bits == 0x3c00u && q[b].qs[per_block] == 127;
              for (std::size_t j = 0; j < per_block; ++j) {
                const float v = g[b * block_q8_0::size + j];
                const int want = static_cast<int>(std::round(v));  // |v| <= 127: no clamp needed
                if (scale_ok && q[b].qs[j] == want)
                  continue;
                if (bad++ == 0)
                  std::snprintf(buf, sizeof buf, "0x%08x -> %d (d 0x%04x), expected %d (d 0x3c00)", bits(v),
                                q[b].qs[j], static_cast<unsigned>(q[b].d.bits), want);
              }
            }
            std::lock_guard<std::mutex> lock(mu);
            if (st != normkit::status::ok)
              t.examples.push_back(std::string("status ") + normkit::to_string(st));
            t.mismatches += bad;
            if (bad && t.examples.size() < 8)
              t.examples.push_back(buf);
          }
        },
        1);
    t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t.cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    report(t, std::to_string(count).c_str());
  }
}

}  // namespace
