// SPDX-License-Identifier: MIT
// The FP environment: normkit never changes it, and its bit-parity contract assumes IEEE mode
// (docs/fp-environment.md). These tests pin down what a flush-to-zero environment (x86 MXCSR.FTZ + DAZ, as
// set by -ffast-math start-up code or by a host framework; AArch64 FPCR.FZ) does, measured on
// every ISA path:
//   - rows without subnormal inputs, gains, biases or results: the same bits as in IEEE mode;
//   - subnormal float/bf16 inputs, gains and biases read as zeros of the same sign (DAZ), and
//     float/bf16 results below 2^-126 are written as zeros of the same sign (FTZ); fp16 values
//     are unaffected (fp16 subnormals are normal floats);
//   - rows whose squares overflow and whose largest |x| is >= 2^126 become canonical NaN rows:
//     the overflow path's scale 2^-e is then a subnormal float (e >= 127), which DAZ reads as 0;
//   - every ISA path still gives the same bits as every other (the same IEEE operations, the
//     same flushes).
// Rounding modes (FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO): the contract's bits are those of the
// default mode, and the reference's own bits change with the mode; every path still returns
// the reference's bits of the same mode, signed zeros included. Exception flags: which ones a
// call raises, per path, and that an invalid eps is rejected without raising FE_INVALID (no
// SIGFPE with the trap enabled).
// Each test restores the environment it changed (flush_to_zero_scope, rounding_scope,
// trap_scope).
#include <cfenv>        // std::fesetround, std::fegetround, std::feclearexcept, std::fetestexcept
#include <cmath>        // std::ldexp, std::fabs, std::isfinite
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int8_t, std::uint32_t, std::uint64_t
#include <cstdio>       // std::printf
#include <functional>   // std::function
#include <limits>       // std::numeric_limits
#include <memory>       // std::unique_ptr
#include <string>       // std::string
#include <type_traits>  // std::is_same
#include <utility>      // std::pair
#include <vector>       // std::vector

#include <fenv.h>  // feenableexcept, fedisableexcept (glibc)

#include "fp_control.hpp"
#include "support.hpp"

namespace {

using namespace normkit_test;
using normkit::isa;
using normkit::status;

#define NORMKIT_NEED_FTZ() \
  if (!have_flush_to_zero) \
  GTEST_SKIP() << "no flush-to-zero control on this architecture"

class FpEnv : public ::testing::TestWithParam<isa> {};

float f32(std::uint32_t u) {
  return normkit::detail::bits_float(u);
}

template <class T>
struct tag {
  using type = T;
};

// One call of either op, so a test can run it once in IEEE mode and once flushed.
template <class Policy, class In, class W, class Out>
void run(bool layer, const std::vector<In>& x, const std::vector<W>& g, const std::vector<W>& b,
         std::vector<Out>& y, std::size_t rows, std::size_t cols, float eps) {
  y.assign(rows * cols, Out{});
  const status s = layer
                       ? normkit::layer_norm<Policy>(x.data(), g.data(), b.data(), y.data(), rows, cols, eps)
                       : normkit::rms_norm<Policy>(x.data(), g.data(), y.data(), rows, cols, eps);
  ASSERT_EQ(s, status::ok);
}

TEST(FpEnvScope, IeeeAtStartFlushInsideRestoredAfter) {
  NORMKIT_NEED_FTZ();
  const std::uint64_t start = fp_control();
  EXPECT_EQ(start & flush_bits, 0u) << "the test binary starts in IEEE mode (no -ffast-math start-up code)";
  {
    flush_to_zero_scope ftz;
    EXPECT_EQ(fp_control() & flush_bits, flush_bits);
    const volatile float tiny = 0x1p-140f;
    EXPECT_EQ(tiny * 1.0f, 0.0f) << "DAZ/FZ is in effect inside the scope";
  }
  EXPECT_EQ(fp_control(), start);
  const volatile float tiny = 0x1p-140f;
  EXPECT_NE(tiny * 1.0f, 0.0f) << "IEEE subnormals again after the scope";
}

// No entry point changes a control bit, in IEEE mode or flushed, on any path (including the
// overflow and NaN-row paths and the conversions).
TEST_P(FpEnv, KernelsNeverChangeTheEnvironment) {
  NORMKIT_USE_ISA(GetParam());
  std::vector<float> x = {3e38f, -1e30f, 1.0f, 0x1p-140f, 2.0f, 5.0f, 7.0f, 1e-3f, 1.0f};
  std::vector<float> nan_row = x;
  nan_row[4] = f32(0x7fc00000u);
  std::vector<bf16> yb(x.size());
  std::vector<fp16> yh(x.size());
  for (int flushed = 0; flushed < 2; ++flushed) {
    std::uint64_t before = fp_control();
    std::unique_ptr<flush_to_zero_scope> scope;
    if (flushed)
      scope.reset(new flush_to_zero_scope), before = fp_control();
    for (const auto* row : {&x, &nan_row}) {
      ASSERT_EQ(normkit::rms_norm<normkit::llama>(row->data(), row->data(), yb.data(), 1, x.size(), 1e-6f),
                status::ok);
      EXPECT_EQ(fp_control(), before) << "rms_norm, flushed=" << flushed;
      ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(row->data(), nullptr, row->data(), yh.data(), 1,
                                                      x.size(), 0.0f),
                status::ok);
      EXPECT_EQ(fp_control(), before) << "layer_norm, flushed=" << flushed;
      ASSERT_EQ(normkit::convert(row->data(), yh.data(), x.size()), status::ok);
      EXPECT_EQ(fp_control(), before) << "convert, flushed=" << flushed;
    }
  }
}

