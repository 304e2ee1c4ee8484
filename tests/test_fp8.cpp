// SPDX-License-Identifier: MIT
// fp8 storage types and the saturating int8 conversion (include/normkit/fp8.hpp), against the
// independent formulas of quant_formulas.hpp: all 256 patterns of each type to float; float to
// fp8 and to int8 on a strided sweep of the 2^32 float patterns plus every boundary neighbourhood
// (the maxima and the midpoints beyond them, every tie, the subnormal edges); and the same bits
// under every rounding mode and, on x86, with FTZ/DAZ set. The full 2^32 sweep is
// test_fp8_exhaustive.cpp (ctest -L exhaustive).
#include "quant_formulas.hpp"

#include <gtest/gtest.h>
#include <normkit/fp8.hpp>
#include <normkit/types.hpp>

#include <cfenv>             // std::fesetround, std::fegetround, FE_*
#include <cmath>             // std::isnan, std::signbit, std::ldexp
#include <cstdint>           // std::int8_t, std::uint8_t, std::uint32_t, std::uint64_t
#include <cstdio>            // std::snprintf
#include <initializer_list>  // range-for over a braced list
#include <string>            // std::string
#include <type_traits>       // std::is_trivially_copyable, std::is_trivially_default_constructible
#include <vector>            // std::vector

#include "fp_control.hpp"

namespace {

using normkit::e4m3;
using normkit::e5m2;
using normkit_test::formula::bits_float;
using normkit_test::formula::float_bits;
using normkit_test::formula::fp8_reference;
using normkit_test::fp_control;
using normkit_test::flush_bits;
using normkit_test::have_flush_to_zero;
using normkit_test::set_fp_control;

static_assert(sizeof(e4m3) == 1 && sizeof(e5m2) == 1, "one byte each");
static_assert(std::is_trivially_copyable<e4m3>::value && std::is_trivially_copyable<e5m2>::value,
              "storage types are trivially copyable");
static_assert(std::is_trivially_default_constructible<e4m3>::value &&
                  std::is_trivially_default_constructible<e5m2>::value,
              "uninitialized like float");
static_assert(e4m3::from_bits(0x7e).bits == 0x7e && e5m2::from_bits(0x7b).bits == 0x7b,
              "constexpr from_bits");

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
  return buf;
}

// ---- The reference, against values worked out by hand (so it cannot share a mistake with
// fp8.hpp), and against plausible wrong conversions.

TEST(Fp8Reference, DecodesHandWorkedPatterns) {
  const fp8_reference& a = normkit_test::formula::e4m3_reference();
  const fp8_reference& b = normkit_test::formula::e5m2_reference();
  // e4m3: 0x38 = 0.0111.000 = 2^(7-7); 0x7E = 0.1111.110 = 1.75 * 2^8; 0x01 = 2^-6 * 1/8; 0x08 = 2^-6.
  EXPECT_EQ(a.value(0x38), 1.0);
  EXPECT_EQ(a.value(0x7e), 448.0);
  EXPECT_EQ(a.value(0xfe), -448.0);
  EXPECT_EQ(a.value(0x01), 0.001953125);  // 2^-9
  EXPECT_EQ(a.value(0x08), 0.015625);     // 2^-6
  EXPECT_EQ(a.value(0x07), 0.013671875);  // 7 * 2^-9
  EXPECT_EQ(a.value(0x78), 256.0);        // 0.1111.000: 2^8, a normal number (no Inf in e4m3)
  EXPECT_TRUE(std::isnan(a.value(0x7f)) && std::isnan(a.value(0xff)));
  EXPECT_EQ(a.max_finite(), 448.0);
  // e5m2: 0x3C = 0.01111.00 = 1; 0x7B = 0.11110.11 = 1.75 * 2^15; 0x01 = 2^-14 / 4; 0x7C = Inf.
  EXPECT_EQ(b.value(0x3c), 1.0);
  EXPECT_EQ(b.value(0x7b), 57344.0);
  EXPECT_EQ(b.value(0x01), 0.0000152587890625);  // 2^-16
  EXPECT_EQ(b.value(0x04), 0.00006103515625);    // 2^-14
  EXPECT_TRUE(std::isinf(b.value(0x7c)) && b.value(0x7c) > 0 && b.value(0xfc) < 0);
  EXPECT_TRUE(std::isnan(b.value(0x7d)) && std::isnan(b.value(0x7e)) && std::isnan(b.value(0x7f)));
  EXPECT_EQ(b.max_finite(), 57344.0);
}

