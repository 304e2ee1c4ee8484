// SPDX-License-Identifier: MIT
// The bad-input catalogue: one test per case a model or a caller can throw at the API, each
// asserting the documented behaviour (docs/contract.md) on every ISA, with exact bits wherever the
// contract defines them. tests/fuzz/CATALOGUE.md lists the same cases next to PyTorch's.
// Expected values are derived by hand (exact arithmetic in the comments) or by the test's own
// IEEE arithmetic; the reference is used only where the claim is "the same bits as the
// reference" (row independence, alignment, strides, in place).
#include <sys/mman.h>  // mmap, mprotect, munmap
#include <unistd.h>    // sysconf

#include <cmath>    // std::sqrt, std::ldexp, std::fabs
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint16_t, std::uint32_t, std::uintptr_t, SIZE_MAX
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

#include "bad_inputs.hpp"
#include "support.hpp"

namespace {

using namespace normkit_test;
using normkit::isa;
using normkit::status;

class Catalogue : public ::testing::TestWithParam<isa> {};

template <class T>
struct tag {
  using type = T;
};

template <class F>
void for_each_type(F&& f) {
  f(tag<float>{});
  f(tag<bf16>{});
  f(tag<fp16>{});
}

float f32(std::uint32_t u) {
  return normkit::detail::bits_float(u);
}

template <class T>
T val(float f) {
  return normkit::from_float<T>(f);
}

// contract: NaN outputs are the canonical quiet NaN of Out.
template <class T>
std::uint32_t canonical_nan() {
  return std::is_same<T, float>::value ? 0x7fc00000u : std::is_same<T, bf16>::value ? 0x7fc0u : 0x7e00u;
}
template <class T>
std::uint32_t inf_bits(bool negative) {
  if (std::is_same<T, float>::value)
    return negative ? 0xff800000u : 0x7f800000u;
  if (std::is_same<T, bf16>::value)
    return negative ? 0xff80u : 0x7f80u;
  return negative ? 0xfc00u : 0x7c00u;
}

template <class T>
std::string where(const char* what, std::size_t i) {
  return std::string(what) + " " + type_name<T>() + " [" + std::to_string(i) + "] isa " +
         normkit::to_string(normkit::active_isa());
}

constexpr float eps = 1e-6f;
const float* const no_f32 = nullptr;  // a typed null gain/bias (the reference has no nullptr_t overloads)
const float inf = std::numeric_limits<float>::infinity();

// ---- Non-finite and degenerate rows.

// A NaN anywhere in a row makes that whole row the canonical NaN (whatever its sign and
// payload), and leaves the other rows bit-identical to the same rows normalized alone.
TEST_P(Catalogue, NanRow) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t rows = 3, cols = 67;  // a 64-block plus a partial vector tail
  for (std::uint32_t nan : {0x7fc00000u, 0xffc00123u, 0x7f800001u}) {
    for (std::size_t at : {std::size_t{0}, std::size_t{5}, std::size_t{64}, std::size_t{66}}) {
      for_each_type([&](auto o) {
        using Out = typename decltype(o)::type;
        rng r(at);
        auto x = normal_vec<float>(r, rows * cols);
        auto g = uniform_vec<float>(r, cols, 0.5f, 1.5f), b = uniform_vec<float>(r, cols, -1.0f, 1.0f);
        x[cols + at] = f32(nan);
        std::vector<Out> y(rows * cols), alone(cols);
        for (int layer = 0; layer < 2; ++layer) {
          const status s =
              layer ? normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), b.data(), y.data(), rows,
                                                            cols, eps)
                    : normkit::rms_norm<normkit::pytorch>(x.data(), g.data(), y.data(), rows, cols, eps);
          ASSERT_EQ(s, status::ok);
          for (std::size_t i = 0; i < cols; ++i)
            ASSERT_EQ(bits(y[cols + i]), canonical_nan<Out>()) << where<Out>("nan row", i);
          for (std::size_t row : {std::size_t{0}, std::size_t{2}}) {
            const float* xr = x.data() + row * cols;
            ASSERT_EQ(layer ? normkit::reference::layer_norm<normkit::pytorch>(xr, g.data(), b.data(),
                                                                               alone.data(), 1, cols, eps)
                            : normkit::reference::rms_norm<normkit::pytorch>(xr, g.data(), alone.data(), 1,
                                                                             cols, eps),
                      status::ok);
            ASSERT_TRUE(same_bits(y.data() + row * cols, alone.data(), cols, "neighbour of a nan row"));
          }
        }
      });
    }
  }
}

// +Inf or -Inf anywhere in a row: the whole row is the canonical NaN (never the overflow path).
TEST_P(Catalogue, InfRow) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t cols = 70;
  for (float v : {inf, -inf}) {
    for_each_type([&](auto t) {
      using T = typename decltype(t)::type;  // In = Out = T: Inf exists in every storage type
      rng r(7);
      auto x = normal_vec<T>(r, cols);
      x[69] = val<T>(v);
      std::vector<T> y(cols);
      for (int layer = 0; layer < 2; ++layer) {
        ASSERT_EQ(
            layer ? normkit::layer_norm<normkit::llama>(x.data(), nullptr, nullptr, y.data(), 1, cols, eps)
                  : normkit::rms_norm<normkit::llama>(x.data(), nullptr, y.data(), 1, cols, eps),
            status::ok);
        for (std::size_t i = 0; i < cols; ++i)
          ASSERT_EQ(bits(y[i]), canonical_nan<T>()) << where<T>("inf row", i);
      }
    });
  }
}