// Rows with no subnormal anywhere (inputs, gains, results) -- ordinary, shifted-mean, huge (max
// |x| < 2^126, the overflow path with a normal scale), NaN and Inf rows: flushed gives the IEEE
// bits, for every policy and storage type tried.
TEST_P(FpEnv, OrdinaryRowsIdenticalUnderFlushToZero) {
  NORMKIT_USE_ISA(GetParam());
  NORMKIT_NEED_FTZ();
  const std::size_t rows = 6, cols = 131;
  auto corpus = [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    rng r(42);
    std::vector<In> x(rows * cols);
    for (std::size_t i = 0; i < cols; ++i) {
      x[i] = as<In>(r.normal());
      x[cols + i] = as<In>(1000.0f + 0.01f * r.normal());
      x[2 * cols + i] = as<In>(1e-3f * r.normal());
      x[3 * cols + i] = as<In>(r.normal());
      x[4 * cols + i] = as<In>(r.normal());
      // huge row: |x| in [1e20, 5e37]: squares overflow, max < 2^126 (fp16 saturates to Inf: a NaN row)
      x[5 * cols + i] = as<In>((r.u32() & 1 ? 1.0f : -1.0f) * r.uniform(1e20f, 5e37f));
    }
    x[3 * cols + 17] = as<In>(f32(0x7fc00000u));   // NaN row
    x[4 * cols + 130] = as<In>(f32(0xff800000u));  // -Inf row
    return x;
  };
  auto check = [&](auto policy_tag, auto in_tag, auto w_tag, auto out_tag) {
    using Policy = typename decltype(policy_tag)::type;
    using In = typename decltype(in_tag)::type;
    using W = typename decltype(w_tag)::type;
    using Out = typename decltype(out_tag)::type;
    const auto x = corpus(in_tag);
    rng r(7);
    const auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f), b = uniform_vec<W>(r, cols, -1.0f, 1.0f);
    for (int layer = 0; layer < 2; ++layer) {
      std::vector<Out> ieee, flushed;
      run<Policy>(layer, x, g, b, ieee, rows, cols, 1e-5f);
      {
        flush_to_zero_scope ftz;
        run<Policy>(layer, x, g, b, flushed, rows, cols, 1e-5f);
      }
      EXPECT_SAME_BITS(flushed, ieee,
                       std::string(layer ? "layer " : "rms ") + type_name<In>() + "/" + type_name<W>() + "/" +
                           type_name<Out>() + " " + normkit::to_string(GetParam()));
    }
  };
  check(tag<normkit::pytorch>{}, tag<float>{}, tag<float>{}, tag<float>{});
  check(tag<normkit::llama>{}, tag<bf16>{}, tag<bf16>{}, tag<bf16>{});
  check(tag<normkit::gemma>{}, tag<bf16>{}, tag<float>{}, tag<fp16>{});
  check(tag<normkit::t5>{}, tag<fp16>{}, tag<bf16>{}, tag<float>{});
  check(tag<normkit::gemma3n>{}, tag<float>{}, tag<fp16>{}, tag<bf16>{});
}