TEST(Fp8Reference, EncodesHandWorkedCases) {
  const fp8_reference& a = normkit_test::formula::e4m3_reference();
  const fp8_reference& b = normkit_test::formula::e5m2_reference();
  struct hand_case {
    float x;
    unsigned e4m3_bits, e5m2_bits;
  };
  const hand_case cases[] = {
      {1.0f, 0x38, 0x3c},
      {1.0625f, 0x38, 0x3c},  // e4m3: tie 1 | 1.125 -> even 0x38; e5m2: below 1.125 (tie 1 | 1.25)
      {1.125f, 0x39, 0x3c},   // e5m2: tie 1 | 1.25 -> even 0x3C
      {1.1875f, 0x3a, 0x3d},  // e4m3: tie 1.125 (0x39) | 1.25 (0x3A) -> 0x3A
      {1.375f, 0x3b, 0x3e},   // e5m2: tie 1.25 (0x3D) | 1.5 (0x3E) -> 0x3E
      {448.0f, 0x7e, 0x5f},   // e5m2: 448 = 1.75 * 2^8 = 0.10111.11
      {464.0f, 0x7e, 0x5f},   // e4m3: max + half a step: saturates; e5m2: below 480, the midpoint
      {480.0f, 0x7e, 0x60},   // e5m2: tie 448 (0x5F) | 512 (0x60) -> 0x60
      {1e30f, 0x7e, 0x7b},
      {57344.0f, 0x7e, 0x7b},
      {61440.0f, 0x7e, 0x7b},  // e5m2: max + half a step (the RNE overflow point): saturates
      {-1e30f, 0xfe, 0xfb},
      {0.0009765625f, 0x00, 0x14},  // 2^-10: e4m3 half its smallest subnormal -> 0 (even); e5m2 0.00101.00
      {0.0029296875f, 0x02, 0x1a},  // 1.5 * 2^-9: e4m3 tie 0x01 | 0x02 -> 0x02; e5m2 0.00110.10
      {0.00000762939453125f, 0x00, 0x00},  // 2^-17: e5m2 half its smallest subnormal -> 0
      {-0.0f, 0x80, 0x80},
      {-1e-30f, 0x80, 0x80},
  };
  for (const hand_case& c : cases) {
    EXPECT_EQ(a.from_float(c.x), c.e4m3_bits) << "e4m3 of " << c.x;
    EXPECT_EQ(b.from_float(c.x), c.e5m2_bits) << "e5m2 of " << c.x;
  }
  // 2^-10 and a hair more (one float ulp): the first rounds to zero, the second up.
  EXPECT_EQ(a.from_float_bits(0x3a800001u), 0x01);
  // Inf saturates; NaN: e4m3 S.1111.111, e5m2 quiet with mantissa bit 21 of the float kept.
  EXPECT_EQ(a.from_float_bits(0x7f800000u), 0x7e);
  EXPECT_EQ(a.from_float_bits(0xff800000u), 0xfe);
  EXPECT_EQ(b.from_float_bits(0x7f800000u), 0x7b);
  EXPECT_EQ(a.from_float_bits(0x7fc00000u), 0x7f);
  EXPECT_EQ(a.from_float_bits(0xffc00001u), 0xff);
  EXPECT_EQ(b.from_float_bits(0x7fc00000u), 0x7e);
  EXPECT_EQ(b.from_float_bits(0x7fa00000u), 0x7f);  // signalling, bit 21 set: quieted, bit kept
  EXPECT_EQ(b.from_float_bits(0xff800001u), 0xfe);
  // Truncation, half-away-from-zero and IEEE overflow to Inf all differ from it here.
  EXPECT_NE(a.from_float(1.12f), 0x38);     // truncation would give 1.0
  EXPECT_NE(a.from_float(1.0625f), 0x39);   // half-away would give 1.125
  EXPECT_NE(b.from_float(61440.0f), 0x7c);  // IEEE RNE would give Inf
}