// All-zero row: eps > 0 gives n = 0 exactly, so y = 0 * g (sign of g) for RMSNorm and
// fma(0, g, b) = b for LayerNorm; eps = 0 gives 0 * (1/sqrt(0)) = 0 * Inf = NaN (as PyTorch).
TEST_P(Catalogue, AllZeroRow) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t cols = 33;
  for_each_type([&](auto o) {
    using Out = typename decltype(o)::type;
    const std::vector<bf16> x(cols, val<bf16>(0.0f));
    std::vector<float> g(cols), b(cols);
    for (std::size_t i = 0; i < cols; ++i) {
      g[i] = i % 2 ? -1.5f : 2.0f;
      b[i] = 0.25f * static_cast<float>(i) - 3.0f;
    }
    std::vector<Out> y(cols);
    ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), g.data(), y.data(), 1, cols, eps), status::ok);
    for (std::size_t i = 0; i < cols; ++i)  // +0 for a positive gain, -0 for a negative one
      ASSERT_EQ(bits(y[i]), bits(val<Out>(i % 2 ? -0.0f : 0.0f))) << where<Out>("rms zero row", i);
    ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), b.data(), y.data(), 1, cols, eps),
              status::ok);
    for (std::size_t i = 0; i < cols; ++i)
      ASSERT_EQ(bits(y[i]), bits(val<Out>(b[i]))) << where<Out>("ln zero row", i);
    for (int layer = 0; layer < 2; ++layer) {
      ASSERT_EQ(
          layer ? normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), b.data(), y.data(), 1, cols, 0.0f)
                : normkit::rms_norm<normkit::pytorch>(x.data(), g.data(), y.data(), 1, cols, 0.0f),
          status::ok);
      for (std::size_t i = 0; i < cols; ++i)
        ASSERT_EQ(bits(y[i]), canonical_nan<Out>()) << where<Out>("zero row eps=0", i);
    }
  });
}

// Constant row: LayerNorm gives y = beta exactly (d_i = x_i - x_0 = 0 exactly, whatever the
// constant: huge, tiny, subnormal), or 0 * g without beta; eps = 0 gives NaN. RMSNorm of a
// constant power of two c with eps = 0: inv = 1/|c| exactly, so y = sign(c) * g exactly.
TEST_P(Catalogue, ConstantRow) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t cols = 100;
  for (float c : {3.0f, -7.25f, 10000.5f, 3.0e38f, -1.0e-40f, 65504.0f}) {
    for_each_type([&](auto o) {
      using Out = typename decltype(o)::type;
      const std::vector<float> x(cols, c);
      rng r(3);
      auto g = uniform_vec<float>(r, cols, -2.0f, 2.0f), b = uniform_vec<float>(r, cols, -100.0f, 100.0f);
      std::vector<Out> y(cols);
      ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), b.data(), y.data(), 1, cols, eps),
                status::ok);
      for (std::size_t i = 0; i < cols; ++i)
        ASSERT_EQ(bits(y[i]), bits(val<Out>(b[i]))) << where<Out>("ln const -> beta", i);
      ASSERT_EQ(normkit::layer_norm<normkit::llama>(x.data(), g.data(), b.data(), y.data(), 1, cols, eps),
                status::ok);
      for (std::size_t i = 0; i < cols; ++i)
        ASSERT_EQ(bits(y[i]), bits(val<Out>(b[i]))) << where<Out>("ln twice -> beta", i);
      ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), nullptr, y.data(), 1, cols, eps),
                status::ok);
      for (std::size_t i = 0; i < cols; ++i)
        ASSERT_EQ(bits(y[i]), bits(val<Out>(g[i] < 0.0f ? -0.0f : 0.0f)))
            << where<Out>("ln const no beta", i);
      ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), b.data(), y.data(), 1, cols, 0.0f),
                status::ok);
      for (std::size_t i = 0; i < cols; ++i)
        ASSERT_EQ(bits(y[i]), canonical_nan<Out>()) << where<Out>("ln const eps=0", i);
    });
  }
  for (float c : {0.25f, -8.0f, 0x1p100f, -0x1p-60f}) {
    const std::vector<float> x(cols, c);
    const std::vector<float> g(cols, 1.75f);
    std::vector<float> y(cols);
    ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), g.data(), y.data(), 1, cols, 0.0f), status::ok);
    for (std::size_t i = 0; i < cols; ++i)
      ASSERT_EQ(bits(y[i]), bits(c < 0 ? -1.75f : 1.75f)) << where<float>("rms const", i);
  }
}

// Mean 1e4, spread 1e-2 (fp32 inputs): the shifted two-pass keeps the normalized values to
// ~1e-6 of the exact ones (naive E[x^2] - E[x]^2 returns a variance of 4568 here, a plain
// two-pass loses 1e-2, docs/contract.md). Exact values from the same fp32 inputs in double.
TEST_P(Catalogue, HugeMeanSmallSpread) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t cols = 4096;
  for (float mean : {1.0e4f, -3.0e4f, 1.0e6f}) {
    rng r(11);
    std::vector<float> x(cols);
    const float spread = mean * 1e-6f;  // 1e-2 at 1e4
    for (auto& v : x)
      v = mean + spread * r.normal();
    double m = 0.0;
    for (float v : x)
      m += v;
    m /= static_cast<double>(cols);
    double var = 0.0;
    for (float v : x)
      var += (v - m) * (v - m);
    var /= static_cast<double>(cols);
    ASSERT_GT(var, 0.0);
    std::vector<float> y(cols);
    ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), nullptr, nullptr, y.data(), 1, cols, 0.0f),
              status::ok);
    double worst = 0.0;
    for (std::size_t i = 0; i < cols; ++i) {
      const double exact = (x[i] - m) / std::sqrt(var);
      worst = std::fmax(worst, std::fabs(y[i] - exact));
    }
    EXPECT_LT(worst, 2e-6) << "mean " << mean << ": max |y - exact| over " << cols << " values";
    std::vector<float> want(cols);
    ASSERT_EQ(normkit::reference::layer_norm<normkit::pytorch>(x.data(), no_f32, no_f32, want.data(), 1, cols,
                                                               0.0f),
              status::ok);
    EXPECT_SAME_BITS(y, want, "shifted mean vs reference");
  }
}

