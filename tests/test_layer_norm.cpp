// SPDX-License-Identifier: MIT
// LayerNorm numerics (docs/contract.md, shifted two-pass): the seed's worked
// examples, the epilogue with a bias, cancellation (mean 1e4 / spread 1e-2, [40000..40003],
// constant rows), accuracy against the fp64 oracle, overflow, non-finite, zero, single-column and
// subnormal rows, and batch invariance. Every test calls the public normkit::layer_norm on each
// ISA this CPU has. Expected bits are derived here, in double with one explicit rounding per
// contract operation, never by the code under test.
#include "numerics.hpp"
#include "support.hpp"

#include <algorithm>  // std::max, std::copy
#include <cmath>    // std::sqrt, std::ldexp, std::ilogb, std::nearbyint, std::fma, std::isfinite, std::frexp
#include <cstdint>  // std::int64_t, std::uint32_t
#include <cstdio>   // std::printf
#include <cstdlib>  // std::llabs
#include <string>   // std::string, std::to_string
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

namespace {

using namespace normkit_test;
using normkit::isa;
using normkit::status;

// f32_* steps, round_to, ulp_distance, stores, ulp_histogram, from_floats, isa_name: numerics.hpp.
// fma(a, b, c) of floats is exact in double when the product and c are within 2^29 of each other
// in scale, which the rows below keep.

// One ulp of T at |v|.
template <class T>
double ulp_of(double v) {
  const int e = v == 0.0 ? format<T>::emin : std::max(std::ilogb(v), format<T>::emin);
  return std::ldexp(1.0, e - (format<T>::digits - 1));
}

// LayerNorm's error budget against the oracle. c_i = d_i - m carries an absolute error of about
// an fp32 ulp of the row's values, which the normalization turns into ~2^-24 of the row's largest
// |y|; an output near 0 (x_i near the mean) can then be many ulps off relative to itself -- the
// conditioning of LayerNorm, not the kernel. So the budget is one ulp of Out at the oracle value
// plus an absolute slack, measured in fp32 ulps (2^-24) of the row's largest |oracle|:
// slack(y) = (|y - o| - ulp_Out(o)) / (2^-24 max |o|), asserted <= 8 (measured <= 3.4).
template <class Out>
double slack(Out y, double o, double top) {
  const double over = std::fabs(normkit::to_float(y) - o) - ulp_of<Out>(o);
  return over <= 0 ? 0.0 : over / (0x1p-24 * top);
}
constexpr double slack_budget = 8;

template <class Policy, class In, class W, class Out>
std::vector<Out> run(const std::vector<In>& x, const W* gamma, const W* beta, std::size_t rows,
                     std::size_t cols, float eps) {
  std::vector<Out> y(rows * cols);
  EXPECT_EQ(normkit::layer_norm<Policy>(x.data(), gamma, beta, y.data(), rows, cols, eps), status::ok);
  return y;
}

// The contract's n_i by hand for a row whose sums are exact in fp32 at every step (so no order
// matters):
// K = x_0; d_i = x_i - K; m = sum(d) / d; c_i = d_i - m; var = sum(c^2) / d; n_i = c_i * inv.
// Squares too small for fp32 round to 0 in the fma and add nothing; the double sum of them
// rounds to the same 0.
std::vector<float> normalized_by_hand(const std::vector<float>& x, float eps, bool divide = false) {
  const float k = x[0];
  const float cols = static_cast<float>(x.size());
  double sum_d = 0;
  for (float v : x)
    sum_d += f32_add(v, -k);
  EXPECT_EQ(static_cast<double>(static_cast<float>(sum_d)), sum_d) << "premise: csum(d) is exact";
  const float m = f32_div(static_cast<float>(sum_d), cols);
  std::vector<float> c;
  double sum_sq = 0;
  for (float v : x) {
    c.push_back(f32_add(f32_add(v, -k), -m));
    sum_sq += static_cast<double>(c.back()) * c.back();
  }
  const float root = f32_sqrt(f32_add(f32_div(static_cast<float>(sum_sq), cols), eps));
  const float inv = f32_div(1.0f, root);
  for (float& v : c)
    v = divide ? f32_div(v, root) : f32_mul(v, inv);
  return c;
}

class LayerNorm : public ::testing::TestWithParam<isa> {};

// ---- The seed's worked example: [2,4,4,4,5,5,7,9] -> [-1.5,-0.5,-0.5,-0.5,0,0,1,2]. ----

template <class Policy, class In, class W, class Out>
void check_worked_example(float shift) {
  const std::vector<float> base = {2, 4, 4, 4, 5, 5, 7, 9};
  const std::vector<float> want = {-1.5f, -0.5f, -0.5f, -0.5f, 0.0f, 0.0f, 1.0f, 2.0f};
  std::vector<float> xs;
  for (float v : base)
    xs.push_back(v + shift);  // exact: shift is a power of two or small
  const std::vector<In> x = from_floats<In>(xs);
  // mean 5, variance 32 / 8 = 4, inv = 1 / 2: every step is exact.
  const std::string what = std::string(type_name<In>()) + "," + type_name<W>() + "->" + type_name<Out>() +
                           " shift " + std::to_string(shift) + " on " + isa_name();
  const auto y = run<Policy, In, W, Out>(x, nullptr, nullptr, 1, 8, 0.0f);
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(normkit::to_float(y[i]), want[i]) << what << " i=" << i;
  // gamma 2, beta 0.5: y = fma(n, 2, 0.5), exact.
  const std::vector<W> g(8, as<W>(2.0f)), b(8, as<W>(0.5f));
  const auto ya = run<Policy, In, W, Out>(x, g.data(), b.data(), 1, 8, 0.0f);
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(normkit::to_float(ya[i]), 2.0f * want[i] + 0.5f) << what << " affine i=" << i;
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(bits(y[i]), bits(as<Out>(want[i]))) << what << " signed zero, i=" << i;
}

TEST_P(LayerNorm, MatchesWorkedExample) {
  NORMKIT_USE_ISA(GetParam());
  check_worked_example<normkit::pytorch, float, float, float>(0.0f);
  check_worked_example<normkit::pytorch, bf16, bf16, bf16>(0.0f);
  check_worked_example<normkit::pytorch, fp16, fp16, fp16>(0.0f);
  check_worked_example<normkit::pytorch, bf16, float, float>(0.0f);
  check_worked_example<normkit::round_twice, bf16, bf16, bf16>(0.0f);
  check_worked_example<normkit::gemma3n, fp16, bf16, float>(0.0f);
  // Shifted rows normalize to the same values: the shift K = x_0 removes the offset exactly.
  check_worked_example<normkit::pytorch, float, float, float>(1000.0f);
  check_worked_example<normkit::pytorch, float, float, float>(1048576.0f);  // 2^20: 2^20 + 9 < 2^24
  check_worked_example<normkit::pytorch, fp16, fp16, fp16>(1024.0f);        // 1024..1033 exact in fp16
  check_worked_example<normkit::pytorch, bf16, bf16, float>(-8.0f);
}

// The seed's epilogue example with a bias. The row [0, 1.1f, -1.1f, 0] has mean 0 and
// var = 2 fl(1.1f^2) / 4 in any order; eps = 1 - var is exact (Sterbenz), so var + eps = 1,
// inv = 1 and n = [0, 1.1f, -1.1f, 0] exactly.
TEST_P(LayerNorm, RoundsOnceOrTwiceAsInTheWorkedExample) {
  NORMKIT_USE_ISA(GetParam());
  const std::vector<float> x = {0.0f, 1.1f, -1.1f, 0.0f};
  const float var = f32_div(f32_add(f32_mul(1.1f, 1.1f), f32_mul(1.1f, 1.1f)), 4.0f);
  const float eps = f32_add(1.0f, -var);
  ASSERT_EQ(f32_add(var, eps), 1.0f);
  const bf16 g1 = bf16::from_bits(0x3F86);  // bf16(1.05) = 1.046875
  ASSERT_EQ(bits(bf16(1.05f)), 0x3F86u);
  const std::vector<bf16> g(4, g1), b(4, bf16(0.5f));
  const std::string on = " on " + isa_name();
  // No bias: the seed's numbers, 1.1484375 (once) and 1.15625 (twice through bf16).
  const auto once = run<normkit::pytorch, float, bf16, bf16>(x, g.data(), nullptr, 1, 4, eps);
  const auto twice = run<normkit::t5, float, bf16, bf16>(x, g.data(), nullptr, 1, 4, eps);
  const auto twice_in = run<normkit::llama, float, bf16, bf16>(x, g.data(), nullptr, 1, 4, eps);
  EXPECT_EQ(normkit::to_float(once[1]), 1.1484375f) << on;
  EXPECT_EQ(normkit::to_float(once[2]), -1.1484375f) << on;
  EXPECT_EQ(normkit::to_float(twice[1]), 1.15625f) << on;
  EXPECT_EQ(normkit::to_float(twice[2]), -1.15625f) << on;
  EXPECT_EQ(normkit::to_float(twice_in[1]), 1.1484375f) << "Mid = In = float rounds nothing" << on;
  // With a bias: one fma, then Out. Once: bf16(fma(1.1f, 1.046875, 0.5)) = 1.6484375; twice:
  // bf16(fma(1.1015625, 1.046875, 0.5)) = 1.65625.
  const auto once_b = run<normkit::pytorch, float, bf16, bf16>(x, g.data(), b.data(), 1, 4, eps);
  const auto twice_b = run<normkit::t5, float, bf16, bf16>(x, g.data(), b.data(), 1, 4, eps);
  for (std::size_t i = 0; i < 4; ++i) {
    const double mid = normkit::to_float(bf16(x[i]));  // bf16(1.1f) = 1.1015625
    EXPECT_TRUE(stores(once_b[i], static_cast<float>(std::fma(x[i], 1.046875, 0.5)))) << "i=" << i << on;
    EXPECT_TRUE(stores(twice_b[i], static_cast<float>(std::fma(mid, 1.046875, 0.5)))) << "i=" << i << on;
  }
  EXPECT_EQ(normkit::to_float(once_b[1]), 1.6484375f) << on;
  EXPECT_EQ(normkit::to_float(twice_b[1]), 1.65625f) << on;
  EXPECT_EQ(normkit::to_float(once_b[0]), 0.5f) << on;
  // The fma rounds once: a kernel computing bf16(round(n * g) + b) differs where the fp32
  // product is inexact; with Out = float the value is the fma's.
  const auto once_f = run<normkit::pytorch, float, bf16, float>(x, g.data(), b.data(), 1, 4, eps);
  EXPECT_EQ(bits(once_f[1]), bits(std::fma(1.1f, 1.046875f, 0.5f))) << on;
  // With beta = -0.5 the sum drops a binade, so the product's rounding error would survive a
  // separate multiply and add: the fma's single rounding gives other bits.
  const std::vector<bf16> bm(4, bf16(-0.5f));
  const float fused = std::fma(1.1f, 1.046875f, -0.5f);
  ASSERT_NE(bits(fused), bits(f32_add(f32_mul(1.1f, 1.046875f), -0.5f))) << "premise: the fma is visible";
  const auto fused_f = run<normkit::pytorch, float, bf16, float>(x, g.data(), bm.data(), 1, 4, eps);
  EXPECT_EQ(bits(fused_f[1]), bits(fused)) << on;
}

// ---- Cancellation ----

// The one-pass textbook formula in fp32, to show what the contract's shifted two-pass avoids.
float naive_variance(const float* x, std::size_t cols) {
  float s = 0.0f, s2 = 0.0f;
  for (std::size_t i = 0; i < cols; ++i) {
    s += x[i];
    s2 += x[i] * x[i];
  }
  const float mean = s / static_cast<float>(cols);
  return s2 / static_cast<float>(cols) - mean * mean;
}

TEST_P(LayerNorm, KeepsAccuracyUnderCancellation) {
  NORMKIT_USE_ISA(GetParam());
  rng r(10000);
  const std::size_t rows = 4, cols = 1024;
  // x = 1e4 + 1e-2 N(0,1): the fp32 spacing at 1e4 is 2^-10, so each row holds ~20 distinct
  // values 1e-3 apart; the oracle works on the same rounded inputs.
  const auto x = normal_vec<float>(r, rows * cols, 1e-2f, 1e4f);
  const auto y = run<normkit::pytorch, float, float, float>(x, nullptr, nullptr, rows, cols, 1e-12f);
  std::vector<double> o(cols);
  double max_err = 0;
  ulp_histogram h;
  for (std::size_t row = 0; row < rows; ++row) {
    const float* xr = x.data() + row * cols;
    normkit::oracle::layer_norm_row<normkit::pytorch>(
        xr, static_cast<const float*>(nullptr), static_cast<const float*>(nullptr), o.data(), cols, 1e-12f);
    for (std::size_t i = 0; i < cols; ++i) {
      max_err = std::max(max_err, std::fabs(normkit::to_float(y[row * cols + i]) - o[i]));
      h.add(ulp_distance(y[row * cols + i], o[i]));
    }
    // The naive formula's variance is off by orders of magnitude (true variance ~1e-4).
    double m = 0, v = 0;
    for (std::size_t i = 0; i < cols; ++i)
      m += xr[i];
    m /= static_cast<double>(cols);
    for (std::size_t i = 0; i < cols; ++i)
      v += (xr[i] - m) * (xr[i] - m);
    v /= static_cast<double>(cols);
    const float naive = naive_variance(xr, cols);
    std::printf("[%s] layer_norm mean 1e4 spread 1e-2: variance %.3g, naive E[x^2]-E[x]^2 %.6g\n",
                isa_name().c_str(), v, static_cast<double>(naive));
    EXPECT_GT(std::fabs(naive - v), 100 * v) << "the naive formula should fail on this row";
  }
  std::printf("[%s] layer_norm mean 1e4 spread 1e-2 vs fp64 oracle: max abs error %.3g, %s\n",
              isa_name().c_str(), max_err, h.str().c_str());
  EXPECT_LT(max_err, 1e-5);

  // [40000, 40001, 40002, 40003]: K = 40000, d = [0,1,2,3], m = 1.5, c = [-1.5,-0.5,0.5,1.5],
  // var = 1.25: all exact, so the bits follow from inv = 1 / sqrt(1.25 + eps).
  const std::vector<float> q = {40000.0f, 40001.0f, 40002.0f, 40003.0f};
  for (float eps : {0.0f, 1e-5f}) {
    const float inv = f32_div(1.0f, f32_sqrt(f32_add(1.25f, eps)));
    const auto yq = run<normkit::pytorch, float, float, float>(q, nullptr, nullptr, 1, 4, eps);
    const auto yb = run<normkit::pytorch, float, float, bf16>(q, nullptr, nullptr, 1, 4, eps);
    const float c[4] = {-1.5f, -0.5f, 0.5f, 1.5f};
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_TRUE(stores(yq[i], f32_mul(c[i], inv))) << "i=" << i << " eps=" << eps;
      EXPECT_TRUE(stores(yb[i], f32_mul(c[i], inv))) << "i=" << i << " eps=" << eps;
    }
  }
  const float naive_q = naive_variance(q.data(), 4);
  std::printf("[%s] layer_norm [40000..40003]: variance 1.25, naive E[x^2]-E[x]^2 %.6g\n", isa_name().c_str(),
              static_cast<double>(naive_q));
  EXPECT_GT(std::fabs(naive_q - 1.25f), 1.0f) << "the naive formula should fail on this row";
}

