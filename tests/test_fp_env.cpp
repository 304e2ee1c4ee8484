// The FP environment: normkit never changes it, and its bit-parity contract assumes IEEE mode
// (DESIGN.md). These tests pin down what a flush-to-zero environment (x86 MXCSR.FTZ + DAZ, as
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
// Each test restores the environment it changed (flush_to_zero_scope).
#include <cmath>    // std::ldexp, std::fabs, std::isfinite
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t, std::uint64_t
#include <memory>   // std::unique_ptr
#include <string>   // std::string
#include <vector>   // std::vector

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr
#endif

#include "support.hpp"

namespace {

using namespace normkit_test;
using normkit::isa;
using normkit::status;

// ---- The environment, per architecture.
#if defined(__x86_64__) || defined(__i386__)
constexpr bool have_flush_to_zero = true;
constexpr std::uint64_t flush_bits = 0x8040u;  // MXCSR.FTZ (bit 15) | MXCSR.DAZ (bit 6)
// The control bits only: bits 0-5 are sticky exception flags that any arithmetic may set.
std::uint64_t fp_control() {
  return _mm_getcsr() & ~std::uint64_t{0x3f};
}
void set_fp_control(std::uint64_t c) {
  _mm_setcsr(static_cast<unsigned>(c | (_mm_getcsr() & 0x3fu)));
}
#elif defined(__aarch64__)
constexpr bool have_flush_to_zero = true;
constexpr std::uint64_t flush_bits = std::uint64_t{1} << 24;  // FPCR.FZ
std::uint64_t fp_control() {
  std::uint64_t c;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(c));
  return c;
}
void set_fp_control(std::uint64_t c) {
  __asm__ __volatile__("msr fpcr, %0" : : "r"(c));
}
#else
constexpr bool have_flush_to_zero = false;
constexpr std::uint64_t flush_bits = 0;
std::uint64_t fp_control() {
  return 0;
}
void set_fp_control(std::uint64_t) {}
#endif

// Flush-to-zero for the scope of a block; the previous control word comes back on exit.
class flush_to_zero_scope {
 public:
  flush_to_zero_scope() : saved_(fp_control()) { set_fp_control(saved_ | flush_bits); }
  ~flush_to_zero_scope() { set_fp_control(saved_); }
  flush_to_zero_scope(const flush_to_zero_scope&) = delete;
  flush_to_zero_scope& operator=(const flush_to_zero_scope&) = delete;

 private:
  std::uint64_t saved_;
};

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

INSTANTIATE_TEST_SUITE_P(Isa, FpEnv, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