// |x| > sqrt(FLT_MAX) ~ 1.84e19: the sum of squares overflows, the row is recomputed on
// x * 2^-e (docs/contract.md, overflow) and normalizes correctly (PyTorch returns 0 or beta here).
TEST_P(Catalogue, OverflowRow) {
  NORMKIT_USE_ISA(GetParam());
  // RMSNorm, x = [3, 4, 0 x 23] * 2^100: e = 103, x' = [3/8, 1/2, 0...], s' = 25/64,
  // ms' = 1/64, sqrt = 1/8, inv = 8 (eps * 2^-206 underflows to 0): y = [3, 4, 0...] exactly.
  for_each_type([&](auto o) {
    using Out = typename decltype(o)::type;
    std::vector<bf16> xb(25, val<bf16>(0.0f));
    std::vector<float> xf(25, 0.0f);
    xf[0] = 0x1.8p101f, xf[1] = 0x1p102f;  // 3 * 2^100, 4 * 2^100
    xb[0] = val<bf16>(xf[0]), xb[1] = val<bf16>(xf[1]);
    std::vector<Out> y(25);
    for (float e : {0.0f, eps}) {
      ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(xf.data(), nullptr, y.data(), 1, 25, e), status::ok);
      EXPECT_EQ(bits(y[0]), bits(val<Out>(3.0f))) << where<Out>("rms overflow f32", 0);
      EXPECT_EQ(bits(y[1]), bits(val<Out>(4.0f))) << where<Out>("rms overflow f32", 1);
      EXPECT_EQ(bits(y[2]), 0u) << where<Out>("rms overflow f32", 2);
      ASSERT_EQ(normkit::rms_norm<normkit::llama>(xb.data(), nullptr, y.data(), 1, 25, e), status::ok);
      EXPECT_EQ(bits(y[0]), bits(val<Out>(3.0f))) << where<Out>("rms overflow bf16", 0);
      EXPECT_EQ(bits(y[1]), bits(val<Out>(4.0f))) << where<Out>("rms overflow bf16", 1);
    }
  });
  // LayerNorm, x = [1.5, -1.5] * 2^127: d_1 = -3 * 2^127 itself overflows. e = 128, x' = +-0.75,
  // c' = +-0.75, var' = 0.5625, sqrt = 0.75; divide: y = +-0.75 / 0.75 = +-1 exactly; multiply:
  // 0.75 * fl(1/0.75) = 0.75 * 1.33333337306976 = 1.0000000298 -> 1.0f.
  const std::vector<float> x = {0x1.8p127f, -0x1.8p127f};
  std::vector<float> y(2);
  ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), nullptr, nullptr, y.data(), 1, 2, eps),
            status::ok);
  EXPECT_EQ(bits(y[0]), bits(1.0f));
  EXPECT_EQ(bits(y[1]), bits(-1.0f));
  ASSERT_EQ(normkit::layer_norm<normkit::gemma3n>(x.data(), nullptr, nullptr, y.data(), 1, 2, eps),
            status::ok);
  EXPECT_EQ(bits(y[0]), bits(1.0f));
  EXPECT_EQ(bits(y[1]), bits(-1.0f));
  // Random huge rows: finite, within 4 ulp (of 1) of the exact result computed in double (no overflow
  // in double), and the reference's bits.
  rng r(5);
  const std::size_t cols = 1000;
  std::vector<float> big(cols), out(cols), want(cols);
  for (auto& v : big)
    v = (r.u32() & 1 ? 1.0f : -1.0f) * r.uniform(1.9e19f, 3.0e38f);
  for (int layer = 0; layer < 2; ++layer) {
    ASSERT_EQ(
        layer ? normkit::layer_norm<normkit::pytorch>(big.data(), nullptr, nullptr, out.data(), 1, cols, eps)
              : normkit::rms_norm<normkit::pytorch>(big.data(), nullptr, out.data(), 1, cols, eps),
        status::ok);
    double m = 0.0, s = 0.0;
    if (layer) {
      for (float v : big)
        m += v;
      m /= static_cast<double>(cols);
    }
    for (float v : big)
      s += (v - m) * (v - m);
    const double root = std::sqrt(s / static_cast<double>(cols));
    for (std::size_t i = 0; i < cols; ++i) {
      const double exact = (big[i] - m) / root;
      ASSERT_LE(std::fabs(out[i] - exact), 4.0 * std::ldexp(1.0, -23) * std::fmax(std::fabs(exact), 1.0))
          << (layer ? "layer" : "rms") << " [" << i << "] " << out[i] << " vs " << exact;
    }
    ASSERT_EQ(
        layer ? normkit::reference::layer_norm<normkit::pytorch>(big.data(), no_f32, no_f32, want.data(), 1,
                                                                 cols, eps)
              : normkit::reference::rms_norm<normkit::pytorch>(big.data(), no_f32, want.data(), 1, cols, eps),
        status::ok);
    EXPECT_SAME_BITS(out, want, layer ? "ln overflow vs reference" : "rms overflow vs reference");
  }
}