// A constant row has c = 0, so y = fma(0 * inv, g, b) = b exactly (eps > 0), whatever the
// constant; eps = 0 gives 0 * Inf = NaN.
template <class Policy, class In, class W, class Out>
void check_constant_rows(rng& r) {
  const std::size_t cols = 75;
  const auto g = uniform_vec<W>(r, cols, -2.0f, 2.0f);
  const auto b = uniform_vec<W>(r, cols, -3.0f, 3.0f);
  const std::string what =
      std::string(type_name<In>()) + "," + type_name<W>() + "->" + type_name<Out>() + " on " + isa_name();
  const float big = std::is_same<In, fp16>::value ? 6e4f : 3e38f;
  for (float c : {7.3f, -1.0f, 0.0f, big, -big, 1e-7f}) {
    const std::vector<In> x(2 * cols, as<In>(c));
    const auto y = run<Policy, In, W, Out>(x, g.data(), b.data(), 2, cols, 1e-5f);
    for (std::size_t i = 0; i < 2 * cols; ++i)
      ASSERT_TRUE(stores(y[i], normkit::to_float(b[i % cols]))) << what << " constant " << c << " i=" << i;
    const auto yn = run<Policy, In, W, Out>(x, g.data(), b.data(), 2, cols, 0.0f);
    for (std::size_t i = 0; i < 2 * cols; ++i)
      ASSERT_EQ(bits(yn[i]), format<Out>::nan) << what << " constant " << c << " eps=0 i=" << i;
  }
}

