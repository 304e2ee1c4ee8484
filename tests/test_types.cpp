// SPDX-License-Identifier: MIT
// Storage types: bf16 / fp16 layout, exact widening of every 16-bit pattern, round-to-nearest-even
// narrowing (docs/contract.md, storage types: to float is exact; from float is RNE, NaN stays NaN quiet
// with its sign, +-Inf stays +-Inf, subnormals kept, overflow follows IEEE RNE), and the bulk
// normkit::convert on every ISA against the scalar conversions.
#include "support.hpp"

#include <array>        // std::array
#include <cmath>        // std::ldexp, std::isnan, std::isinf, std::signbit, std::nextafter
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint16_t, std::uint32_t
#include <cstring>      // std::memcpy, std::memset, std::memcmp
#include <limits>       // std::numeric_limits
#include <string>       // std::string, std::to_string
#include <type_traits>  // std::is_trivially_copyable, ...
#include <vector>       // std::vector

namespace {

using namespace normkit_test;
using normkit::isa;

// ---- An independent decoder: the value of a sign/exponent/mantissa pattern, in double. ----

struct decoded {
  enum kind_t { finite, infinite, nan } kind;
  bool negative;
  double value;            // finite only, sign included (so -0.0 for the negative zero)
  bool quiet;              // NaN only: the top mantissa bit
  std::uint32_t mantissa;  // the raw mantissa field
};

decoded decode(std::uint32_t pattern, int exp_bits, int man_bits) {
  const std::uint32_t man_mask = (1u << man_bits) - 1u;
  const std::uint32_t exp_max = (1u << exp_bits) - 1u;
  const int bias = (1 << (exp_bits - 1)) - 1;
  decoded d{};
  d.negative = ((pattern >> (exp_bits + man_bits)) & 1u) != 0;
  const std::uint32_t e = (pattern >> man_bits) & exp_max;
  d.mantissa = pattern & man_mask;
  if (e == exp_max) {
    d.kind = d.mantissa == 0 ? decoded::infinite : decoded::nan;
    d.quiet = ((d.mantissa >> (man_bits - 1)) & 1u) != 0;
    return d;
  }
  d.kind = decoded::finite;
  // value = m * 2^(1 - bias - man_bits) for subnormals, (2^man_bits + m) * 2^(e - bias - man_bits)
  // for normals: both exact in double.
  const double significand =
      e == 0 ? static_cast<double>(d.mantissa) : static_cast<double>(d.mantissa) + std::ldexp(1.0, man_bits);
  const int exponent = (e == 0 ? 1 : static_cast<int>(e)) - bias - man_bits;
  d.value = std::ldexp(significand, exponent);
  if (d.negative)
    d.value = -d.value;
  return d;
}

constexpr std::uint32_t float_quiet_bit = 0x00400000u;

// contract: widening is exact. For finite values and infinities that is the value and its sign;
// for NaNs the sign and payload are kept. bf16 -> float moves the bits up (a signalling NaN stays
// signalling, as torch's bf16 -> float does); fp16 -> float quiets a signalling NaN, as F16C
// vcvtph2ps and Arm fcvt do, so every ISA can give the same bits (types.hpp).
template <class T>
void check_widening_all_patterns(int man_bits, bool quiets_snan) {
  std::size_t n_nan = 0, n_inf = 0, n_sub = 0, failures = 0;
  for (std::uint32_t h = 0; h <= 0xffffu; ++h) {
    const T v = T::from_bits(static_cast<std::uint16_t>(h));
    const float f = static_cast<float>(v);
    const decoded d = decode(h, 15 - man_bits, man_bits);
    const std::uint32_t fb = bits(f);
    ASSERT_EQ(bits(normkit::to_float(v)), fb)
        << "to_float and the conversion operator disagree at 0x" << std::hex << h;
    bool ok = std::signbit(f) == d.negative;
    switch (d.kind) {
      case decoded::finite:
        ok = ok && static_cast<double>(f) == d.value;
        if (d.value != 0.0 && ((h >> man_bits) & ((1u << (15 - man_bits)) - 1u)) == 0)
          ++n_sub;
        break;
      case decoded::infinite:
        ok = ok && std::isinf(f);
        ++n_inf;
        break;
      case decoded::nan: {
        ++n_nan;
        const std::uint32_t payload = (fb & 0x007fffffu);
        const bool f_quiet = (fb & float_quiet_bit) != 0;
        // The payload moves to the top of the float mantissa.
        const std::uint32_t want_payload =
            (d.mantissa << (23 - man_bits)) | (quiets_snan ? float_quiet_bit : 0u);
        ok = ok && std::isnan(f) && payload == want_payload && f_quiet == (d.quiet || quiets_snan);
        break;
      }
    }
    if (!ok && ++failures <= 10)
      ADD_FAILURE() << type_name<T>() << " pattern 0x" << std::hex << h << " widened to 0x" << fb << " (" << f
                    << "), independent decoder says " << d.value;
  }
  EXPECT_EQ(failures, 0u);
  // The decoder itself saw the expected classes (sanity of the independent side).
  const std::size_t man_count = std::size_t{1} << man_bits;
  EXPECT_EQ(n_nan, 2 * (man_count - 1));
  EXPECT_EQ(n_inf, 2u);
  EXPECT_EQ(n_sub, 2 * (man_count - 1));
}

TEST(Types, Bf16WideningIsExactForAllPatterns) {
  check_widening_all_patterns<bf16>(7, false);
}
TEST(Types, Fp16WideningIsExactForAllPatterns) {
  check_widening_all_patterns<fp16>(10, true);
}

// Hand-checked widening anchors, so that the decoder above cannot share a mistake with types.hpp.
TEST(Types, WideningAnchors) {
  EXPECT_EQ(static_cast<float>(bf16::from_bits(0x3f80)), 1.0f);
  EXPECT_EQ(static_cast<float>(bf16::from_bits(0xc0a0)), -5.0f);
  EXPECT_EQ(static_cast<float>(bf16::from_bits(0x7f7f)), 0x1.fep127f);  // largest finite bf16
  EXPECT_EQ(static_cast<float>(bf16::from_bits(0x0001)), 0x1p-133f);    // smallest subnormal
  EXPECT_EQ(static_cast<float>(fp16::from_bits(0x3c00)), 1.0f);
  EXPECT_EQ(static_cast<float>(fp16::from_bits(0x7bff)), 65504.0f);      // largest finite fp16
  EXPECT_EQ(static_cast<float>(fp16::from_bits(0x0001)), 0x1p-24f);      // smallest subnormal
  EXPECT_EQ(static_cast<float>(fp16::from_bits(0x03ff)), 0x1.ff8p-15f);  // largest subnormal
  EXPECT_EQ(static_cast<float>(fp16::from_bits(0x0400)), 0x1p-14f);      // smallest normal
  EXPECT_EQ(bits(static_cast<float>(fp16::from_bits(0x8000))), 0x80000000u);
  EXPECT_EQ(bits(static_cast<float>(bf16::from_bits(0x8000))), 0x80000000u);
  EXPECT_EQ(bits(static_cast<float>(fp16::from_bits(0xfc00))), 0xff800000u);
  EXPECT_EQ(bits(static_cast<float>(bf16::from_bits(0x7f81))), 0x7f810000u);  // sNaN kept as is
  EXPECT_EQ(bits(static_cast<float>(fp16::from_bits(0x7c01))), 0x7fc02000u);  // sNaN quieted
  EXPECT_EQ(bits(static_cast<float>(fp16::from_bits(0xfe00))), 0xffc00000u);
}

// ---- Narrowing: hand-picked cases, expected bits worked out by hand. ----

struct narrow_case {
  std::uint32_t in;    // float bits
  std::uint16_t want;  // expected 16-bit pattern
  const char* why;
};

// bf16 keeps the top 16 bits of a float, rounded to nearest even on the low 16.
const narrow_case bf16_cases[] = {
    {0x3f800000u, 0x3f80, "1"},
    {0x3f808000u, 0x3f80, "1 + 2^-8: tie, down to even"},
    {0x3f818000u, 0x3f82, "1 + 3*2^-8: tie, up to even"},
    {0x3f808001u, 0x3f81, "just above a tie"},
    {0x3f817fffu, 0x3f81, "just below a tie"},
    {0x3fffffffu, 0x4000, "rounding carries into the exponent"},
    {0xbf808000u, 0xbf80, "negative tie"},
    {0x7f7f0000u, 0x7f7f, "largest finite bf16"},
    {0x7f7f7fffu, 0x7f7f, "below the overflow midpoint"},
    {0x7f7f8000u, 0x7f80, "overflow midpoint (2-2^-8)*2^127: tie to even is Inf"},
    {0x7f7fffffu, 0x7f80, "FLT_MAX overflows to Inf"},
    {0xff7fffffu, 0xff80, "-FLT_MAX overflows to -Inf"},
    {0x7f800000u, 0x7f80, "+Inf"},
    {0xff800000u, 0xff80, "-Inf"},
    {0x00000000u, 0x0000, "+0"},
    {0x80000000u, 0x8000, "-0 keeps its sign"},
    {0x00000001u, 0x0000, "smallest float subnormal rounds to +0"},
    {0x80000001u, 0x8000, "and its negative to -0"},
    {0x00010000u, 0x0001, "smallest bf16 subnormal 2^-133"},
    {0x00008000u, 0x0000, "2^-134: tie between 0 and 2^-133, to even (0)"},
    {0x00008001u, 0x0001, "just above that tie"},
    {0x00018000u, 0x0002, "1.5 * 2^-133: tie, up to even"},
    {0x807f0000u, 0x807f, "negative subnormal, not flushed"},
    {0x007fffffu, 0x0080, "largest float subnormal rounds up to the smallest normal"},
    {0x7fc00000u, 0x7fc0, "quiet NaN"},
    {0xffc00000u, 0xffc0, "negative quiet NaN keeps its sign"},
    {0x7f800001u, 0x7fc0, "sNaN with a low payload: stays NaN (not Inf), quieted"},
    {0x7f80ffffu, 0x7fc0, "sNaN whose payload is all below bit 16"},
    {0xff800001u, 0xffc0, "negative sNaN"},
    {0x7fa00000u, 0x7fe0, "sNaN payload bit 21 kept, quiet bit set"},
    {0x7fffffffu, 0x7fff, "NaN with all payload bits: no carry into the sign"},
    {0xffbf0000u, 0xffff, "negative sNaN, payload 0x3f"},
};

// fp16: 10 mantissa bits, exponent bias 15, largest finite 65504, subnormal unit 2^-24.
const narrow_case fp16_cases[] = {
    {0x3f800000u, 0x3c00, "1"},
    {0x3f801000u, 0x3c00, "1 + 2^-11: tie, down to even"},
    {0x3f803000u, 0x3c02, "1 + 3*2^-11: tie, up to even"},
    {0x3f801001u, 0x3c01, "just above a tie"},
    {0x477fe000u, 0x7bff, "65504, the largest finite fp16"},
    {0x477fefffu, 0x7bff, "65519.996 (the float just below 65520): still 65504"},
    {0x477ff000u, 0x7c00, "65520: tie between 65504 and 2^16, to even is Inf"},
    {0x47800000u, 0x7c00, "65536 overflows"},
    {0x7f7fffffu, 0x7c00, "FLT_MAX overflows"},
    {0xc77ff000u, 0xfc00, "-65520 gives -Inf"},
    {0xc77fefffu, 0xfbff, "-65519.996 gives -65504"},
    {0x7f800000u, 0x7c00, "+Inf"},
    {0xff800000u, 0xfc00, "-Inf"},
    {0x00000000u, 0x0000, "+0"},
    {0x80000000u, 0x8000, "-0 keeps its sign"},
    {0x00000001u, 0x0000, "float subnormal rounds to 0"},
    {0x80000001u, 0x8000, "negative float subnormal rounds to -0"},
    {0x33800000u, 0x0001, "2^-24, the smallest fp16 subnormal"},
    {0x33000000u, 0x0000, "2^-25: tie between 0 and 2^-24, to even (0)"},
    {0x33000001u, 0x0001, "just above 2^-25"},
    {0xb3000001u, 0x8001, "negative, just above 2^-25"},
    {0x32ffffffu, 0x0000, "just below 2^-25"},
    {0x33c00000u, 0x0002, "1.5 * 2^-24: tie, up to even"},
    {0x34200000u, 0x0002, "2.5 * 2^-24: tie, down to even"},
    {0x387fc000u, 0x03ff, "1023 * 2^-24, the largest subnormal"},
    {0x387fe000u, 0x0400, "1023.5 * 2^-24: tie, up to the smallest normal"},
    {0x38800000u, 0x0400, "2^-14, the smallest normal"},
    {0x38801000u, 0x0400, "2^-14 (1 + 2^-11): tie, down to even"},
    {0x7fc00000u, 0x7e00, "quiet NaN"},
    {0xffc00000u, 0xfe00, "negative quiet NaN keeps its sign"},
    {0x7f800001u, 0x7e00, "sNaN with a low payload: stays NaN (not Inf), quieted"},
    {0xff800001u, 0xfe00, "negative sNaN"},
    {0x7fa00000u, 0x7f00, "sNaN payload bit 21 kept, quiet bit set"},
    {0x7f802000u, 0x7e01, "payload bit 13 is the lowest one kept"},
    {0x7fffffffu, 0x7fff, "NaN with all payload bits"},
};

template <class T>
void check_narrow_cases(const narrow_case* cases, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    const float f = normkit::detail::bits_float(cases[k].in);
    EXPECT_EQ(T(f).bits, cases[k].want)
        << type_name<T>() << " from 0x" << std::hex << cases[k].in << ": " << cases[k].why;
    EXPECT_EQ(normkit::from_float<T>(f).bits, cases[k].want) << "from_float: " << cases[k].why;
  }
}