// Rows whose squares all underflow (|x| < ~1e-19) with eps = 0: the mean square is 0,
// inv = 1/sqrt(0) = +Inf, y = x * Inf = +-Inf, and an exact zero gives 0 * Inf = NaN. There is
// no underflow rescaling (documented; PyTorch's x * rsqrt(mean(x^2) + 0) gives the same).
TEST_P(Catalogue, UnderflowRowEpsZero) {
  NORMKIT_USE_ISA(GetParam());
  for_each_type([&](auto o) {
    using Out = typename decltype(o)::type;
    const std::vector<float> x = {1e-30f, -1e-30f, 0.0f, 2e-30f};
    std::vector<Out> y(4);
    ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), nullptr, y.data(), 1, 4, 0.0f), status::ok);
    EXPECT_EQ(bits(y[0]), inf_bits<Out>(false));
    EXPECT_EQ(bits(y[1]), inf_bits<Out>(true));
    EXPECT_EQ(bits(y[2]), canonical_nan<Out>());
    EXPECT_EQ(bits(y[3]), inf_bits<Out>(false));
    // LayerNorm: K = 1e-30, d = [0, -2e-30], m = -1e-30, c = [1e-30, -1e-30], var = 0.
    const std::vector<bf16> xb = {val<bf16>(1e-30f), val<bf16>(-1e-30f)};
    std::vector<Out> z(2);
    ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(xb.data(), nullptr, nullptr, z.data(), 1, 2, 0.0f),
              status::ok);
    EXPECT_EQ(bits(z[0]), inf_bits<Out>(false));
    EXPECT_EQ(bits(z[1]), inf_bits<Out>(true));
  });
}

// Subnormal inputs and outputs are kept, never flushed: with eps = 1e-6 a subnormal row has
// ms = 0 (squares underflow) and y_i = x_i * (1 / sqrt(1e-6f)), a subnormal or tiny normal;
// a gain that makes a subnormal output keeps it too (float, bf16 and fp16 subnormals).
TEST_P(Catalogue, SubnormalRow) {
  NORMKIT_USE_ISA(GetParam());
  const float inv = 1.0f / std::sqrt(0.0f + eps);  // the test's own IEEE arithmetic
  const std::vector<float> x = {0x1p-140f, -0x1p-141f, 0x1p-149f, 0.0f, 0x1.fffffcp-127f};
  std::vector<float> y(x.size());
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), nullptr, y.data(), 1, x.size(), eps), status::ok);
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(bits(y[i]), bits(x[i] * inv)) << where<float>("subnormal in", i);
  EXPECT_NE(bits(y[2]), 0u) << "2^-149 * 1000 must stay a (subnormal) nonzero";
  // bf16 subnormal inputs widen exactly: 0x0001 = 2^-133.
  const std::vector<bf16> xb = {bf16::from_bits(0x0001), bf16::from_bits(0x8040), bf16::from_bits(0x007f)};
  std::vector<float> yb(3);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(xb.data(), nullptr, yb.data(), 1, 3, eps), status::ok);
  for (std::size_t i = 0; i < 3; ++i)
    ASSERT_EQ(bits(yb[i]), bits(normkit::to_float(xb[i]) * inv)) << where<float>("bf16 subnormal in", i);
  // LayerNorm on a subnormal spread: c = +-2^-140, var = 0 -> y = c * inv.
  const std::vector<float> xl = {0x1p-140f, -0x1p-140f};
  std::vector<float> yl(2);
  ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(xl.data(), nullptr, nullptr, yl.data(), 1, 2, eps),
            status::ok);
  EXPECT_EQ(bits(yl[0]), bits(0x1p-140f * inv));
  EXPECT_EQ(bits(yl[1]), bits(-0x1p-140f * inv));
  // Subnormal outputs: x = ones, eps = 0 -> n = 1 exactly, y = Out(gamma).
  const std::vector<float> ones(4, 1.0f);
  const std::vector<float> g = {0x1p-140f, 0x1p-149f, -0x1p-130f, 0x1p-20f};
  std::vector<float> yf(4);
  std::vector<bf16> yh(4);
  std::vector<fp16> yp(4);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(ones.data(), g.data(), yf.data(), 1, 4, 0.0f), status::ok);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(ones.data(), g.data(), yh.data(), 1, 4, 0.0f), status::ok);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(ones.data(), g.data(), yp.data(), 1, 4, 0.0f), status::ok);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(bits(yf[i]), bits(g[i])) << "f32 subnormal out " << i;
  EXPECT_EQ(bits(yh[2]), 0x8008u) << "bf16: -2^-130 = -8 * 2^-133";
  EXPECT_EQ(bits(yh[0]), 0x0000u) << "bf16: 2^-140 < 2^-134 rounds to +0";
  EXPECT_EQ(bits(yp[3]), 0x0010u) << "fp16: 2^-20 = 16 * 2^-24";
  EXPECT_EQ(bits(yp[2]), 0x8000u) << "fp16: -2^-130 rounds to -0";
}

// fp16 outputs beyond the fp16 range round to +-Inf (IEEE RNE: >= 65520), never NaN.
TEST_P(Catalogue, Fp16OutputOverflow) {
  NORMKIT_USE_ISA(GetParam());
  const std::vector<float> ones(8, 1.0f);  // eps = 0: n = 1 exactly, y = fp16(gamma)
  const std::vector<float> g = {65504.0f, 65519.0f, 65520.0f, 1e5f, -1e5f, 3e38f, -65520.0f, 1.0f};
  const std::uint32_t want[] = {0x7bffu, 0x7bffu, 0x7c00u, 0x7c00u, 0xfc00u, 0x7c00u, 0xfc00u, 0x3c00u};
  std::vector<fp16> y(8);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(ones.data(), g.data(), y.data(), 1, 8, 0.0f), status::ok);
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(bits(y[i]), want[i]) << "rms gamma " << g[i];
  // Round twice through fp16 (llama, In = fp16): Mid(1) = 1, then the same rounding.
  const std::vector<fp16> ones16(8, val<fp16>(1.0f));
  ASSERT_EQ(normkit::rms_norm<normkit::llama>(ones16.data(), g.data(), y.data(), 1, 8, 0.0f), status::ok);
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(bits(y[i]), want[i]) << "llama gamma " << g[i];
  // LayerNorm: a constant row gives beta, rounded to fp16.
  const std::vector<float> c(8, 5.0f);
  ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(c.data(), ones.data(), g.data(), y.data(), 1, 8, eps),
            status::ok);
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(bits(y[i]), want[i]) << "ln beta " << g[i];
}