TEST_P(LayerNorm, ConstantRowGivesBetaExactly) {
  NORMKIT_USE_ISA(GetParam());
  rng r(3);
  check_constant_rows<normkit::pytorch, float, float, float>(r);
  check_constant_rows<normkit::pytorch, bf16, bf16, bf16>(r);
  check_constant_rows<normkit::pytorch, bf16, float, bf16>(r);
  check_constant_rows<normkit::pytorch, fp16, fp16, fp16>(r);
  check_constant_rows<normkit::round_twice, bf16, bf16, float>(r);
  check_constant_rows<normkit::gemma, float, bf16, fp16>(r);
  check_constant_rows<normkit::gemma3n, fp16, float, bf16>(r);
}

// ---- Accuracy against the fp64 oracle ----

// Well-conditioned rows (N(mean, 1), gains U(0.5, 1.5), no bias, so no cancellation in y).
// The ulp distribution is reported as measured; the assertion is the budget of slack() above.
template <class Policy, class In, class W, class Out>
void check_oracle(rng& r, const char* policy, float mean) {
  ulp_histogram h;
  double worst = 0;
  for (std::size_t cols : {64u, 300u, 4096u}) {
    const std::size_t rows = 4096 / cols * 4;
    const auto x = normal_vec<In>(r, rows * cols, 1.0f, mean);
    const auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f);
    const auto y = run<Policy, In, W, Out>(x, g.data(), nullptr, rows, cols, 1e-5f);
    std::vector<double> o(cols);
    for (std::size_t row = 0; row < rows; ++row) {
      normkit::oracle::layer_norm_row<Policy>(x.data() + row * cols, g.data(), static_cast<const W*>(nullptr),
                                              o.data(), cols, 1e-5f);
      double top = 0;
      for (double v : o)
        top = std::max(top, std::fabs(v));
      for (std::size_t i = 0; i < cols; ++i) {
        h.add(ulp_distance(y[row * cols + i], o[i]));
        worst = std::max(worst, slack(y[row * cols + i], o[i], top));
      }
    }
  }
  const std::string name = std::string(policy) + " " + type_name<In>() + "," + type_name<W>() + "->" +
                           type_name<Out>() + " mean " + std::to_string(static_cast<int>(mean));
  std::printf("[%s] layer_norm %-34s vs fp64 oracle: %s; slack %.2f\n", isa_name().c_str(), name.c_str(),
              h.str().c_str(), worst);
  ::testing::Test::RecordProperty("ulps " + name, h.str());
  EXPECT_LE(worst, slack_budget) << name << ": " << h.str();
}

TEST_P(LayerNorm, StaysWithinTheErrorBudgetOfTheOracle) {
  NORMKIT_USE_ISA(GetParam());
  rng r(65);
  for (float mean : {0.0f, 3.0f}) {
    check_oracle<normkit::pytorch, float, float, float>(r, "pytorch", mean);
    check_oracle<normkit::pytorch, bf16, float, float>(r, "pytorch", mean);
    check_oracle<normkit::pytorch, bf16, bf16, bf16>(r, "pytorch", mean);
    check_oracle<normkit::pytorch, fp16, fp16, fp16>(r, "pytorch", mean);
    check_oracle<normkit::pytorch, float, float, bf16>(r, "pytorch", mean);
    check_oracle<normkit::gemma3n, bf16, bf16, fp16>(r, "gemma3n", mean);
  }
}

// ---- Overflow ----

template <class In, class Out>
void check_overflow_row(const std::vector<In>& x, const std::string& what) {
  const std::size_t cols = x.size();
  double m = 0, v = 0;
  for (In e : x)
    m += normkit::to_float(e);
  m /= static_cast<double>(cols);
  for (In e : x)
    v += (normkit::to_float(e) - m) * (normkit::to_float(e) - m);
  ASSERT_GT(v, format<float>::max) << what << ": premise, the fp32 sum of squares overflows";
  const float eps = 1e-6f;
  const auto y = run<normkit::pytorch, In, In, Out>(x, nullptr, nullptr, 1, cols, eps);
  std::vector<double> o(cols);
  normkit::oracle::layer_norm_row<normkit::pytorch>(x.data(), static_cast<const In*>(nullptr),
                                                    static_cast<const In*>(nullptr), o.data(), cols, eps);
  ulp_histogram h;
  double sum = 0, sum_sq = 0, top = 0, worst = 0;
  for (double e : o)
    top = std::max(top, std::fabs(e));
  for (std::size_t i = 0; i < cols; ++i) {
    const double e = normkit::to_float(y[i]);
    ASSERT_TRUE(std::isfinite(e)) << what << " i=" << i;
    h.add(ulp_distance(y[i], o[i]));
    worst = std::max(worst, slack(y[i], o[i], top));
    sum += e;
    sum_sq += e * e;
  }
  const std::string name = what + " " + type_name<In>() + "->" + type_name<Out>();
  std::printf("[%s] layer_norm overflow row %-28s vs fp64 oracle: %s; slack %.2f\n", isa_name().c_str(),
              name.c_str(), h.str().c_str(), worst);
  EXPECT_LE(worst, slack_budget) << name << ": " << h.str();
  // Without gain and bias the outputs have mean 0 and RMS 1 (eps is negligible).
  const double tol = std::is_same<Out, float>::value ? 1e-6 : std::is_same<Out, bf16>::value ? 4e-3 : 5e-4;
  EXPECT_NEAR(sum / static_cast<double>(cols), 0.0, tol) << name;
  EXPECT_NEAR(std::sqrt(sum_sq / static_cast<double>(cols)), 1.0, tol) << name;
}