// Subnormal float/bf16 inputs, gains and biases act as zeros of the same sign: the flushed
// result equals the IEEE result of the same call with those values replaced by +-0. fp16
// subnormals (normal as floats) change nothing.
TEST_P(FpEnv, SubnormalInputsReadAsSignedZeros) {
  NORMKIT_USE_ISA(GetParam());
  NORMKIT_NEED_FTZ();
  const std::size_t cols = 70;
  auto zeroed = [](std::vector<float> v) {
    for (float& e : v)
      if (e != 0.0f && std::fabs(e) < 0x1p-126f)
        e = e < 0.0f ? -0.0f : 0.0f;
    return v;
  };
  rng r(3);
  std::vector<float> x = normal_vec<float>(r, cols), g = uniform_vec<float>(r, cols, 0.5f, 1.5f),
                     b = uniform_vec<float>(r, cols, -1.0f, 1.0f);
  for (std::size_t i : {0u, 5u, 33u, 64u, 69u})
    x[i] = (i % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f, -127 - static_cast<int>(i % 20));
  g[7] = 0x1p-130f, g[65] = -0x1p-149f, b[8] = 0x1p-140f, b[66] = f32(0x807fffffu);
  const auto xz = zeroed(x), gz = zeroed(g), bz = zeroed(b);
  for (int layer = 0; layer < 2; ++layer) {
    std::vector<float> want, got;
    run<normkit::pytorch>(layer, xz, gz, bz, want, 1, cols, 1e-6f);
    {
      flush_to_zero_scope ftz;
      run<normkit::pytorch>(layer, x, g, b, got, 1, cols, 1e-6f);
    }
    EXPECT_SAME_BITS(got, want, layer ? "layer, f32 subnormals" : "rms, f32 subnormals");
    // bf16: the same values exist as bf16 subnormals (0x0001 = 2^-133 ... 0x007f).
    std::vector<bf16> xb(cols), xbz(cols);
    for (std::size_t i = 0; i < cols; ++i)
      xb[i] = as<bf16>(x[i]), xbz[i] = as<bf16>(xz[i]);
    xb[9] = bf16::from_bits(0x0001), xbz[9] = bf16::from_bits(0x0000);
    xb[10] = bf16::from_bits(0x807f), xbz[10] = bf16::from_bits(0x8000);
    std::vector<bf16> want_b, got_b;
    run<normkit::llama>(layer, xbz, gz, bz, want_b, 1, cols, 1e-6f);
    {
      flush_to_zero_scope ftz;
      run<normkit::llama>(layer, xb, g, b, got_b, 1, cols, 1e-6f);
    }
    EXPECT_SAME_BITS(got_b, want_b, layer ? "layer, bf16 subnormals" : "rms, bf16 subnormals");
    // fp16 subnormal inputs (2^-24 .. 2^-15) are normal floats: IEEE bits unchanged.
    std::vector<fp16> xh(cols);
    for (std::size_t i = 0; i < cols; ++i)
      xh[i] = fp16::from_bits(static_cast<std::uint16_t>(1 + 13 * i % 0x3ff));
    std::vector<fp16> ieee_h, got_h;
    const std::vector<float> ones(cols, 1.0f), zeros(cols, 0.0f);
    run<normkit::pytorch>(layer, xh, ones, zeros, ieee_h, 1, cols, 0.0f);
    {
      flush_to_zero_scope ftz;
      run<normkit::pytorch>(layer, xh, ones, zeros, got_h, 1, cols, 0.0f);
    }
    EXPECT_SAME_BITS(got_h, ieee_h, layer ? "layer, fp16 subnormals" : "rms, fp16 subnormals");
  }
}

// Results below 2^-126 are flushed to zeros of the same sign for float and bf16 outputs; fp16
// outputs keep their subnormals. x = ones, eps = 3: n = 1 / sqrt(1 + 3) = 0.5 exactly.
TEST_P(FpEnv, SubnormalResultsFlushToSignedZero) {
  NORMKIT_USE_ISA(GetParam());
  NORMKIT_NEED_FTZ();
  const std::vector<float> ones(4, 1.0f), zeros(4, 0.0f);
  const std::vector<float> g = {0x1p-126f, -0x1p-126f, 0x1p-20f, 1.0f};  // normal gains
  std::vector<float> yf;
  std::vector<bf16> yb;
  std::vector<fp16> yh;
  run<normkit::pytorch>(false, ones, g, zeros, yf, 1, 4, 3.0f);
  run<normkit::pytorch>(false, ones, g, zeros, yb, 1, 4, 3.0f);
  EXPECT_EQ(bits(yf[0]), 0x00400000u) << "IEEE: 2^-127 is a subnormal float";
  EXPECT_EQ(bits(yb[1]), 0x8040u) << "IEEE: -2^-127 is a subnormal bf16";
  flush_to_zero_scope ftz;
  run<normkit::pytorch>(false, ones, g, zeros, yf, 1, 4, 3.0f);
  run<normkit::pytorch>(false, ones, g, zeros, yb, 1, 4, 3.0f);
  run<normkit::pytorch>(false, ones, g, zeros, yh, 1, 4, 3.0f);
  EXPECT_EQ(bits(yf[0]), 0x00000000u);
  EXPECT_EQ(bits(yf[1]), 0x80000000u);
  EXPECT_EQ(bits(yf[3]), bits(0.5f));
  EXPECT_EQ(bits(yb[0]), 0x0000u);
  EXPECT_EQ(bits(yb[1]), 0x8000u);
  EXPECT_EQ(bits(yh[2]), 0x0008u) << "fp16 subnormal 2^-21 = 8 * 2^-24 is kept";
}