// ---- Argument errors: the cases of the bad-input catalogue (bad_inputs.hpp), one class per
// test, on rms_norm and layer_norm<pytorch> with equal and mixed types (y == x with another type
// needs In != Out) and on convert: the documented status, and no byte of the buffer changed.

struct norm_runner {
  const char* name;
  bad_inputs::norm_types types;
  status (*run)(bool layer, bad_inputs::arena&, const bad_inputs::norm_placement&);
};
template <class In, class W, class Out>
norm_runner norm_runner_of(bool layer) {
  return {layer ? "layer_norm<pytorch>" : "rms_norm<pytorch>", bad_inputs::norm_types_of<In, W, Out>(layer),
          &bad_inputs::run_norm<normkit::pytorch, In, W, Out>};
}

// Runs the catalogue's cases of status `want` whose edited placement `pick` selects; returns how
// many ran.
template <class PickNorm, class PickConvert>
std::size_t expect_catalogue_class(status want, PickNorm pick_norm, PickConvert pick_convert) {
  const std::string isa_tag = std::string(" isa ") + normkit::to_string(normkit::active_isa());
  std::size_t ran = 0;
  const norm_runner norms[] = {
      norm_runner_of<float, float, float>(false), norm_runner_of<float, float, float>(true),
      norm_runner_of<float, float, bf16>(false), norm_runner_of<bf16, float, bf16>(true),
      norm_runner_of<fp16, bf16, float>(true)};
  for (const norm_runner& r : norms)
    for (const bad_inputs::norm_case& c : bad_inputs::norm_cases(r.types)) {
      bad_inputs::norm_placement p;
      c.edit(p);
      if (c.want != want || !pick_norm(p))
        continue;
      ++ran;
      bad_inputs::arena a;
      const auto before = a.snapshot();
      EXPECT_EQ(r.run(r.types.has_beta, a, p), want) << r.name << " " << c.why << isa_tag;
      EXPECT_TRUE(a.same_as(before)) << r.name << " " << c.why << isa_tag << ": memory touched";
    }
  using convert_fn = status (*)(bad_inputs::arena&, const bad_inputs::convert_placement&);
  const std::pair<bad_inputs::convert_types, convert_fn> converts[] = {
      {bad_inputs::convert_types_of<float, fp16>(), &bad_inputs::run_convert<float, fp16>},
      {bad_inputs::convert_types_of<bf16, bf16>(), &bad_inputs::run_convert<bf16, bf16>}};
  for (const auto& r : converts)
    for (const bad_inputs::convert_case& c : bad_inputs::convert_cases(r.first)) {
      bad_inputs::convert_placement p;
      c.edit(p);
      if (c.want != want || !pick_convert(p))
        continue;
      ++ran;
      bad_inputs::arena a;
      const auto before = a.snapshot();
      EXPECT_EQ(r.second(a, p), want) << "convert " << c.why << isa_tag;
      EXPECT_TRUE(a.same_as(before)) << "convert " << c.why << isa_tag << ": memory touched";
    }
  return ran;
}

const auto any_norm = [](const bad_inputs::norm_placement&) { return true; };
const auto any_convert = [](const bad_inputs::convert_placement&) { return true; };
const auto no_convert = [](const bad_inputs::convert_placement&) { return false; };

// ---- Invalid eps: rejected before anything is read or written (also when rows == 0).

TEST_P(Catalogue, EpsNegative) {
  NORMKIT_USE_ISA(GetParam());
  const auto negative = [](const bad_inputs::norm_placement& p) { return p.eps < 0.0f && p.eps > -inf; };
  EXPECT_GE(expect_catalogue_class(status::invalid_eps, negative, no_convert), 5u * 3u);
}

TEST_P(Catalogue, EpsNan) {
  NORMKIT_USE_ISA(GetParam());
  const auto nan = [](const bad_inputs::norm_placement& p) { return p.eps != p.eps; };
  EXPECT_GE(expect_catalogue_class(status::invalid_eps, nan, no_convert), 5u * 3u);
}

TEST_P(Catalogue, EpsInf) {
  NORMKIT_USE_ISA(GetParam());
  const auto infinite = [](const bad_inputs::norm_placement& p) { return p.eps == inf || p.eps == -inf; };
  EXPECT_GE(expect_catalogue_class(status::invalid_eps, infinite, no_convert), 5u * 2u);
}

// The valid edge values: 0, -0 (equal to 0), the smallest subnormal, FLT_MAX.
TEST_P(Catalogue, EpsZeroTinyAndHugeAreAccepted) {
  NORMKIT_USE_ISA(GetParam());
  const std::vector<float> x = {1.0f, -1.0f, 1.0f, -1.0f};  // ms = 1, var = 1
  std::vector<float> y(4);
  for (float e : {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()}) {
    ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), nullptr, y.data(), 1, 4, e), status::ok) << e;
    // 1 + denorm_min rounds to 1, so y = x exactly; FLT_MAX: inv = 1/sqrt(FLT_MAX) ~ 5.4e-20.
    if (e < 1.0f)
      for (std::size_t i = 0; i < 4; ++i)
        EXPECT_EQ(bits(y[i]), bits(x[i])) << "eps " << e;
    else
      EXPECT_EQ(bits(y[0]), bits(1.0f * (1.0f / std::sqrt(1.0f + e))));
  }
}

// ---- Shapes.