// ---- Widening: all 256 patterns of each type against the formula.

template <class T>
void check_all_patterns_widen(const fp8_reference& ref, bool has_inf) {
  for (unsigned b = 0; b < 256; ++b) {
    const std::uint8_t p = static_cast<std::uint8_t>(b);
    const float f = static_cast<float>(T::from_bits(p));
    const double want = ref.value(p);
    const std::uint32_t sign = (b & 0x80u) << 24;
    if (std::isnan(want)) {
      // contract (fp8.hpp): NaN widens to a quiet NaN with the sign kept; e5m2 keeps its payload.
      const std::uint32_t expect = has_inf ? (sign | 0x7fc00000u | ((b & 1u) << 21)) : (sign | 0x7fc00000u);
      EXPECT_EQ(float_bits(f), expect) << "pattern " << hex(b);
      continue;
    }
    EXPECT_EQ(static_cast<double>(f), want) << "pattern " << hex(b);
    EXPECT_EQ(std::signbit(f), (b & 0x80u) != 0) << "pattern " << hex(b);
  }
}

TEST(Fp8, AllE4m3PatternsWidenAsTheFormulaSays) {
  check_all_patterns_widen<e4m3>(normkit_test::formula::e4m3_reference(), false);
}

TEST(Fp8, AllE5m2PatternsWidenAsTheFormulaSays) {
  check_all_patterns_widen<e5m2>(normkit_test::formula::e5m2_reference(), true);
}

// e5m2 is the top byte of fp16 (same sign and exponent fields, mantissa cut to two bits): every
// pattern, NaN and Inf included, widens as the fp16 it is the top byte of (types.hpp's widening,
// itself checked exhaustively elsewhere).
TEST(Fp8, E5m2WidensAsTheTopByteOfFp16) {
  for (unsigned b = 0; b < 256; ++b) {
    const float as_e5m2 = static_cast<float>(e5m2::from_bits(static_cast<std::uint8_t>(b)));
    const float as_fp16 = static_cast<float>(normkit::fp16::from_bits(static_cast<std::uint16_t>(b << 8)));
    EXPECT_EQ(float_bits(as_e5m2), float_bits(as_fp16)) << "pattern " << hex(b);
  }
}

// Every finite pattern survives widening and narrowing unchanged (both conversions exact there).
TEST(Fp8, FinitePatternsRoundTrip) {
  for (unsigned b = 0; b < 256; ++b) {
    const std::uint8_t p = static_cast<std::uint8_t>(b);
    if ((b & 0x7fu) != 0x7fu) {
      EXPECT_EQ(e4m3(static_cast<float>(e4m3::from_bits(p))).bits, b) << hex(b);
    }
    if ((b & 0x7cu) != 0x7cu) {
      EXPECT_EQ(e5m2(static_cast<float>(e5m2::from_bits(p))).bits, b) << hex(b);
    }
  }
}

// ---- Narrowing: a strided sweep plus every boundary neighbourhood.