// Rows whose squares overflow and whose largest |x| is >= 2^126: the overflow path scales by
// 2^-e with e = 127 or 128, a subnormal float that DAZ/FZ reads as 0, so the row becomes the
// canonical NaN row (IEEE mode normalizes it). Measured on every path; see CATALOGUE.md. If the
// library ever applies the scale as two normal factors, these rows become identical instead.
TEST_P(FpEnv, HugeOverflowRowsBecomeNanUnderFlushToZero) {
  NORMKIT_USE_ISA(GetParam());
  NORMKIT_NEED_FTZ();
  for (float big : {0x1p126f, 9e37f, 3e38f, f32(0x7f7fffffu)}) {
    const std::vector<float> x = {big, -0.5f * big, 1.0f, 2e20f};
    std::vector<float> y(4);
    ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), nullptr, y.data(), 1, 4, 1e-6f), status::ok);
    for (float v : y)
      ASSERT_TRUE(std::isfinite(v)) << "IEEE: the overflow path normalizes max " << big;
    flush_to_zero_scope ftz;
    for (int layer = 0; layer < 2; ++layer) {
      ASSERT_EQ(layer
                    ? normkit::layer_norm<normkit::pytorch>(x.data(), nullptr, nullptr, y.data(), 1, 4, 1e-6f)
                    : normkit::rms_norm<normkit::pytorch>(x.data(), nullptr, y.data(), 1, 4, 1e-6f),
                status::ok);
      for (float v : y)
        EXPECT_EQ(bits(v), 0x7fc00000u) << (layer ? "layer" : "rms") << " max " << big;
    }
  }
  // Just below 2^126 the scale is 2^-126, a normal float: identical to IEEE mode.
  const std::vector<float> x = {0x1.fffffep125f, -1e30f, 1.0f};
  std::vector<float> ieee(3), flushed(3);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), nullptr, ieee.data(), 1, 3, 1e-6f), status::ok);
  {
    flush_to_zero_scope ftz;
    ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), nullptr, flushed.data(), 1, 3, 1e-6f),
              status::ok);
  }
  EXPECT_SAME_BITS(flushed, ieee, "max just below 2^126");
}

// ---- Rounding modes.

// Sets the rounding mode for a scope; the previous one comes back on exit.
class rounding_scope {
 public:
  explicit rounding_scope(int mode) : saved_(std::fegetround()) { ok_ = std::fesetround(mode) == 0; }
  ~rounding_scope() { std::fesetround(saved_); }
  bool ok() const { return ok_; }
  rounding_scope(const rounding_scope&) = delete;
  rounding_scope& operator=(const rounding_scope&) = delete;

 private:
  int saved_;
  bool ok_ = false;
};

struct rounding_mode {
  int mode;
  const char* name;
};
const rounding_mode rounding_modes[] = {{FE_TONEAREST, "to-nearest"},
                                        {FE_DOWNWARD, "downward"},
                                        {FE_UPWARD, "upward"},
                                        {FE_TOWARDZERO, "toward-zero"}};

// Rows that reach every branch where a rounding mode could tell paths apart: exact zeros in
// RMSNorm (n * g = +0, the product the no-bias and general loops must not turn into -0), x_i ==
// x_0 in LayerNorm (d_i = +-0 by mode), a constant row (every c_i zero), a large mean, an
// overflow row with zeros (RMSNorm's general loop, scaled), NaN, an all-zero row (eps = 0: NaN
// rows), tiny values, and large products (fp16 outputs overflow).
constexpr std::size_t mode_rows = 9, mode_cols = 75;  // 75: full and partial chunks on every ISA

template <class In>
std::vector<In> mode_corpus() {
  rng r(11);
  std::vector<In> x(mode_rows * mode_cols);
  const float huge = std::is_same<In, fp16>::value ? 6e4f : 3e19f;
  for (std::size_t i = 0; i < mode_cols; ++i) {
    const float v = r.normal();
    x[i] = as<In>(i % 7 == 3 ? 0.0f : v);
    x[mode_cols + i] = as<In>(i % 11 == 5 ? 0.0f : v);  // x_0 below is 0: d_i = 0 - 0
    x[2 * mode_cols + i] = as<In>(2.5f);
    x[3 * mode_cols + i] = as<In>(1000.0f + 0.01f * v);
    x[4 * mode_cols + i] = as<In>(i % 5 == 0 ? 0.0f : huge * v);
    x[5 * mode_cols + i] = as<In>(i == 40 ? f32(0x7fc00000u) : v);
    x[6 * mode_cols + i] = as<In>(0.0f);
    x[7 * mode_cols + i] = as<In>(i % 3 == 0 ? 0.0f : std::ldexp(v, -30));
    x[8 * mode_cols + i] = as<In>(300.0f * v);
  }
  x[mode_cols] = as<In>(0.0f);
  for (std::size_t i = 0; i < mode_cols; i += 9)  // x_i == x_0 in the first row
    x[i] = x[0];
  return x;
}