template <class In>
std::vector<In> mixed_row(rng& r, std::size_t cols, float big) {
  std::vector<In> x(cols);
  for (std::size_t i = 0; i < cols; ++i)
    x[i] = as<In>(i % 2 ? r.normal() : big * r.normal());
  return x;
}

TEST_P(LayerNorm, NormalizesRowsWhoseSquaresOverflow) {
  NORMKIT_USE_ISA(GetParam());
  rng r(1030);
  for (std::size_t cols : {5u, 64u, 257u}) {
    const auto b = mixed_row<bf16>(r, cols, 1e20f);
    check_overflow_row<bf16, bf16>(b, "bf16 ~1e20 cols=" + std::to_string(cols));
    check_overflow_row<bf16, float>(b, "bf16 ~1e20 cols=" + std::to_string(cols));
    check_overflow_row<bf16, fp16>(b, "bf16 ~1e20 cols=" + std::to_string(cols));
    const auto f = mixed_row<float>(r, cols, 1e30f);
    check_overflow_row<float, float>(f, "f32 ~1e30 cols=" + std::to_string(cols));
    check_overflow_row<float, bf16>(f, "f32 ~1e30 cols=" + std::to_string(cols));
  }
  std::vector<float> alt(64);
  for (std::size_t i = 0; i < alt.size(); ++i)
    alt[i] = i % 2 ? 1.5e19f : -1.5e19f;
  check_overflow_row<float, float>(alt, "f32 +-1.5e19");  // every square finite, the sum is not
  // x_i - x_0 itself overflows (6e38 > FLT_MAX) before any square is taken.
  check_overflow_row<float, float>({-3e38f, 3e38f, 0.75f, -1.5f, 3.0f, 1.0f, -0.5f, 1e38f}, "f32 +-3e38");
}

// ---- Non-finite inputs, gains and biases ----

template <class T>
T special_value(int k) {  // qNaN, negative NaN with payload, signalling NaN, +Inf, -Inf
  const std::uint32_t f[5] = {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7f800000u, 0xff800000u};
  const std::uint16_t b[5] = {0x7fc0, 0xffc1, 0x7f81, 0x7f80, 0xff80};
  const std::uint16_t h[5] = {0x7e00, 0xfe01, 0x7c01, 0x7c00, 0xfc00};
  if constexpr (std::is_same<T, float>::value)
    return normkit::detail::bits_float(f[k]);
  else if constexpr (std::is_same<T, bf16>::value)
    return bf16::from_bits(b[k]);
  else
    return fp16::from_bits(h[k]);
}

template <class Policy, class In, class W, class Out>
void check_non_finite_rows(rng& r) {
  const std::size_t rows = 5, cols = 130;
  const auto x = normal_vec<In>(r, rows * cols, 1.0f, 2.0f);
  const auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f);
  const auto b = uniform_vec<W>(r, cols, -0.5f, 0.5f);
  std::vector<Out> alone(rows * cols);
  for (std::size_t row = 0; row < rows; ++row)
    ASSERT_EQ(normkit::layer_norm<Policy>(x.data() + row * cols, g.data(), b.data(),
                                          alone.data() + row * cols, 1, cols, 1e-6f),
              status::ok);
  const In huge = as<In>(std::is_same<In, fp16>::value ? 6e4f : 1e30f);
  const std::string types = std::string(type_name<In>()) + "," + type_name<W>() + "->" + type_name<Out>();
  for (int k = 0; k < 5; ++k) {
    for (std::size_t pos : {0u, 1u, 63u, 64u, 127u, 129u}) {
      auto xb = x;
      xb[1 * cols + pos] = special_value<In>(k);  // pos 0 is the shift K itself
      xb[1 * cols + (pos + 7) % cols] = huge;
      xb[3 * cols + (cols - 1 - pos)] = special_value<In>((k + 1) % 5);
      const auto y = run<Policy, In, W, Out>(xb, g.data(), b.data(), rows, cols, 1e-6f);
      const std::string what =
          types + " special " + std::to_string(k) + " at " + std::to_string(pos) + " on " + isa_name();
      for (std::size_t i = 0; i < cols; ++i) {
        ASSERT_EQ(bits(y[1 * cols + i]), format<Out>::nan) << what << " row 1 col " << i;
        ASSERT_EQ(bits(y[3 * cols + i]), format<Out>::nan) << what << " row 3 col " << i;
      }
      for (std::size_t row : {0u, 2u, 4u})
        ASSERT_TRUE(same_bits(y.data() + row * cols, alone.data() + row * cols, cols,
                              what + " row " + std::to_string(row)));
    }
  }
}

TEST_P(LayerNorm, NonFiniteInputGivesCanonicalNanInItsRowOnly) {
  NORMKIT_USE_ISA(GetParam());
  rng r(17);
  check_non_finite_rows<normkit::pytorch, float, float, float>(r);
  check_non_finite_rows<normkit::pytorch, bf16, bf16, bf16>(r);
  check_non_finite_rows<normkit::round_twice, fp16, fp16, fp16>(r);
  check_non_finite_rows<normkit::gemma, bf16, float, fp16>(r);
}

// NaN or Inf in gamma or beta reaches only its column: NaN -> canonical NaN, Inf -> +-Inf
// (or NaN where it meets an Inf of the other sign or a zero).
template <class Policy, class In, class W, class Out>
void check_non_finite_params(rng& r) {
  const std::size_t rows = 3, cols = gain_scan_cols;
  const auto x = normal_vec<In>(r, rows * cols);
  const std::string types =
      std::string(type_name<In>()) + "," + type_name<W>() + "->" + type_name<Out>() + " on " + isa_name();
  for (const std::size_t j : gain_scan_positions) {
    auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f);
    auto b = uniform_vec<W>(r, cols, -0.5f, 0.5f);
    g[j] = as<W>(1.0f);
    b[j] = as<W>(0.0f);
    const auto ref = run<Policy, In, W, Out>(x, g.data(), b.data(), rows, cols, 1e-6f);
    for (int which = 0; which < 2; ++which) {
      for (int k = 0; k < 5; ++k) {
        auto gg = g, bb = b;
        (which == 0 ? gg : bb)[j] = special_value<W>(k);
        const auto y = run<Policy, In, W, Out>(x, gg.data(), bb.data(), rows, cols, 1e-6f);
        const std::string what = types + (which == 0 ? " gamma" : " beta") + " special " + std::to_string(k) +
                                 " at " + std::to_string(j);
        for (std::size_t row = 0; row < rows; ++row) {
          for (std::size_t i = 0; i < cols; ++i) {
            const std::size_t at = row * cols + i;
            if (i != j) {
              ASSERT_EQ(bits(y[at]), bits(ref[at])) << what << " row " << row << " col " << i;
            } else if (k < 3) {
              ASSERT_EQ(bits(y[at]), format<Out>::nan) << what << " row " << row;
            } else {
              // gamma +-Inf: n * Inf + 0 = +-Inf with the sign of n * gamma; beta +-Inf: +-Inf.
              const double n_sign = normkit::to_float(ref[at]);  // gamma_j = 1, beta_j = 0: Out(n)
              const double want = which == 1 ? (k == 3 ? HUGE_VAL : -HUGE_VAL)
                                             : ((n_sign > 0) == (k == 3) ? HUGE_VAL : -HUGE_VAL);
              ASSERT_NE(n_sign, 0.0);
              ASSERT_EQ(normkit::to_float(y[at]), want) << what << " row " << row;
            }
          }
        }
      }
    }
  }
}