// Float patterns around the interesting points of both formats: every finite fp8 value and every
// midpoint between neighbours (the ties), the midpoint above each maximum, twice each maximum,
// half the smallest subnormals, 0, Inf and the NaN edge, each +-64 patterns, both signs.
std::vector<std::uint32_t> boundary_patterns() {
  std::vector<double> centers = {0.0, 464.0, 480.0, 896.0, 61440.0, 65536.0, 114688.0, 0x1p-10, 0x1p-17};
  for (const fp8_reference* r :
       {&normkit_test::formula::e4m3_reference(), &normkit_test::formula::e5m2_reference()}) {
    std::vector<double> values;
    for (unsigned b = 0; b < 0x80u; ++b) {
      const double v = r->value(static_cast<std::uint8_t>(b));
      if (!std::isnan(v) && !std::isinf(v))
        values.push_back(v);
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
      centers.push_back(values[k]);
      if (k + 1 < values.size())
        centers.push_back((values[k] + values[k + 1]) / 2);  // exact: a few bits, in float range
    }
  }
  std::vector<std::uint32_t> out;
  auto around = [&out](std::uint32_t c) {
    for (std::uint32_t d = 0; d <= 128; ++d) {
      const std::uint32_t u = c - 64u + d;
      out.push_back(u);
      out.push_back(u ^ 0x80000000u);
    }
  };
  for (double c : centers)
    around(float_bits(static_cast<float>(c)));  // every center is a float exactly
  around(0x7f800000u);  // Inf, the largest finite floats below it, the smallest NaNs above it
  around(0x7fc00000u);
  around(64u);  // float subnormals next to zero
  return out;
}

// The sweep's patterns: every 4099th (prime stride: all exponents and low mantissa bits vary)
// and the boundary neighbourhoods.
std::vector<std::uint32_t> sweep_patterns() {
  std::vector<std::uint32_t> out = boundary_patterns();
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 4099)
    out.push_back(static_cast<std::uint32_t>(u));
  out.push_back(0xffffffffu);
  return out;
}

template <class T>
void check_narrowing(const std::vector<std::uint32_t>& patterns, const fp8_reference& ref, const char* name) {
  std::uint64_t mismatches = 0;
  for (std::uint32_t u : patterns) {
    const unsigned got = T(bits_float(u)).bits, want = ref.from_float_bits(u);
    if (got != want && ++mismatches <= 8)
      ADD_FAILURE() << name << "(" << hex(u) << " = " << bits_float(u) << ") = " << hex(got) << ", formula "
                    << hex(want);
  }
  EXPECT_EQ(mismatches, 0u) << name << " over " << patterns.size() << " patterns";
}

TEST(Fp8, E4m3NarrowingMatchesTheFormulaOnTheSweep) {
  check_narrowing<e4m3>(sweep_patterns(), normkit_test::formula::e4m3_reference(), "e4m3");
}

TEST(Fp8, E5m2NarrowingMatchesTheFormulaOnTheSweep) {
  check_narrowing<e5m2>(sweep_patterns(), normkit_test::formula::e5m2_reference(), "e5m2");
}

// ---- int8.

TEST(Int8, HandWorkedCases) {
  struct hand_case {
    float x;
    int q;
  };
  const hand_case cases[] = {
      {0.0f, 0},       {-0.0f, 0},      {0.5f, 0},        {-0.5f, 0},       {1.5f, 2},    {2.5f, 2},
      {-1.5f, -2},     {-2.5f, -2},     {0.49999997f, 0}, {0.50000006f, 1}, {3.49f, 3},   {126.5f, 126},
      {127.0f, 127},   {127.49f, 127},  {127.5f, 127},  // RNE gives 128, then the clamp
      {-127.5f, -128}, {-128.0f, -128}, {-128.5f, -128},  {-129.0f, -128},  {1e10f, 127}, {-1e10f, -128},
  };
  for (const hand_case& c : cases) {
    EXPECT_EQ(static_cast<int>(normkit::int8_from_float(c.x)), c.q) << c.x;
    EXPECT_EQ(static_cast<int>(normkit_test::formula::int8_rne_sat(c.x)), c.q) << "formula at " << c.x;
  }
  EXPECT_EQ(normkit::int8_from_float(bits_float(0x7f800000u)), 127);
  EXPECT_EQ(normkit::int8_from_float(bits_float(0xff800000u)), -128);
  EXPECT_EQ(normkit::int8_from_float(bits_float(0x7fc00000u)), 0);  // NaN -> 0
  EXPECT_EQ(normkit::int8_from_float(bits_float(0xffa00001u)), 0);
}