// cols == 0 (or rows == 0) is a no-op returning ok, even with null pointers; nothing is written.
TEST_P(Catalogue, ColsZero) {
  NORMKIT_USE_ISA(GetParam());
  const float* none = nullptr;
  float* out = nullptr;
  EXPECT_EQ(normkit::rms_norm<normkit::pytorch>(none, none, out, 5, 0, eps), status::ok);
  EXPECT_EQ(normkit::layer_norm<normkit::pytorch>(none, none, none, out, 5, 0, eps, 0, 0), status::ok);
  EXPECT_EQ(normkit::rms_norm<normkit::pytorch>(none, none, out, 0, 7, eps), status::ok);
  EXPECT_EQ(normkit::convert(none, out, 0), status::ok);
  std::vector<float> x(4, 2.0f), y(4, 42.0f);
  EXPECT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), x.data(), x.data(), y.data(), 3, 0, eps),
            status::ok);
  for (float v : y)
    EXPECT_EQ(bits(v), bits(42.0f));
}

// cols == 1: RMSNorm gives x / |x| (exactly +-1 with the divide knob, sqrt(fl(x^2)) = |x|, also
// on the overflow path); LayerNorm gives beta exactly (eps > 0), NaN with eps = 0.
TEST_P(Catalogue, ColsOne) {
  NORMKIT_USE_ISA(GetParam());
  for (float v : {3.0f, -7.0f, 0.1f, 1e18f, -1e-18f, 3e38f, -0x1.fffffep127f}) {
    float y = 0.0f;
    ASSERT_EQ(normkit::rms_norm<normkit::gemma3n>(&v, nullptr, &y, 1, 1, 0.0f), status::ok);
    EXPECT_EQ(bits(y), bits(v < 0 ? -1.0f : 1.0f)) << "divide, x = " << v;
    ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(&v, nullptr, &y, 1, 1, 0.0f), status::ok);
    EXPECT_LE(std::fabs(std::fabs(y) - 1.0f), 0x1p-23f) << "multiply, x = " << v;
    const float beta = -2.5f, gamma = 4.0f;
    ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(&v, &gamma, &beta, &y, 1, 1, eps), status::ok);
    EXPECT_EQ(bits(y), bits(beta)) << "layer, x = " << v;
    ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(&v, &gamma, &beta, &y, 1, 1, 0.0f), status::ok);
    EXPECT_EQ(bits(y), 0x7fc00000u) << "layer eps=0, x = " << v;
  }
}

// cols = 2^20 + 1: a long row with a one-element tail; same bits as the reference, finite, and
// within a few ulp of the exact result.
TEST_P(Catalogue, ColsTwoPow20Plus1) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t cols = (std::size_t{1} << 20) + 1, rows = 2;
  rng r(20);
  const auto x = normal_vec<bf16>(r, rows * cols, 2.0f, 0.5f);
  const auto g = uniform_vec<float>(r, cols, 0.5f, 1.5f);
  std::vector<float> y(rows * cols), want(rows * cols);
  for (int layer = 0; layer < 2; ++layer) {
    ASSERT_EQ(
        layer ? normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), nullptr, y.data(), rows, cols, eps)
              : normkit::rms_norm<normkit::pytorch>(x.data(), g.data(), y.data(), rows, cols, eps),
        status::ok);
    ASSERT_EQ(layer ? normkit::reference::layer_norm<normkit::pytorch>(x.data(), g.data(), no_f32,
                                                                       want.data(), rows, cols, eps)
                    : normkit::reference::rms_norm<normkit::pytorch>(x.data(), g.data(), want.data(), rows,
                                                                     cols, eps),
              status::ok);
    ASSERT_SAME_BITS(y, want, layer ? "ln 2^20+1" : "rms 2^20+1");
    for (std::size_t row = 0; row < rows; ++row) {
      const bf16* xr = x.data() + row * cols;
      double m = 0.0, s = 0.0;
      if (layer) {
        for (std::size_t i = 0; i < cols; ++i)
          m += normkit::to_float(xr[i]);
        m /= static_cast<double>(cols);
      }
      for (std::size_t i = 0; i < cols; ++i)
        s += (normkit::to_float(xr[i]) - m) * (normkit::to_float(xr[i]) - m);
      const double root = std::sqrt(s / static_cast<double>(cols) + static_cast<double>(eps));
      double worst = 0.0;
      for (std::size_t i = 0; i < cols; ++i) {
        const double exact = (normkit::to_float(xr[i]) - m) / root * g[i];
        // Error on the scale of the normalized values (O(1)): LayerNorm values near the mean
        // inherit the mean's absolute error, which is small against 1, not against c_i.
        worst = std::fmax(worst, std::fabs(y[row * cols + i] - exact) / std::fmax(std::fabs(exact), 1.0));
      }
      EXPECT_LT(worst, 1e-5) << (layer ? "layer" : "rms") << " row " << row << ": max error";
    }
  }
}

// 64-bit offsets: rows = 2 with a stride of 2^32 + 64 elements (16 GiB of floats, 8 GiB of
// bf16), in a reserved PROT_NONE region where only the pages holding the two rows are
// committed. A 32-bit index would read row 0 twice (or fault); the results must equal the
// reference on contiguous copies.
class reserved_region {
 public:
  explicit reserved_region(std::size_t bytes) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
  }
  ~reserved_region() {
    if (base_)
      munmap(base_, bytes_);
  }
  reserved_region(const reserved_region&) = delete;
  reserved_region& operator=(const reserved_region&) = delete;
  unsigned char* base() const { return base_; }
  // Makes the pages covering [off, off + n) readable and writable.
  bool commit(std::size_t off, std::size_t n) const {
    const std::size_t pg = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t lo = off / pg * pg, hi = (off + n + pg - 1) / pg * pg;
    return mprotect(base_ + lo, hi - lo, PROT_READ | PROT_WRITE) == 0;
  }

 private:
  std::size_t bytes_;
  unsigned char* base_ = nullptr;
};