TEST(Types, Bf16NarrowingHandPickedCases) {
  check_narrow_cases<bf16>(bf16_cases, sizeof bf16_cases / sizeof bf16_cases[0]);
}
TEST(Types, Fp16NarrowingHandPickedCases) {
  check_narrow_cases<fp16>(fp16_cases, sizeof fp16_cases / sizeof fp16_cases[0]);
}

// Every midpoint between adjacent finite values (and the one above the largest finite value) is a
// float; RNE sends it to the neighbour with the even mantissa and sends the floats just below /
// above it to the lower / upper neighbour. Covers every binade, the subnormals and overflow.
template <class T>
void check_all_midpoints(int man_bits) {
  const int exp_bits = 15 - man_bits;
  const std::uint32_t inf_bits = ((1u << exp_bits) - 1u) << man_bits;
  std::size_t failures = 0;
  for (std::uint32_t h = 0; h < inf_bits; ++h) {
    const double lo = decode(h, exp_bits, man_bits).value;
    // h + 1 is the next value up; for the largest finite h it is Inf, whose "value" for RNE is
    // the next power of two (IEEE 754 overflow rule).
    const double hi =
        h + 1 < inf_bits ? decode(h + 1, exp_bits, man_bits).value : std::ldexp(1.0, (1 << (exp_bits - 1)));
    const double mid = 0.5 * (lo + hi);
    const float fm = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(fm), mid) << "midpoint not a float";
    const std::uint32_t even = (h & 1u) ? h + 1 : h;
    for (float sign : {1.0f, -1.0f}) {
      const std::uint32_t s = sign < 0 ? 0x8000u : 0u;
      const float m = sign * fm;
      const float below = std::nextafter(m, 0.0f);
      const float above = std::nextafter(m, sign * std::numeric_limits<float>::infinity());
      const bool ok = T(m).bits == (even | s) && T(below).bits == (h | s) && T(above).bits == ((h + 1) | s);
      if (!ok && ++failures <= 10)
        ADD_FAILURE() << type_name<T>() << " midpoint above 0x" << std::hex << (h | s) << ": got 0x"
                      << T(m).bits << " / 0x" << T(below).bits << " / 0x" << T(above).bits;
    }
  }
  EXPECT_EQ(failures, 0u);
}