TEST_P(LayerNorm, NonFiniteGainOrBiasAffectsOnlyItsColumn) {
  NORMKIT_USE_ISA(GetParam());
  rng r(18);
  check_non_finite_params<normkit::pytorch, float, float, float>(r);
  check_non_finite_params<normkit::pytorch, bf16, bf16, bf16>(r);
  check_non_finite_params<normkit::round_twice, fp16, bf16, float>(r);
}

// ---- Degenerate rows ----

TEST_P(LayerNorm, AllZeroRowsGiveBetaOrNanWithoutEps) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t rows = 3, cols = 100;
  rng r(5);
  const auto g = uniform_vec<bf16>(r, cols, 0.5f, 1.5f);
  const auto b = uniform_vec<bf16>(r, cols, -1.0f, 1.0f);
  const std::vector<bf16> x(rows * cols, bf16(0.0f));
  const auto y = run<normkit::pytorch, bf16, bf16, bf16>(x, g.data(), b.data(), rows, cols, 1e-5f);
  const auto y0 = run<normkit::pytorch, bf16, bf16, bf16>(x, g.data(), nullptr, rows, cols, 1e-5f);
  const auto yd = run<normkit::gemma3n, bf16, bf16, float>(x, g.data(), nullptr, rows, cols, 1e-5f);
  const auto yn = run<normkit::pytorch, bf16, bf16, fp16>(x, g.data(), b.data(), rows, cols, 0.0f);
  const auto ydn = run<normkit::gemma3n, bf16, bf16, float>(x, nullptr, nullptr, rows, cols, 0.0f);
  for (std::size_t i = 0; i < rows * cols; ++i) {
    ASSERT_EQ(bits(y[i]), bits(b[i % cols])) << "i=" << i << " on " << isa_name();
    ASSERT_EQ(bits(y0[i]), 0u) << "no bias: +0, i=" << i << " on " << isa_name();
    ASSERT_EQ(bits(yd[i]), 0u) << "divide: 0 / sqrt(eps) = +0, i=" << i << " on " << isa_name();
    ASSERT_EQ(bits(yn[i]), format<fp16>::nan) << "eps=0: 0 * Inf, i=" << i << " on " << isa_name();
    ASSERT_EQ(bits(ydn[i]), format<float>::nan) << "eps=0, divide: 0 / 0, i=" << i << " on " << isa_name();
  }
}

TEST_P(LayerNorm, SingleColumn) {
  NORMKIT_USE_ISA(GetParam());
  // One element: c = x - x = 0, so y = beta (eps > 0), +0 without a bias, NaN with eps = 0;
  // NaN / Inf still give NaN.
  const std::vector<float> xs = {3.0f, -7.5f, 1e-30f, 3e38f, -3e38f, 0.0f, 65504.0f};
  const std::vector<float> beta = {0.25f};
  const std::vector<float> gamma = {1.5f};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const std::vector<float> x = {xs[i]};
    const auto y = run<normkit::pytorch, float, float, float>(x, gamma.data(), beta.data(), 1, 1, 1e-6f);
    const auto yb = run<normkit::pytorch, float, float, bf16>(x, gamma.data(), beta.data(), 1, 1, 1e-6f);
    const auto y0 = run<normkit::pytorch, float, float, float>(x, gamma.data(), nullptr, 1, 1, 1e-6f);
    const auto yn = run<normkit::pytorch, float, float, float>(x, gamma.data(), beta.data(), 1, 1, 0.0f);
    EXPECT_EQ(bits(y[0]), bits(0.25f)) << "x=" << xs[i] << " on " << isa_name();
    EXPECT_EQ(bits(yb[0]), bits(bf16(0.25f))) << "x=" << xs[i] << " on " << isa_name();
    EXPECT_EQ(bits(y0[0]), 0u) << "x=" << xs[i] << " on " << isa_name();
    EXPECT_EQ(bits(yn[0]), format<float>::nan) << "x=" << xs[i] << " on " << isa_name();
  }
  for (int k = 0; k < 5; ++k) {
    const std::vector<bf16> x = {special_value<bf16>(k)};
    const std::vector<bf16> b1 = {bf16(0.25f)};
    const auto y = run<normkit::pytorch, bf16, bf16, bf16>(x, nullptr, b1.data(), 1, 1, 1e-6f);
    EXPECT_EQ(bits(y[0]), format<bf16>::nan) << "special " << k << " on " << isa_name();
  }
}

// Subnormal inputs are used as they are (no FTZ/DAZ): outputs are the contract's values.
TEST_P(LayerNorm, SubnormalInputsAreNotFlushed) {
  NORMKIT_USE_ISA(GetParam());
  const std::string on = " on " + isa_name();
  // fp32 multiples of 2^-149: d, m and c are exact multiples of 2^-149; the squares (< 2^-280)
  // round to 0, so var = 0 and inv = 1 / sqrt(eps). With eps = 2^-20, n = c * 2^10 exactly.
  {
    std::vector<float> x;
    for (double k : {1.0, 2.0, 3.0, 6.0, -5.0, 1.0, 0.0, 8.0})
      x.push_back(static_cast<float>(std::ldexp(k, -149)));
    for (float eps : {0x1p-20f, 1e-6f}) {
      const auto n = normalized_by_hand(x, eps);
      const auto y = run<normkit::pytorch, float, float, float>(x, nullptr, nullptr, 1, x.size(), eps);
      for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_TRUE(stores(y[i], n[i])) << "f32 i=" << i << " eps=" << eps << on;
        if (n[i] != 0.0f) {
          EXPECT_NE(normkit::to_float(y[i]), 0.0f) << "flushed: i=" << i << on;
        }
      }
    }
  }
  // fp32 row with a normal spread and subnormal elements, so inv = 1 / sqrt(3.625 / 16) is not a
  // power of two and the subnormal outputs s * inv are rounded on the subnormal grid. Element i
  // and i + 8 cancel in the canonical order's first fold (w = 8 for 16 elements), so every
  // partial sum is exact; x_0 = 0 makes K = 0 and c = x.
  {
    const float s1 = static_cast<float>(std::ldexp(3.0, -140)),
                s2 = static_cast<float>(std::ldexp(-1.0, -149)),
                s3 = static_cast<float>(std::ldexp(1023.0, -136));
    const std::vector<float> half = {0.0f, 1.0f, 0.75f, s1, s2, 0.5f, s3, 0.0f};
    std::vector<float> x = half;
    for (float v : half)
      x.push_back(-v);
    const float inv = f32_div(1.0f, f32_sqrt(f32_div(3.625f, 16.0f)));
    const auto y = run<normkit::pytorch, float, float, float>(x, nullptr, nullptr, 1, x.size(), 0.0f);
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_TRUE(stores(y[i], f32_mul(x[i], inv))) << "f32 mixed i=" << i << on;
      if (x[i] != 0.0f) {
        EXPECT_NE(normkit::to_float(y[i]), 0.0f) << "flushed: i=" << i << on;
      }
    }
  }
  // fp16 subnormals k * 2^-24: normal in fp32, so ordinary outputs; the sums are exact.
  {
    std::vector<fp16> x;
    std::vector<float> xf;
    for (std::uint16_t b : std::vector<std::uint16_t>{1, 2, 3, 1023, 0x8005, 512, 0x8001, 7}) {
      x.push_back(fp16::from_bits(b));
      xf.push_back(normkit::to_float(x.back()));
    }
    const auto n = normalized_by_hand(xf, 0.0f);
    const auto y = run<normkit::pytorch, fp16, fp16, float>(x, nullptr, nullptr, 1, x.size(), 0.0f);
    const auto yh = run<normkit::pytorch, fp16, fp16, fp16>(x, nullptr, nullptr, 1, x.size(), 0.0f);
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_TRUE(stores(y[i], n[i])) << "fp16 i=" << i << on;
      EXPECT_TRUE(stores(yh[i], n[i])) << "fp16 i=" << i << on;
    }
  }
}