// Gains with exact zeros, negatives, -1 (1 + gamma = +-0 for the gain offset) and large values
// (fp16 outputs overflow); bias with +0, -0 and negatives.
template <class W>
std::vector<W> mode_gains(bool with_inf) {
  rng r(5);
  std::vector<W> g(mode_cols);
  for (std::size_t i = 0; i < mode_cols; ++i) {
    float v = r.uniform(-2.0f, 2.0f);
    if (i % 6 == 1)
      v = 0.0f;
    if (i % 6 == 2)
      v = -1.0f;
    if (i % 13 == 4)
      v = 9000.0f;
    g[i] = as<W>(v);
  }
  if (with_inf)
    g[3] = as<W>(f32(0x7f800000u));  // not finite: every row takes the general loop
  return g;
}

template <class W>
std::vector<W> mode_bias() {
  rng r(6);
  std::vector<W> b(mode_cols);
  for (std::size_t i = 0; i < mode_cols; ++i)
    b[i] = as<W>(i % 4 == 0 ? 0.0f : i % 4 == 1 ? -0.0f : r.uniform(-1.0f, 1.0f));
  return b;
}

// For one policy and (In, W, Out): every gamma (null, finite, with an Inf) x beta (null, given) x
// eps (1e-5, 0) call, RMSNorm and LayerNorm, in each rounding mode, against the reference in
// the same mode.
template <class Policy, class In, class W, class Out>
void check_rounding_modes(isa i, const char* policy) {
  const auto x = mode_corpus<In>();
  const auto g = mode_gains<W>(false), g_inf = mode_gains<W>(true), b = mode_bias<W>();
  const std::size_t n = mode_rows * mode_cols;
  std::vector<Out> want(n), got(n);
  for (const rounding_mode& m : rounding_modes) {
    rounding_scope scope(m.mode);
    ASSERT_TRUE(scope.ok()) << m.name;
    for (const W* gamma : {static_cast<const W*>(nullptr), g.data(), g_inf.data()})
      for (float eps : {1e-5f, 0.0f}) {
        const std::string what = std::string(policy) + " " + type_name<In>() + "/" + type_name<W>() + "/" +
                                 type_name<Out>() + " " + m.name + " " + normkit::to_string(i) +
                                 (gamma ? (gamma == g.data() ? " gamma" : " gamma+inf") : " no gamma") +
                                 (eps == 0.0f ? " eps 0" : "");
        ASSERT_EQ(
            normkit::reference::rms_norm<Policy>(x.data(), gamma, want.data(), mode_rows, mode_cols, eps),
            status::ok);
        ASSERT_EQ(normkit::rms_norm<Policy>(x.data(), gamma, got.data(), mode_rows, mode_cols, eps),
                  status::ok);
        EXPECT_SAME_BITS(got, want, "rms " + what);
        if constexpr (Policy::layer_norm_exact) {
          for (const W* beta : {static_cast<const W*>(nullptr), b.data()}) {
            ASSERT_EQ(normkit::reference::layer_norm<Policy>(x.data(), gamma, beta, want.data(), mode_rows,
                                                             mode_cols, eps),
                      status::ok);
            ASSERT_EQ(
                normkit::layer_norm<Policy>(x.data(), gamma, beta, got.data(), mode_rows, mode_cols, eps),
                status::ok);
            EXPECT_SAME_BITS(got, want, std::string("layer ") + (beta ? "beta " : "no beta ") + what);
          }
        }
      }
  }
}

template <class Policy, class In, class W>
void check_rounding_modes_all_outputs(isa i, const char* policy) {
  check_rounding_modes<Policy, In, W, float>(i, policy);
  check_rounding_modes<Policy, In, W, bf16>(i, policy);
  check_rounding_modes<Policy, In, W, fp16>(i, policy);
}

// Every storage combination with the plain policy (round once, multiply); the other knobs
// (round twice through In or W, gain offset, divide) with fp16 and bf16 in the mix.
TEST_P(FpEnv, EveryRoundingModeGivesTheReferenceBitsOfThatMode) {
  NORMKIT_USE_ISA(GetParam());
  const isa i = GetParam();
  check_rounding_modes_all_outputs<normkit::pytorch, float, float>(i, "pytorch");
  check_rounding_modes_all_outputs<normkit::pytorch, float, bf16>(i, "pytorch");
  check_rounding_modes_all_outputs<normkit::pytorch, float, fp16>(i, "pytorch");
  check_rounding_modes_all_outputs<normkit::pytorch, bf16, float>(i, "pytorch");
  check_rounding_modes_all_outputs<normkit::pytorch, bf16, bf16>(i, "pytorch");
  check_rounding_modes_all_outputs<normkit::pytorch, bf16, fp16>(i, "pytorch");
  check_rounding_modes_all_outputs<normkit::pytorch, fp16, float>(i, "pytorch");
  check_rounding_modes_all_outputs<normkit::pytorch, fp16, bf16>(i, "pytorch");
  check_rounding_modes_all_outputs<normkit::pytorch, fp16, fp16>(i, "pytorch");
  check_rounding_modes<normkit::llama, fp16, fp16, fp16>(i, "llama");
  check_rounding_modes<normkit::llama, bf16, float, fp16>(i, "llama");
  check_rounding_modes<normkit::t5, float, fp16, float>(i, "t5");
  check_rounding_modes<normkit::gemma, bf16, bf16, bf16>(i, "gemma");
  check_rounding_modes<normkit::gemma, fp16, float, fp16>(i, "gemma");
  check_rounding_modes<normkit::gemma3n, float, float, fp16>(i, "gemma3n");
  check_rounding_modes<normkit::gemma3n, bf16, fp16, bf16>(i, "gemma3n");
}