TEST(Types, Bf16NarrowingRoundsEveryMidpointToEven) {
  check_all_midpoints<bf16>(7);
}
TEST(Types, Fp16NarrowingRoundsEveryMidpointToEven) {
  check_all_midpoints<fp16>(10);
}

// Narrowing a widened value gives the pattern back (finite, Inf); a NaN comes back quieted with
// its sign and payload.
template <class T>
void check_round_trip(std::uint16_t quiet_bit) {
  for (std::uint32_t h = 0; h <= 0xffffu; ++h) {
    const T v = T::from_bits(static_cast<std::uint16_t>(h));
    const float f = static_cast<float>(v);
    const std::uint16_t want =
        std::isnan(f) ? static_cast<std::uint16_t>(h | quiet_bit) : static_cast<std::uint16_t>(h);
    ASSERT_EQ(T(f).bits, want) << type_name<T>() << " pattern 0x" << std::hex << h;
  }
}

TEST(Types, Bf16RoundTripKeepsEveryPattern) {
  check_round_trip<bf16>(0x0040);
}
TEST(Types, Fp16RoundTripKeepsEveryPattern) {
  check_round_trip<fp16>(0x0200);
}

// ---- Layout: plain 2-byte values, interchangeable with torch / Eigen 16-bit storage. ----