// ---- Batch invariance ----

template <class Policy, class In, class W, class Out>
void check_batch_invariance(rng& r, std::size_t cols) {
  const auto row = normal_vec<In>(r, cols, 2.0f, 5.0f);
  const auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f);
  const auto b = uniform_vec<W>(r, cols, -0.5f, 0.5f);
  const auto alone = run<Policy, In, W, Out>(row, g.data(), b.data(), 1, cols, 1e-5f);
  const float big = std::is_same<In, fp16>::value ? 6e4f : 1e25f;
  auto neighbour = [&](std::size_t kind) {
    switch (kind % 5) {
      case 0:
        return normal_vec<In>(r, cols, 1e-3f);
      case 1:
        return normal_vec<In>(r, cols, big);
      case 2: {
        auto v = normal_vec<In>(r, cols);
        v[kind % cols] = special_value<In>(static_cast<int>(kind / 5 % 5));
        return v;
      }
      case 3:
        return std::vector<In>(cols, as<In>(1.0f));
      default:
        return normal_vec<In>(r, cols, 1.0f, 100.0f);
    }
  };
  const std::string types = std::string(type_name<In>()) + "," + type_name<W>() + "->" + type_name<Out>();
  for (std::size_t rows : {2u, 3u, 5u, 8u}) {
    for (std::size_t p = 0; p < rows; ++p) {
      const std::size_t xs = cols + (rows % 2) * 3, ys = cols + (p % 2), off = p % 2;
      std::vector<In> x(off + rows * xs);
      for (std::size_t k = 0; k < rows; ++k) {
        const auto v = k == p ? row : neighbour(k + rows);
        std::copy(v.begin(), v.end(), x.begin() + static_cast<std::ptrdiff_t>(off + k * xs));
      }
      std::vector<Out> y(off + rows * ys);
      ASSERT_EQ(normkit::layer_norm<Policy>(x.data() + off, g.data(), b.data(), y.data() + off, rows, cols,
                                            1e-5f, xs, ys),
                status::ok);
      ASSERT_TRUE(same_bits(
          y.data() + off + p * ys, alone.data(), cols,
          types + " row " + std::to_string(p) + " of " + std::to_string(rows) + " on " + isa_name()));
    }
  }
}

TEST_P(LayerNorm, RowBitsDoNotDependOnTheBatch) {
  NORMKIT_USE_ISA(GetParam());
  rng r(12);
  for (std::size_t cols : {1u, 13u, 64u, 200u}) {
    check_batch_invariance<normkit::pytorch, bf16, bf16, bf16>(r, cols);
    check_batch_invariance<normkit::round_twice, float, bf16, float>(r, cols);
    check_batch_invariance<normkit::gemma, fp16, float, fp16>(r, cols);
  }
}

// ---- An outlier x_0: the shift refinement ----

constexpr float flt_max = static_cast<float>(format<float>::max);
// contract: after the statistics (and after the rescale, decided on them, when it is taken), if
// m * m > 16 * (S / d) (S = csum(c_i^2)): K = K + m and d_i, m, c_i, S once more.

// The contract computed here, independently of normkit: one fp32 step at a time (numerics.hpp),
// std::fma where the contract has an fma, 64 partials folded in halves, the rescale rule (s / d +
// eps not finite) and the refinement. Policy pytorch (round once, multiply), a gain, no bias:
// returns y_i = n_i * g_i, the fp32 values Out must store. refine = false is the contract as it
// was before the refinement (K = f(x_0) always); *refined reports whether the rule fired.
std::vector<float> contract_by_hand(const std::vector<float>& x, const std::vector<float>& g, float eps,
                                    bool refine, bool* refined = nullptr) {
  const std::size_t n = x.size();
  const float d = static_cast<float>(n);
  auto csum = [](const std::vector<float>& t, bool squares) {
    float p[64] = {};
    for (std::size_t i = 0; i < t.size(); ++i)
      p[i % 64] = squares ? std::fma(t[i], t[i], p[i % 64]) : f32_add(p[i % 64], t[i]);
    for (std::size_t w = 32; w >= 1; w /= 2)
      for (std::size_t k = 0; k < w; ++k)
        p[k] = f32_add(p[k], p[k + w]);
    return p[0];
  };
  float scale = 1.0f, e = eps, k = 0.0f, m = 0.0f, s = 0.0f;
  std::vector<float> c(n), dv(n);
  auto moments = [&] {
    for (std::size_t i = 0; i < n; ++i)
      dv[i] = std::fma(x[i], scale, -k);
    m = f32_div(csum(dv, false), d);
    for (std::size_t i = 0; i < n; ++i)
      c[i] = f32_add(dv[i], -m);
    s = csum(c, true);
  };
  k = x[0];
  moments();
  if (!(f32_add(f32_div(s, d), e) <= format<float>::max)) {  // the rescale, decided first
    float top = 0.0f;
    for (float v : x)
      top = std::max(top, std::fabs(v));
    int ex = 0;
    (void)std::frexp(top, &ex);
    scale = std::ldexp(1.0f, -ex);
    e = f32_mul(f32_mul(eps, scale), scale);
    k = f32_mul(x[0], scale);
    moments();
  }
  const bool fired = refine && f32_mul(m, m) > f32_mul(16.0f, f32_div(s, d));  // then the refinement
  if (fired) {
    k = f32_add(k, m);
    moments();
  }
  if (refined)
    *refined = fired;
  const float inv = f32_div(1.0f, f32_sqrt(f32_add(f32_div(s, d), e)));
  std::vector<float> y(n);
  for (std::size_t i = 0; i < n; ++i)
    y[i] = f32_mul(f32_mul(c[i], inv), g[i]);
  return y;
}