// The zero-sign cases that once differed, with their expected bits: under FE_DOWNWARD a
// LayerNorm without bias gives n * (+0) = +0 for n > 0 (a fused multiply-add with a -0 bias
// gave -0), and RMSNorm's general loop (a gain not finite) gives x = +0 as +0 * inv = +0 (the
// LayerNorm formula with K = -0 gave -0) and n * (+0) = +0.
TEST_P(FpEnv, DownwardKeepsPositiveZeroProducts) {
  NORMKIT_USE_ISA(GetParam());
  rounding_scope scope(FE_DOWNWARD);
  ASSERT_TRUE(scope.ok());
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f, 0.0f, 6.0f, 7.0f};  // mean 23/7: c_5, c_6 > 0
  const std::vector<float> g = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f};
  std::vector<float> y(x.size());
  ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), nullptr, y.data(), 1, x.size(), 1e-5f),
            status::ok);
  EXPECT_EQ(bits(y[5]), 0x00000000u) << "layer, no bias: n > 0 times gain +0";
  EXPECT_EQ(bits(y[6]), 0x00000000u) << "layer, no bias: n > 0 times gain +0";
  std::vector<float> g_inf = g;
  g_inf[0] = f32(0x7f800000u);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), g_inf.data(), y.data(), 1, x.size(), 1e-5f),
            status::ok);
  EXPECT_EQ(bits(y[4]), 0x00000000u) << "rms, general loop: x = +0";
  EXPECT_EQ(bits(y[5]), 0x00000000u) << "rms, general loop: n > 0 times gain +0";
}

// The reference's own bits depend on the mode (the contract defines those of round to nearest
// even): an ordinary row rounds differently upward than to nearest.
TEST(FpEnvRounding, ReferenceBitsDependOnTheMode) {
  rng r(9);
  const auto x = normal_vec<float>(r, 64);
  std::vector<float> nearest(64), upward(64);
  ASSERT_EQ(normkit::reference::rms_norm<normkit::pytorch>(x.data(), static_cast<const float*>(nullptr),
                                                           nearest.data(), 1, 64, 1e-6f),
            status::ok);
  {
    rounding_scope scope(FE_UPWARD);
    ASSERT_TRUE(scope.ok());
    ASSERT_EQ(normkit::reference::rms_norm<normkit::pytorch>(x.data(), static_cast<const float*>(nullptr),
                                                             upward.data(), 1, 64, 1e-6f),
              status::ok);
  }
  std::size_t differ = 0;
  for (std::size_t i = 0; i < 64; ++i)
    differ += bits(nearest[i]) != bits(upward[i]);
  EXPECT_GT(differ, 0u) << "FE_UPWARD changes the reference's bits";
}

// ---- Exception flags.

constexpr int tracked_flags = FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INEXACT;

std::string flag_names(int f) {
  std::string s;
  for (auto [bit, name] : {std::pair<int, const char*>{FE_INVALID, "invalid"},
                           {FE_DIVBYZERO, "divbyzero"},
                           {FE_OVERFLOW, "overflow"},
                           {FE_UNDERFLOW, "underflow"},
                           {FE_INEXACT, "inexact"}})
    if (f & bit)
      s += (s.empty() ? "" : "|") + std::string(name);
  return s.empty() ? "none" : s;
}

// The flags one call raises, from a clean state.
template <class Call>
int flags_of(Call call) {
  std::feclearexcept(FE_ALL_EXCEPT);
  call();
  const int f = std::fetestexcept(tracked_flags);
  std::feclearexcept(FE_ALL_EXCEPT);
  return f;
}