template <class In, class Out>
void check_64bit_offsets() {
  const std::size_t cols = 100, x_stride = (std::size_t{1} << 32) + 64,
                    y_stride = (std::size_t{1} << 32) + 200;
  reserved_region rx(sizeof(In) * (x_stride + cols) + 4096), ry(sizeof(Out) * (y_stride + cols) + 4096);
  if (!rx.base() || !ry.base())
    GTEST_SKIP() << "cannot reserve 2 x 16 GiB of address space here";
  const std::size_t x_off = 3 * sizeof(In);  // rows at element offsets: not page or vector aligned
  ASSERT_TRUE(rx.commit(x_off, cols * sizeof(In)) &&
              rx.commit(x_off + x_stride * sizeof(In), cols * sizeof(In)));
  ASSERT_TRUE(ry.commit(0, cols * sizeof(Out)) && ry.commit(y_stride * sizeof(Out), cols * sizeof(Out)));
  In* x = reinterpret_cast<In*>(rx.base() + x_off);
  Out* y = reinterpret_cast<Out*>(ry.base());
  rng r(64);
  const auto rows = normal_vec<In>(r, 2 * cols, 1.0f, 0.5f);  // contiguous copy: row 0, row 1
  const auto g = uniform_vec<In>(r, cols, 0.5f, 1.5f);
  std::copy(rows.begin(), rows.begin() + cols, x);
  std::copy(rows.begin() + cols, rows.end(), x + x_stride);
  std::vector<Out> want(2 * cols), got(2 * cols);
  for (int layer = 0; layer < 2; ++layer) {
    ASSERT_EQ(layer ? normkit::layer_norm<normkit::pytorch>(x, g.data(), g.data(), y, 2, cols, eps, x_stride,
                                                            y_stride)
                    : normkit::rms_norm<normkit::pytorch>(x, g.data(), y, 2, cols, eps, x_stride, y_stride),
              status::ok);
    ASSERT_EQ(layer ? normkit::reference::layer_norm<normkit::pytorch>(rows.data(), g.data(), g.data(),
                                                                       want.data(), 2, cols, eps)
                    : normkit::reference::rms_norm<normkit::pytorch>(rows.data(), g.data(), want.data(), 2,
                                                                     cols, eps),
              status::ok);
    std::copy(y, y + cols, got.begin());
    std::copy(y + y_stride, y + y_stride + cols, got.begin() + static_cast<std::ptrdiff_t>(cols));
    ASSERT_SAME_BITS(got, want, layer ? "ln 64-bit stride" : "rms 64-bit stride");
  }
  // In place with the same huge stride.
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x, g.data(), x, 2, cols, eps, x_stride, x_stride),
            status::ok);
  std::vector<In> inplace(2 * cols), want_in(2 * cols);
  std::copy(x, x + cols, inplace.begin());
  std::copy(x + x_stride, x + x_stride + cols, inplace.begin() + static_cast<std::ptrdiff_t>(cols));
  ASSERT_EQ(
      normkit::reference::rms_norm<normkit::pytorch>(rows.data(), g.data(), want_in.data(), 2, cols, eps),
      status::ok);
  ASSERT_SAME_BITS(inplace, want_in, "in place 64-bit stride");
}

TEST_P(Catalogue, SixtyFourBitOffsets) {
  NORMKIT_USE_ISA(GetParam());
  check_64bit_offsets<float, float>();
  check_64bit_offsets<bf16, fp16>();
}

// Any element offset works (no vector alignment needed): same bits as aligned copies.
TEST_P(Catalogue, ElementOffsetPointers) {
  NORMKIT_USE_ISA(GetParam());
  for (std::size_t cols : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 63u, 64u, 65u, 200u}) {
    rng r(cols);
    const std::size_t rows = 3, pad = 16;
    const auto x0 = normal_vec<bf16>(r, rows * cols);
    const auto g0 = uniform_vec<float>(r, cols, 0.5f, 1.5f), b0 = uniform_vec<float>(r, cols, -1.0f, 1.0f);
    std::vector<fp16> want(rows * cols), got(rows * cols);
    for (int layer = 0; layer < 2; ++layer) {
      ASSERT_EQ(layer ? normkit::reference::layer_norm<normkit::pytorch>(x0.data(), g0.data(), b0.data(),
                                                                         want.data(), rows, cols, eps)
                      : normkit::reference::rms_norm<normkit::pytorch>(x0.data(), g0.data(), want.data(),
                                                                       rows, cols, eps),
                status::ok);
      for (std::size_t off = 0; off < pad; ++off) {
        // 64-byte aligned storage, then element offsets: x by off, y/gamma/beta by others.
        alignas(64) static bf16 xs[3 * 200 + 16];
        alignas(64) static fp16 ys[3 * 200 + 16];
        alignas(64) static float gs[200 + 16], bs[200 + 16];
        const std::size_t oy = (off * 7) % pad, og = (off * 3) % pad, ob = (off * 5 + 1) % pad;
        std::copy(x0.begin(), x0.end(), xs + off);
        std::copy(g0.begin(), g0.end(), gs + og);
        std::copy(b0.begin(), b0.end(), bs + ob);
        ASSERT_EQ(layer ? normkit::layer_norm<normkit::pytorch>(xs + off, gs + og, bs + ob, ys + oy, rows,
                                                                cols, eps)
                        : normkit::rms_norm<normkit::pytorch>(xs + off, gs + og, ys + oy, rows, cols, eps),
                  status::ok);
        std::copy(ys + oy, ys + oy + rows * cols, got.begin());
        ASSERT_SAME_BITS(got, want,
                         "offsets x+" + std::to_string(off) + " y+" + std::to_string(oy) + " cols " +
                             std::to_string(cols));
      }
    }
  }
}