// Rows whose x_0 lies within 4 sigma keep exactly the bits of the unrefined contract; rows with
// an outlier x_0 (a sigma multiple beyond 4, or 1e2 ... 1e30 in a N(0, 1) row; 1e30 also takes
// the overflow rescale, refined after it) get the refined contract's bits; so do rows with a
// large mean and small spread (never refined) and eps = FLT_MAX rows (rescaled because
// s / d + eps overflows). All rows of one width go through one call (the kernels group rows).
template <class In>
void check_refinement_bits(rng& r, std::size_t cols) {
  struct row {
    std::string what;
    std::vector<float> x;
    float eps;
    int expect_refined;  // 1 yes, 0 no, -1 either (the rule decides; the bits are still checked)
  };
  std::vector<row> rows;
  auto sample = [&](float mean, float sigma) {
    std::vector<float> v(cols);
    for (float& e : v)
      e = normkit::to_float(as<In>(mean + sigma * r.normal()));
    return v;
  };
  auto with_x0 = [&](std::vector<float> v, float x0) {
    v[0] = normkit::to_float(as<In>(x0));
    return v;
  };
  for (float a : {0.0f, 2.0f, 3.5f, 6.0f, 10.0f}) {
    // x_0 at a sigma of the rest of the row (mean and sigma in double): the rule sees the whole
    // row, so only a <= 3.5 and a >= 6 are certain for every width used here.
    std::vector<float> v = sample(0.0f, 1.0f);
    double mean = 0, var = 0;
    for (std::size_t i = 1; i < cols; ++i)
      mean += v[i];
    mean /= static_cast<double>(cols - 1);
    for (std::size_t i = 1; i < cols; ++i)
      var += (v[i] - mean) * (v[i] - mean);
    const double sigma = std::sqrt(var / static_cast<double>(cols - 1));
    rows.push_back({"x_0 at " + std::to_string(a) + " sigma",
                    with_x0(v, static_cast<float>(mean + a * sigma)), 1e-5f, a <= 3.5f ? 0 : 1});
  }
  for (float big : {1e2f, 1e4f, 1e8f, 1e16f, 1e30f})
    rows.push_back({"x_0 = " + std::to_string(big), with_x0(sample(0.0f, 1.0f), big), 1e-5f, 1});
  rows.push_back({"x_0 = -1e8", with_x0(sample(0.0f, 1.0f), -1e8f), 1e-5f, 1});
  rows.push_back({"mean 1e4, spread 1e-2", sample(1e4f, 1e-2f), 1e-5f, 0});
  rows.push_back({"constant 7.3", std::vector<float>(cols, normkit::to_float(as<In>(7.3f))), 1e-5f, 0});
  rows.push_back({"1e16 N(0,1), eps FLT_MAX", sample(0.0f, 1e16f), flt_max, -1});
  rows.push_back({"x_0 = 1e30, eps FLT_MAX", with_x0(sample(0.0f, 1e16f), 1e30f), flt_max, -1});
  const auto gf = uniform_vec<float>(r, cols, 0.5f, 1.5f);
  std::vector<In> g(cols);
  std::vector<float> gw(cols);
  for (std::size_t i = 0; i < cols; ++i)
    g[i] = as<In>(gf[i]), gw[i] = normkit::to_float(g[i]);
  for (float eps : {1e-5f, flt_max}) {
    std::vector<In> x;
    std::vector<const row*> used;
    for (const row& rw : rows)
      if (rw.eps == eps) {
        for (float v : rw.x)
          x.push_back(as<In>(v));
        used.push_back(&rw);
      }
    const auto y = run<normkit::pytorch, In, In, In>(x, g.data(), nullptr, used.size(), cols, eps);
    for (std::size_t k = 0; k < used.size(); ++k) {
      const row& rw = *used[k];
      const std::string what = std::string(type_name<In>()) + " cols=" + std::to_string(cols) + " " +
                               rw.what + " on " + isa_name();
      bool refined = false;
      const auto with_rule = contract_by_hand(rw.x, gw, eps, true, &refined);
      if (rw.expect_refined >= 0) {
        EXPECT_EQ(refined, rw.expect_refined == 1)
            << what << ": premise, the rule " << (refined ? "fired" : "did not fire");
      }
      // Unrefined rows must keep the bits of the contract as it was; refined rows get the new
      // bits, which for outliers of 1e4 and 1e8 differ from the old ones (the premise that these
      // rows test the rule; beyond, x_i adds less than an fp32 ulp to c_i ~ mean either way).
      const auto unrefined = contract_by_hand(rw.x, gw, eps, false);
      const auto& want = refined ? with_rule : unrefined;
      if (refined && std::fabs(rw.x[0]) >= 1e4f && std::fabs(rw.x[0]) <= 1e8f) {
        std::size_t changed = 0;
        for (std::size_t i = 0; i < cols; ++i)
          changed += bits(with_rule[i]) != bits(unrefined[i]);
        EXPECT_GT(changed, 0u) << what << ": premise, the refinement changes some output";
      }
      for (std::size_t i = 0; i < cols; ++i)
        ASSERT_TRUE(stores(y[k * cols + i], want[i])) << what << " i=" << i;
    }
  }
}

TEST_P(LayerNorm, RefinesTheShiftOnlyForAnOutlierFirstElement) {
  NORMKIT_USE_ISA(GetParam());
  rng r(4242);
  for (std::size_t cols : {4096u, 300u, 77u}) {
    check_refinement_bits<float>(r, cols);
    check_refinement_bits<bf16>(r, cols);
  }
}

// The refinement makes column 0 as good a place for an outlier as any other. Rows of N(0, 1)
// (bounded by 3.47: rng::normal) with one outlier of 1e2 ... 1e30 (1e30: the squares overflow, the
// rescale runs first) at column 0 or at column cols / 3, sign alternating by row; gains
// U(0.5, 1.5), no bias (a bias adds cancellation in y); float and bf16 I/O; 4 rows per case;
// eps 1e-5. Error against the fp64 oracle, per element, beyond one ulp of Out, in units of the
// fp32 rounding of c_i = x_i - mean carried through the normalization:
//   slack_i = (|y_i - o_i| - ulp_Out(o_i))^+ / (2^-24 |g_i| (|x_i| + |mean| + 4) / root)
// (mean and root in double; the 4 bounds the shift K = x_0 of the other placement). Budget, for
// both placements: 8 + cols / 64. The outlier's canonical partial absorbs cols / 64 terms, each
// add rounding by up to 2^-24 |outlier|; that error reaches m, hence every c_i, divided by d:
// up to cols / 64 units when |mean| ~ |outlier| / d. 8 covers the other roundings.
// Measured, identical on scalar, AVX2, AVX-512 and NEON (qemu): max over the 4 rows of each
// case, column 0 / column cols / 3; "before" is column 0 without the refinement:
//
//   In    cols  outlier | max ulps of Out   | max slack       | budget | before: ulps, slack
//   f32   4096  1e2     |   4694 / 9798     |  2.05 / 0.90    |   72   | 3798867, 42.7
//   f32   4096  1e4     |   4745 / 3400     |  3.69 / 1.46    |   72   | 2479849, 2613
//   f32   4096  1e8     |     28 / 26       | 27.25 / 24.97   |   72   |   57460, 58400
//   f32   4096  1e16    |     19 / 13       | 18.45 / 12.20   |   72   |   31368, 31437
//   f32   4096  1e30    |     19 / 13       | 17.86 / 11.85   |   72   |   30168, 30230
//   f32    300  1e2     |   1065 / 76131    |  0.49 / 1.28    |  12.7  |  114754, 35.6
//   f32    300  1e4     |      4 / 3        |  2.92 / 2.06    |  12.7  |     514, 465
//   f32    300  1e8     |      6 / 4        |  5.49 / 3.18    |  12.7  |     360, 411
//   f32    300  1e16    |      1 / 1        |  0    / 0       |  12.7  |     587, 587
//   f32    300  1e30    |      2 / 2        |  0.84 / 0.82    |  12.7  |     114, 114
//   bf16  4096  1e2     |      0 / 0        |  0    / 0       |   72   |      24, 26.1
//   bf16  4096  1e4     |      1 / 1        |  0    / 0       |   72   |      17, 721
//   bf16  4096  1e8..30 |      0 / 0        |  0    / 0       |   72   |       0, 0
//   bf16   300  all     |      0 / 0        |  0    / 0       |  12.7  |  <= 1, 0
//
// Large raw ulps (f32, 1e2, 1e4) are outputs near 0 (x_i near the mean): conditioning, at both
// placements alike, which the slack measures away. bf16 outputs keep 8 significant bits, far
// coarser than these fp32 errors except next to a rounding midpoint or for outputs near 0.
double outlier_slack_budget(std::size_t cols) {
  return 8.0 + static_cast<double>(cols) / 64.0;
}