template <class T>
void check_layout() {
  static_assert(sizeof(T) == 2 && alignof(T) == 2, "2 bytes, 2-byte aligned");
  static_assert(std::is_trivially_copyable<T>::value, "memcpy-able");
  static_assert(std::is_trivially_default_constructible<T>::value, "uninitialized like float");
  static_assert(std::is_standard_layout<T>::value, "C layout");
  static_assert(sizeof(T[7]) == 14, "arrays are dense");
  static_assert(!std::is_convertible<float, T>::value, "float -> T must be explicit (it rounds)");
  static_assert(!std::is_convertible<T, float>::value, "T -> float is explicit");
  // Layout compatible with a uint16_t buffer (torch.bfloat16 / Eigen::half store one): the bytes
  // of an array are the patterns, in order, native endianness.
  const std::uint16_t raw[4] = {0x3f80, 0x8000, 0x7fc0, 0x0001};
  T arr[4];
  std::memcpy(arr, raw, sizeof raw);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(arr[i].bits, raw[i]);
  std::uint16_t back[4];
  std::memcpy(back, arr, sizeof arr);
  EXPECT_EQ(std::memcmp(back, raw, sizeof raw), 0);
  constexpr T c = T::from_bits(0x1234);  // usable in constant expressions
  static_assert(c.bits == 0x1234, "from_bits is constexpr");
}