// In place: y == x with the same type and stride gives the out-of-place bits; row gaps stay.
TEST_P(Catalogue, InPlace) {
  NORMKIT_USE_ISA(GetParam());
  for_each_type([&](auto t) {
    using T = typename decltype(t)::type;
    const std::size_t rows = 3, cols = 77, stride = 83;
    rng r(77);
    const auto x0 = normal_vec<T>(r, rows * cols);
    const auto g = uniform_vec<T>(r, cols, 0.5f, 1.5f);
    for (int layer = 0; layer < 2; ++layer) {
      std::vector<T> want(rows * cols);
      ASSERT_EQ(layer ? normkit::reference::layer_norm<normkit::llama>(x0.data(), g.data(), g.data(),
                                                                       want.data(), rows, cols, eps)
                      : normkit::reference::rms_norm<normkit::llama>(x0.data(), g.data(), want.data(), rows,
                                                                     cols, eps),
                status::ok);
      std::vector<T> buf(rows * stride, val<T>(42.0f));
      for (std::size_t row = 0; row < rows; ++row)
        std::copy(x0.begin() + static_cast<std::ptrdiff_t>(row * cols),
                  x0.begin() + static_cast<std::ptrdiff_t>((row + 1) * cols),
                  buf.begin() + static_cast<std::ptrdiff_t>(row * stride));
      ASSERT_EQ(layer ? normkit::layer_norm<normkit::llama>(buf.data(), g.data(), g.data(), buf.data(), rows,
                                                            cols, eps, stride, stride)
                      : normkit::rms_norm<normkit::llama>(buf.data(), g.data(), buf.data(), rows, cols, eps,
                                                          stride, stride),
                status::ok);
      for (std::size_t row = 0; row < rows; ++row) {
        ASSERT_TRUE(same_bits(buf.data() + row * stride, want.data() + row * cols, cols, "in place"));
        for (std::size_t i = cols; i < stride && row + 1 < rows; ++i)
          ASSERT_EQ(bits(buf[row * stride + i]), bits(val<T>(42.0f))) << "gap written";
      }
    }
  });
}

// ---- Malformed calls: rejected with the status of their class, nothing touched (the catalogue's
// cases, expect_catalogue_class above).

// y partially overlapping x, gamma or beta is an error; so is y at x's address with another
// element type or (rows > 1) another stride, and y interleaved in x's row gaps (conservative).
TEST_P(Catalogue, PartialOverlap) {
  NORMKIT_USE_ISA(GetParam());
  EXPECT_GE(expect_catalogue_class(status::overlapping_output, any_norm, any_convert), 5u * 10u);
  // Inputs may alias each other (they are only read): gamma == beta == x is fine.
  const std::size_t cols = 16;
  rng r(9);
  const std::vector<float> x = normal_vec<float>(r, cols);
  std::vector<float> y(cols);
  EXPECT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), x.data(), x.data(), y.data(), 1, cols, eps),
            status::ok);
}

// Null x or y with non-zero sizes is an error; null gamma means g = 1 (also with the 1 + gamma
// offset: g = 1, not 1 + 0 being different... both are 1) and null beta means no bias, which
// gives the bits of beta = -0 (fma(n, g, -0) == n * g for every n * g, signed zeros included).
TEST_P(Catalogue, NullPointers) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t cols = 40;
  rng r(4);
  auto x = normal_vec<float>(r, cols);
  x[3] = 0.0f;  // n = 0: tells +0 bias (0 * g + 0 = +0) from no bias (0 * g = -0 for g < 0)
  EXPECT_GE(expect_catalogue_class(status::null_pointer, any_norm, any_convert), 5u * 2u);

  const std::vector<float> ones(cols, 1.0f), neg_zero(cols, -0.0f), neg(cols, -2.0f);
  std::vector<float> a(cols), b(cols);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), nullptr, a.data(), 1, cols, eps), status::ok);
  ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), ones.data(), b.data(), 1, cols, eps), status::ok);
  EXPECT_SAME_BITS(a, b, "null gamma == gamma of ones");
  ASSERT_EQ(normkit::rms_norm<normkit::gemma>(x.data(), nullptr, a.data(), 1, cols, eps), status::ok);
  EXPECT_SAME_BITS(a, b, "gemma: null gamma means g = 1");
  ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), neg.data(), nullptr, a.data(), 1, cols, eps),
            status::ok);
  ASSERT_EQ(
      normkit::layer_norm<normkit::pytorch>(x.data(), neg.data(), neg_zero.data(), b.data(), 1, cols, eps),
      status::ok);
  EXPECT_SAME_BITS(a, b, "null beta == beta of -0");
}

// A row stride smaller than cols is an error (whatever rows is, 1 included).
TEST_P(Catalogue, StrideSmallerThanCols) {
  NORMKIT_USE_ISA(GetParam());
  const auto one_row = [](const bad_inputs::norm_placement& p) { return p.rows == 1; };
  EXPECT_GE(expect_catalogue_class(status::invalid_stride, one_row, no_convert), 5u);
  EXPECT_GE(expect_catalogue_class(status::invalid_stride, any_norm, no_convert), 5u * 4u);
}

// Pointers misaligned for their element type are an error (any element offset is fine).
TEST_P(Catalogue, MisalignedPointer) {
  NORMKIT_USE_ISA(GetParam());
  EXPECT_GE(expect_catalogue_class(status::misaligned_pointer, any_norm, any_convert), 5u * 3u);
}

// Sizes whose extent exceeds the address space are an error, not a wrapped index.
TEST_P(Catalogue, SizeOverflow) {
  NORMKIT_USE_ISA(GetParam());
  EXPECT_GE(expect_catalogue_class(status::size_overflow, any_norm, any_convert), 5u * 5u);
}

INSTANTIATE_TEST_SUITE_P(Isa, Catalogue, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