TEST(Int8, MatchesTheFormulaOnTheSweep) {
  std::vector<std::uint32_t> patterns = sweep_patterns();
  for (int k = -260; k <= 260; ++k) {  // every half-integer and integer through the clamp range
    const std::uint32_t c = float_bits(static_cast<float>(k) / 2.0f);
    for (std::uint32_t d = 0; d <= 16; ++d) {
      patterns.push_back(c - 8u + d);
    }
  }
  std::uint64_t mismatches = 0;
  for (std::uint32_t u : patterns) {
    const int got = normkit::int8_from_float(bits_float(u));
    const int want = normkit_test::formula::int8_rne_sat(bits_float(u));
    if (got != want && ++mismatches <= 8)
      ADD_FAILURE() << "int8(" << hex(u) << " = " << bits_float(u) << ") = " << got << ", formula " << want;
  }
  EXPECT_EQ(mismatches, 0u);
}

// ---- The FP environment changes no result: the conversions use integer operations only.

struct env_case {
  const char* name;
  int rounding;
  bool flush;
};

// Converts every pattern to e4m3, e5m2 and int8 and back to float, under the environment, which
// is restored before anything is compared.
struct converted {
  std::vector<std::uint8_t> a, b;
  std::vector<std::int8_t> q;
  std::vector<std::uint32_t> wa, wb;  // widened again
};

converted convert_all(const std::vector<std::uint32_t>& patterns) {
  converted c;
  for (std::uint32_t u : patterns) {
    const float f = bits_float(u);
    const e4m3 x(f);
    const e5m2 y(f);
    c.a.push_back(x.bits);
    c.b.push_back(y.bits);
    c.q.push_back(normkit::int8_from_float(f));
    c.wa.push_back(float_bits(static_cast<float>(x)));
    c.wb.push_back(float_bits(static_cast<float>(y)));
  }
  return c;
}

TEST(Fp8, FpEnvironmentChangesNoResult) {
  const std::vector<std::uint32_t> patterns = boundary_patterns();
  const converted want = convert_all(patterns);
  const env_case envs[] = {
      {"FE_UPWARD", FE_UPWARD, false},
      {"FE_DOWNWARD", FE_DOWNWARD, false},
      {"FE_TOWARDZERO", FE_TOWARDZERO, false},
      {"flush to zero", FE_TONEAREST, true},
      {"FE_UPWARD with flush to zero", FE_UPWARD, true},
  };
  for (const env_case& e : envs) {
    if (e.flush && !have_flush_to_zero)
      continue;
    const int saved_round = std::fegetround();
    const std::uint64_t saved_control = fp_control();
    ASSERT_EQ(std::fesetround(e.rounding), 0) << e.name;
    if (e.flush)
      set_fp_control(fp_control() | flush_bits);
    const converted got = convert_all(patterns);
    set_fp_control(saved_control);
    std::fesetround(saved_round);
    for (std::size_t k = 0; k < patterns.size(); ++k) {
      EXPECT_EQ(got.a[k], want.a[k]) << e.name << ": e4m3 of " << hex(patterns[k]);
      EXPECT_EQ(got.b[k], want.b[k]) << e.name << ": e5m2 of " << hex(patterns[k]);
      EXPECT_EQ(got.q[k], want.q[k]) << e.name << ": int8 of " << hex(patterns[k]);
      EXPECT_EQ(got.wa[k], want.wa[k]) << e.name << ": e4m3 widening of " << hex(patterns[k]);
      EXPECT_EQ(got.wb[k], want.wb[k]) << e.name << ": e5m2 widening of " << hex(patterns[k]);
      if (::testing::Test::HasFailure())
        return;  // one report per environment is enough
    }
  }
  // The results taken in the default environment are the formula's (so "unchanged" means right).
  for (std::size_t k = 0; k < patterns.size(); ++k) {
    ASSERT_EQ(want.a[k], normkit_test::formula::e4m3_reference().from_float_bits(patterns[k]))
        << hex(patterns[k]);
    ASSERT_EQ(want.b[k], normkit_test::formula::e5m2_reference().from_float_bits(patterns[k]))
        << hex(patterns[k]);
  }
}

}  // namespace