TEST(Types, Bf16IsAPlainTwoByteValue) {
  check_layout<bf16>();
}
TEST(Types, Fp16IsAPlainTwoByteValue) {
  check_layout<fp16>();
}

TEST(Types, StorageTypeTrait) {
  static_assert(normkit::is_storage_type<float>::value && normkit::is_storage_type<bf16>::value &&
                    normkit::is_storage_type<fp16>::value,
                "the three storage types");
  static_assert(!normkit::is_storage_type<double>::value && !normkit::is_storage_type<std::uint16_t>::value,
                "nothing else");
  SUCCEED();
}

// ---- normkit::convert on every ISA: the bits of the scalar conversions, at any length/offset. ----

class Convert : public ::testing::TestWithParam<isa> {};

// Floats that exercise the narrowing: random patterns (NaN, Inf, subnormal, huge included),
// bf16 and fp16 ties and their neighbours (random high bits), fp16 subnormal ties, specials.
std::vector<float> float_sources() {
  rng r(0x7e57);
  std::vector<std::uint32_t> u;
  for (int k = 0; k < (1 << 18); ++k)
    u.push_back(r.u32());
  for (int k = 0; k < (1 << 15); ++k) {
    const std::uint32_t hi = r.u32();
    for (std::uint32_t low : {0x8000u, 0x7fffu, 0x8001u})
      u.push_back((hi & 0xffff0000u) | low);
    for (std::uint32_t low : {0x1000u, 0x0fffu, 0x1001u})
      u.push_back((hi & 0xffffe000u) | low);
  }
  for (std::uint32_t k = 0; k < 2048; ++k) {  // (2k + 1) * 2^-25: fp16 subnormal and low-normal ties
    const float t = std::ldexp(static_cast<float>(2 * k + 1), -25);
    for (float v : {t, -t, std::nextafter(t, 0.0f), std::nextafter(t, 1.0f)})
      u.push_back(bits(v));
  }
  for (const auto& c : bf16_cases)
    u.push_back(c.in);
  for (const auto& c : fp16_cases)
    u.push_back(c.in);
  std::vector<float> f(u.size());
  for (std::size_t i = 0; i < u.size(); ++i)
    f[i] = normkit::detail::bits_float(u[i]);
  return f;
}

template <class T>
std::vector<T> all_16bit_patterns() {
  std::vector<T> v(65536);
  for (std::uint32_t h = 0; h < 65536; ++h)
    v[h] = T::from_bits(static_cast<std::uint16_t>(h));
  return v;
}

template <class T>
std::vector<T> sources() {
  if constexpr (std::is_same<T, float>::value)
    return float_sources();
  else
    return all_16bit_patterns<T>();
}