struct outlier_error {
  std::int64_t max_ulps = 0;
  double max_slack = 0;
};

template <class In>
outlier_error outlier_rows_error(rng& r, std::size_t cols, float big, std::size_t at) {
  const std::size_t rows = 4;
  auto x = normal_vec<In>(r, rows * cols);
  for (std::size_t row = 0; row < rows; ++row)
    x[row * cols + at] = as<In>(row % 2 ? -big : big);
  const auto g = uniform_vec<In>(r, cols, 0.5f, 1.5f);
  const auto y = run<normkit::pytorch, In, In, In>(x, g.data(), nullptr, rows, cols, 1e-5f);
  outlier_error err;
  std::vector<double> o(cols);
  for (std::size_t row = 0; row < rows; ++row) {
    const In* xr = x.data() + row * cols;
    normkit::oracle::layer_norm_row<normkit::pytorch>(xr, g.data(), static_cast<const In*>(nullptr), o.data(),
                                                      cols, 1e-5f);
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < cols; ++i)
      mean += normkit::to_float(xr[i]);
    mean /= static_cast<double>(cols);
    for (std::size_t i = 0; i < cols; ++i)
      var += (normkit::to_float(xr[i]) - mean) * (normkit::to_float(xr[i]) - mean);
    const double root = std::sqrt(var / static_cast<double>(cols) + 1e-5);
    for (std::size_t i = 0; i < cols; ++i) {
      const In yi = y[row * cols + i];
      err.max_ulps = std::max(err.max_ulps, ulp_distance(yi, o[i]));
      const double unit = 0x1p-24 * std::fabs(normkit::to_float(g[i])) *
                          (std::fabs(normkit::to_float(xr[i])) + std::fabs(mean) + 4.0) / root;
      const double over = std::fabs(normkit::to_float(yi) - o[i]) - ulp_of<In>(o[i]);
      err.max_slack = std::max(err.max_slack, over <= 0 ? 0.0 : over / unit);
    }
  }
  return err;
}

template <class In>
void check_outlier_placements(rng& r, std::size_t cols) {
  for (float big : {1e2f, 1e4f, 1e8f, 1e16f, 1e30f}) {
    const outlier_error first = outlier_rows_error<In>(r, cols, big, 0);
    const outlier_error other = outlier_rows_error<In>(r, cols, big, cols / 3);
    std::printf(
        "[%s] layer_norm %s cols=%zu outlier %g: column 0: max %lld ulps, slack %.2f; column %zu: max "
        "%lld ulps, slack %.2f\n",
        isa_name().c_str(), type_name<In>(), cols, static_cast<double>(big),
        static_cast<long long>(first.max_ulps), first.max_slack, cols / 3,
        static_cast<long long>(other.max_ulps), other.max_slack);
    const std::string what = std::string(type_name<In>()) + " cols=" + std::to_string(cols) + " outlier " +
                             std::to_string(big) + " on " + isa_name();
    EXPECT_LE(first.max_slack, outlier_slack_budget(cols)) << what << " at column 0";
    EXPECT_LE(other.max_slack, outlier_slack_budget(cols)) << what << " at column " << cols / 3;
  }
}

TEST_P(LayerNorm, OutlierAtColumnZeroIsAsAccurateAsElsewhere) {
  NORMKIT_USE_ISA(GetParam());
  rng r(10000);
  for (std::size_t cols : {4096u, 300u}) {
    check_outlier_placements<float>(r, cols);
    check_outlier_placements<bf16>(r, cols);
  }
}

// eps = FLT_MAX with |x| ~ 1e16: var + eps overflows in fp32 (true outputs ~5e-4, not 0); the
// row takes the rescale (contract: s / d + eps not finite) and matches the oracle.
TEST_P(LayerNorm, HugeEpsTakesTheRescaleInsteadOfGivingZeros) {
  NORMKIT_USE_ISA(GetParam());
  rng r(38);
  const float eps = flt_max;
  for (std::size_t cols : {4096u, 300u}) {
    const auto x = normal_vec<float>(r, 2 * cols, 1e16f);
    const auto g = uniform_vec<float>(r, cols, 0.5f, 1.5f);
    const auto y = run<normkit::pytorch, float, float, float>(x, g.data(), nullptr, 2, cols, eps);
    const auto yb = run<normkit::pytorch, float, float, bf16>(x, g.data(), nullptr, 2, cols, eps);
    std::vector<double> o(cols);
    ulp_histogram h, hb;
    double top = 0;
    for (std::size_t row = 0; row < 2; ++row) {
      normkit::oracle::layer_norm_row<normkit::pytorch>(
          x.data() + row * cols, g.data(), static_cast<const float*>(nullptr), o.data(), cols, eps);
      double worst = 0;
      for (std::size_t i = 0; i < cols; ++i)
        top = std::max(top, std::fabs(o[i]));
      for (std::size_t i = 0; i < cols; ++i) {
        h.add(ulp_distance(y[row * cols + i], o[i]));
        hb.add(ulp_distance(yb[row * cols + i], o[i]));
        worst = std::max({worst, slack(y[row * cols + i], o[i], top), slack(yb[row * cols + i], o[i], top)});
      }
      EXPECT_LE(worst, slack_budget) << "cols=" << cols << " row " << row << " on " << isa_name();
    }
    std::printf(
        "[%s] layer_norm eps=FLT_MAX, x ~ 1e16 N(0,1), cols=%zu: largest |oracle| %.3g; f32 %s; bf16 %s\n",
        isa_name().c_str(), cols, top, h.str().c_str(), hb.str().c_str());
    EXPECT_GT(top, 1e-4) << "premise: the true outputs are not 0";
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, LayerNorm, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