// What each kind of call raises, on this path and in the reference (docs/fp-environment.md):
// ordinary rows only inexact; overflow-path rows overflow; an fp16 output that overflows
// overflow (F16C/fcvtn raise it; the reference's integer conversion raises it on purpose);
// eps = 0 with an all-zero row divide-by-zero and invalid (1 / sqrt(0), then 0 * Inf).
// Invalid, divide-by-zero and overflow must be the same on every path.
TEST_P(FpEnv, ExceptionFlagsMatchTheReference) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t cols = 75;
  rng r(8);
  const auto x = normal_vec<float>(r, cols), g = uniform_vec<float>(r, cols, 0.5f, 1.5f);
  const auto b = uniform_vec<float>(r, cols, -1.0f, 1.0f);
  std::vector<float> huge = x, zeros(cols, 0.0f), nan_row = x, big_gain(cols, 1e5f);
  for (float& v : huge)
    v *= 3e19f;
  nan_row[20] = f32(0x7fc00000u);
  // One +Inf gain / -Inf bias over a nonzero x: the reference's y is +-Inf, with no invalid
  // operation, so a path that checked the gains with float arithmetic (Inf - Inf) would differ.
  std::vector<float> inf_gain = g, inf_bias = b, nan_gain = g;
  inf_gain[30] = std::numeric_limits<float>::infinity();
  inf_bias[30] = -std::numeric_limits<float>::infinity();
  nan_gain[30] = f32(0x7fc00000u);
  ASSERT_NE(x[30], 0.0f);
  std::vector<float> yf(cols);
  std::vector<bf16> yb(cols);
  std::vector<fp16> yh(cols);
  const std::vector<bf16> xb = [&] {
    std::vector<bf16> v(cols);
    for (std::size_t i = 0; i < cols; ++i)
      v[i] = as<bf16>(x[i]);
    return v;
  }();
  struct flag_case {
    const char* name;
    int must;                        // flags this call raises on every path
    int must_not;                    // flags it raises on no path
    std::function<void(bool)> call;  // true: the reference
  };
  auto rms = [&](bool ref, const std::vector<float>& in, const float* gamma, auto& y, float eps) {
    const status s =
        ref ? normkit::reference::rms_norm<normkit::llama>(in.data(), gamma, y.data(), 1, cols, eps)
            : normkit::rms_norm<normkit::llama>(in.data(), gamma, y.data(), 1, cols, eps);
    EXPECT_EQ(s, status::ok);
  };
  auto layer = [&](bool ref, const std::vector<float>& in, const float* gamma, const float* beta, auto& y,
                   float eps) {
    const status s =
        ref ? normkit::reference::layer_norm<normkit::pytorch>(in.data(), gamma, beta, y.data(), 1, cols, eps)
            : normkit::layer_norm<normkit::pytorch>(in.data(), gamma, beta, y.data(), 1, cols, eps);
    EXPECT_EQ(s, status::ok);
  };
  auto quant = [&](bool ref, auto q) {
    const status s = ref ? normkit::reference::rms_norm_quant<normkit::llama>(
                               x.data(), g.data(), q.data(), 1, cols, 1e-6f, 1e30f, nullptr, cols, cols)
                         : normkit::rms_norm_quant<normkit::llama>(x.data(), g.data(), q.data(), 1, cols,
                                                                   1e-6f, 1e30f, nullptr);
    EXPECT_EQ(s, status::ok);
  };
  const int hard = FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW;
  const flag_case cases[] = {
      {"rms f32 ordinary", FE_INEXACT, hard | FE_UNDERFLOW,
       [&](bool ref) { rms(ref, x, g.data(), yf, 1e-6f); }},
      {"rms bf16 ordinary", FE_INEXACT, hard | FE_UNDERFLOW,
       [&](bool ref) {
         std::vector<bf16> y(cols);
         const status s =
             ref ? normkit::reference::rms_norm<normkit::llama>(xb.data(), xb.data(), y.data(), 1, cols,
                                                                1e-6f)
                 : normkit::rms_norm<normkit::llama>(xb.data(), xb.data(), y.data(), 1, cols, 1e-6f);
         EXPECT_EQ(s, status::ok);
       }},
      {"layer f32 ordinary", FE_INEXACT, hard | FE_UNDERFLOW,
       [&](bool ref) { layer(ref, x, g.data(), b.data(), yf, 1e-5f); }},
      {"layer f32 ordinary, no gamma, no beta", FE_INEXACT, hard | FE_UNDERFLOW,
       [&](bool ref) { layer(ref, x, nullptr, nullptr, yf, 1e-5f); }},
      {"rms overflow-path row", FE_OVERFLOW | FE_INEXACT, FE_INVALID | FE_DIVBYZERO,
       [&](bool ref) { rms(ref, huge, g.data(), yf, 1e-6f); }},
      {"layer overflow-path row", FE_OVERFLOW | FE_INEXACT, FE_INVALID | FE_DIVBYZERO,
       [&](bool ref) { layer(ref, huge, g.data(), b.data(), yf, 1e-5f); }},
      {"rms fp16 output overflow", FE_OVERFLOW | FE_INEXACT, FE_INVALID | FE_DIVBYZERO,
       [&](bool ref) { rms(ref, x, big_gain.data(), yh, 1e-6f); }},
      {"layer fp16 output overflow", FE_OVERFLOW | FE_INEXACT, FE_INVALID | FE_DIVBYZERO,
       [&](bool ref) { layer(ref, x, big_gain.data(), b.data(), yh, 1e-5f); }},
      {"rms eps 0, zero row", FE_DIVBYZERO | FE_INVALID, FE_OVERFLOW,
       [&](bool ref) { rms(ref, zeros, g.data(), yf, 0.0f); }},
      {"layer eps 0, zero row", FE_DIVBYZERO | FE_INVALID, FE_OVERFLOW,
       [&](bool ref) { layer(ref, zeros, g.data(), b.data(), yb, 0.0f); }},
      {"rms Inf gain", FE_INEXACT, hard, [&](bool ref) { rms(ref, x, inf_gain.data(), yf, 1e-6f); }},
      {"layer Inf gain", FE_INEXACT, hard,
       [&](bool ref) { layer(ref, x, inf_gain.data(), b.data(), yb, 1e-5f); }},
      {"layer -Inf bias", FE_INEXACT, hard,
       [&](bool ref) { layer(ref, x, g.data(), inf_bias.data(), yf, 1e-5f); }},
      {"rms NaN gain", 0, FE_DIVBYZERO | FE_OVERFLOW,
       [&](bool ref) { rms(ref, x, nan_gain.data(), yh, 1e-6f); }},
      {"rms NaN row", 0, FE_DIVBYZERO | FE_OVERFLOW,
       [&](bool ref) { rms(ref, nan_row, g.data(), yf, 1e-6f); }},
      {"layer NaN row", 0, FE_DIVBYZERO | FE_OVERFLOW,
       [&](bool ref) { layer(ref, nan_row, g.data(), b.data(), yh, 1e-5f); }},
      // v * scale near +-1e30: every output saturates, below -2^31 as well as above, where a
      // float -> int conversion would raise invalid (the int8 path's clamps).
      {"rms int8 static, saturating both ways", FE_INEXACT, hard,
       [&](bool ref) { quant(ref, std::vector<std::int8_t>(cols)); }},
      {"rms e4m3 static, saturating both ways", FE_INEXACT, hard,
       [&](bool ref) { quant(ref, std::vector<normkit::e4m3>(cols)); }},
  };
  for (const flag_case& c : cases) {
    const int got = flags_of([&] { c.call(false); });
    const int want = flags_of([&] { c.call(true); });
    std::printf("%-8s %-40s path: %-28s reference: %s\n", normkit::to_string(GetParam()), c.name,
                flag_names(got).c_str(), flag_names(want).c_str());
    EXPECT_EQ(got & c.must, c.must) << c.name << ": " << flag_names(got);
    EXPECT_EQ(got & c.must_not, 0) << c.name << ": " << flag_names(got);
    EXPECT_EQ(got & hard, want & hard)
        << c.name << ": path " << flag_names(got) << ", reference " << flag_names(want);
  }
}