// Expected: the scalar conversion dst = Dst(float(src)) of types.hpp (itself checked above).
template <class Src, class Dst>
void check_convert(isa i) {
  const std::vector<Src> src = sources<Src>();
  std::vector<Dst> want(src.size());
  for (std::size_t k = 0; k < src.size(); ++k)
    want[k] = normkit::from_float<Dst>(normkit::to_float(src[k]));
  const std::string what =
      std::string(normkit::to_string(i)) + " convert " + type_name<Src>() + "->" + type_name<Dst>();

  constexpr std::size_t guard = 32;  // poisoned elements before and after the destination range
  std::vector<Dst> buf(src.size() + 2 * guard + 16);
  // Poisons / checks [0, end + guard): the destination range and the guards around it.
  const auto poison = [&](std::size_t end) {
    std::memset(static_cast<void*>(buf.data()), 0xa5, (end + guard) * sizeof(Dst));
  };
  const auto untouched = [&](std::size_t begin, std::size_t end) {
    const std::vector<unsigned char> p(sizeof(Dst), 0xa5);
    for (std::size_t k = 0; k < end + guard; ++k)
      if ((k < begin || k >= end) && std::memcmp(&buf[k], p.data(), sizeof(Dst)) != 0)
        return false;
    return true;
  };

  // Offsets (in elements) move the vectors off their natural alignment; lengths exercise every
  // tail length of 8- and 16-lane loops.
  const std::size_t offsets[][2] = {{0, 0}, {1, 0}, {0, 1}, {3, 5}, {7, 7}, {13, 2}};
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 70; ++n)
    lengths.push_back(n);
  for (std::size_t n : {127u, 128u, 129u, 255u, 256u, 257u, 1000u})
    lengths.push_back(n);
  for (const auto& off : offsets) {
    lengths.push_back(src.size() - off[0]);
    for (std::size_t n : lengths) {
      if (n + off[0] > src.size())
        continue;
      // Start the short runs at varying places so that many patterns go through the tails.
      const std::size_t s0 = n < src.size() / 2 ? (off[0] + 977 * n) % (src.size() - n) : off[0];
      poison(guard + off[1] + n);
      Dst* dst = buf.data() + guard + off[1];
      ASSERT_EQ(normkit::convert(src.data() + s0, dst, n), normkit::status::ok) << what;
      ASSERT_TRUE(same_bits(dst, want.data() + s0, n,
                            what + " n=" + std::to_string(n) + " src_off=" + std::to_string(s0) +
                                " dst_off=" + std::to_string(off[1])));
      ASSERT_TRUE(untouched(guard + off[1], guard + off[1] + n)) << what << " wrote outside [0, " << n << ")";
    }
    lengths.pop_back();
  }
}

TEST_P(Convert, AllNinePairsMatchScalarConversion) {
  NORMKIT_USE_ISA(GetParam());
  const isa i = GetParam();
  check_convert<float, float>(i);
  check_convert<float, bf16>(i);
  check_convert<float, fp16>(i);
  check_convert<bf16, float>(i);
  check_convert<bf16, bf16>(i);
  check_convert<bf16, fp16>(i);
  check_convert<fp16, float>(i);
  check_convert<fp16, bf16>(i);
  check_convert<fp16, fp16>(i);
}

// The composition is what the docs say (dst = Dst(float(src))), including NaNs: a signalling
// bf16 NaN comes out quiet, a float sNaN passes float -> float untouched.
TEST_P(Convert, NanHandlingFollowsTheScalarComposition) {
  NORMKIT_USE_ISA(GetParam());
  const float f_snan = normkit::detail::bits_float(0xff812345u);
  std::vector<float> ff(33, f_snan), fo(33);
  ASSERT_EQ(normkit::convert(ff.data(), fo.data(), ff.size()), normkit::status::ok);
  for (float v : fo)
    ASSERT_EQ(bits(v), 0xff812345u);
  std::vector<bf16> b(33, bf16::from_bits(0x7f81)), bo(33);
  ASSERT_EQ(normkit::convert(b.data(), bo.data(), b.size()), normkit::status::ok);
  for (bf16 v : bo)
    ASSERT_EQ(v.bits, 0x7fc1);
  std::vector<fp16> h(33, fp16::from_bits(0xfc01)), ho(33);
  ASSERT_EQ(normkit::convert(h.data(), ho.data(), h.size()), normkit::status::ok);
  for (fp16 v : ho)
    ASSERT_EQ(v.bits, 0xfe01);
  std::vector<float> hf(33);
  ASSERT_EQ(normkit::convert(h.data(), hf.data(), h.size()), normkit::status::ok);
  for (float v : hf)
    ASSERT_EQ(bits(v), 0xffc02000u);
}

INSTANTIATE_TEST_SUITE_P(Isa, Convert, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