// With the invalid, divide-by-zero and overflow traps enabled, an invalid eps (NaN, +-Inf,
// negative) returns an error status instead of raising SIGFPE: validate() tests eps on its bits.
// Without traps, the rejected call raises no flag at all.
TEST_P(FpEnv, InvalidEpsIsRejectedWithoutRaisingInvalid) {
  NORMKIT_USE_ISA(GetParam());
  const std::vector<float> x(8, 1.0f), g(8, 1.0f);
  std::vector<float> y(8);
  const float bad[] = {f32(0x7fc00000u), f32(0xffc00001u), f32(0x7f800001u),
                       f32(0x7f800000u), f32(0xff800000u), -1.0f,
                       -0x1p-149f};
  for (float eps : bad) {
    const int raised = flags_of([&] {
      EXPECT_NE(normkit::rms_norm<normkit::llama>(x.data(), g.data(), y.data(), 1, 8, eps), status::ok);
      EXPECT_NE(normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), g.data(), y.data(), 1, 8, eps),
                status::ok);
    });
    EXPECT_EQ(raised, 0) << "eps bits 0x" << std::hex << bits(eps) << ": " << flag_names(raised);
  }
  EXPECT_EQ(normkit::rms_norm<normkit::llama>(x.data(), g.data(), y.data(), 1, 8, -0.0f), status::ok)
      << "eps = -0 equals 0: allowed";
#if defined(__GLIBC__) && (defined(__x86_64__) || defined(__i386__))
  const int traps = FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW;
  ASSERT_NE(feenableexcept(traps), -1);
  for (float eps : bad) {
    const status s1 = normkit::rms_norm<normkit::llama>(x.data(), g.data(), y.data(), 1, 8, eps);
    const status s2 =
        normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), g.data(), y.data(), 1, 8, eps);
    EXPECT_NE(s1, status::ok);
    EXPECT_NE(s2, status::ok);
  }
  // An ordinary call under the same traps completes too (it raises only inexact).
  const status ok = normkit::rms_norm<normkit::llama>(x.data(), g.data(), y.data(), 1, 8, 1e-6f);
  fedisableexcept(traps);
  std::feclearexcept(FE_ALL_EXCEPT);
  EXPECT_EQ(ok, status::ok);
#endif
}

INSTANTIATE_TEST_SUITE_P(Isa, FpEnv, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
