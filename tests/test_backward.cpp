// SPDX-License-Identifier: MIT
// The backward pass and the forward variants that save statistics (docs/contract.md, "Saved
// statistics" and "Backward"):
//   - the gradients against an fp64 analytic gradient computed here from the same rounded inputs
//     (its own statistics, plain double sums) and against fp64 central finite differences of the
//     fp64 forward, within the bounds stated below;
//   - every ISA against the reference, bit for bit: dx, dgamma, dbeta, the block partials, with
//     strides, in place, special values and statistics no forward produces;
//   - dgamma / dbeta of one call equal to the partial / reduce pair over random splits of the rows;
//   - rms_norm_fwd / layer_norm_fwd: y equal to rms_norm / layer_norm, rstd and mean equal to
//     values computed here with independent fp32 steps;
//   - bad arguments: their status, nothing written.
#include "numerics.hpp"
#include "support.hpp"

#include <algorithm>    // std::shuffle, std::sort, std::max
#include <cmath>        // std::sqrt, std::fabs, std::fma, std::ldexp
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, PTRDIFF_MAX
#include <cstdio>       // std::printf
#include <cstring>      // std::memcmp
#include <limits>       // std::numeric_limits
#include <random>       // std::mt19937_64
#include <string>       // std::string
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

namespace {

using namespace normkit_test;
using normkit::isa;
using normkit::status;

constexpr double u32 = 0x1p-24;  // fp32 unit roundoff

// ---- An fp64 analytic gradient: its own statistics from x (plain double sums), the same rounded
// inputs. Also the per-element scale the error bound is stated in.
struct grad64 {
  std::vector<double> dx, scale, dgamma, dbeta, dgamma_abs, dbeta_abs;
};

template <class T, class W>
grad64 oracle_grad(bool centered, bool plus_one, const std::vector<T>& dy, const std::vector<T>& x,
                   const W* gamma, std::size_t rows, std::size_t cols, float eps) {
  grad64 g;
  g.dx.resize(rows * cols);
  g.scale.resize(rows * cols);
  g.dgamma.assign(cols, 0.0);
  g.dbeta.assign(cols, 0.0);
  g.dgamma_abs.assign(cols, 0.0);
  g.dbeta_abs.assign(cols, 0.0);
  const double d = static_cast<double>(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x.data() + r * cols;
    const T* dyr = dy.data() + r * cols;
    double mean = 0.0;
    if (centered) {
      for (std::size_t i = 0; i < cols; ++i)
        mean += normkit::to_float(xr[i]);
      mean /= d;
    }
    double var = 0.0;
    for (std::size_t i = 0; i < cols; ++i) {
      const double c = normkit::to_float(xr[i]) - mean;
      var += c * c;
    }
    const double rstd = 1.0 / std::sqrt(var / d + static_cast<double>(eps));
    std::vector<double> n(cols), t(cols);
    double a = 0.0, b = 0.0, a_abs = 0.0, b_abs = 0.0;
    for (std::size_t i = 0; i < cols; ++i) {
      n[i] = (normkit::to_float(xr[i]) - mean) * rstd;
      double gi = gamma ? static_cast<double>(normkit::to_float(gamma[i])) : 1.0;
      if (gamma && plus_one)
        gi += 1.0;
      t[i] = normkit::to_float(dyr[i]) * gi;
      a += t[i], b += t[i] * n[i];
      a_abs += std::fabs(t[i]), b_abs += std::fabs(t[i] * n[i]);
    }
    a = centered ? a / d : 0.0;
    b /= d;
    a_abs /= d;
    b_abs /= d;
    for (std::size_t i = 0; i < cols; ++i) {
      g.dx[r * cols + i] = rstd * (t[i] - a - n[i] * b);
      g.scale[r * cols + i] = rstd * (std::fabs(t[i]) + a_abs + (std::fabs(n[i]) + 1.0) * b_abs);
      const double dyi = normkit::to_float(dyr[i]);
      g.dgamma[i] += dyi * n[i];
      g.dbeta[i] += dyi;
      g.dgamma_abs[i] += std::fabs(dyi * n[i]);
      g.dbeta_abs[i] += std::fabs(dyi);
    }
  }
  return g;
}

// The stated bounds. dx: half an ulp of T at the exact value (the final rounding) plus
// (d/64 + 16) fp32 roundings of the row's scale rstd * (|t_i| + mean|t| + (|n_i| + 1) * mean|t n|):
// each canonical partial sums d/64 terms, the fold adds 6 levels, and the statistics, the
// re-centring and the output step a handful more. dgamma / dbeta: (rows in a block + tree levels +
// d/64 + 16) roundings of the sum of |terms| (the normalized values carry the statistics' error).
double half_ulp(double v, int digits) {
  if (v == 0.0)
    return 0.0;
  return std::ldexp(1.0, std::max(std::ilogb(v), -126) - digits);
}

template <class T>
int digits_of() {
  return format<T>::digits;
}

struct worst {
  double ratio = 0.0;
  void add(double err, double bound) {
    ratio = std::max(ratio, bound > 0 ? err / bound : (err > 0 ? 1e300 : 0.0));
  }
};

template <class Policy, class T, class W>
void check_against_oracle(bool centered, std::size_t rows, std::size_t cols, float eps, std::uint64_t seed,
                          bool shifted, bool with_gamma, worst& wdx, worst& wdg) {
  rng r(seed);
  const float mean = shifted ? 1000.0f : 0.0f;
  const std::vector<T> x = normal_vec<T>(r, rows * cols, 1.0f, mean);
  const std::vector<T> dy = normal_vec<T>(r, rows * cols);
  const bool plus_one = normkit::detail::knobs_of<Policy>::gain == normkit::gain_mode::plus_one;
  const std::vector<W> gamma = plus_one ? normal_vec<W>(r, cols, 0.5f) : uniform_vec<W>(r, cols, 0.5f, 1.5f);
  const W* g = with_gamma ? gamma.data() : nullptr;
  std::vector<T> y(rows * cols), dx(rows * cols);
  std::vector<float> rstd(rows), mu(rows), dgamma(cols), dbeta(cols);
  if (centered) {
    ASSERT_EQ(normkit::layer_norm_fwd<Policy>(x.data(), g, static_cast<const W*>(nullptr), y.data(),
                                              mu.data(), rstd.data(), rows, cols, eps),
              status::ok);
    ASSERT_EQ(normkit::layer_norm_backward<Policy>(dy.data(), x.data(), g, mu.data(), rstd.data(), dx.data(),
                                                   dgamma.data(), dbeta.data(), rows, cols),
              status::ok);
  } else {
    ASSERT_EQ(normkit::rms_norm_fwd<Policy>(x.data(), g, y.data(), rstd.data(), rows, cols, eps), status::ok);
    ASSERT_EQ(normkit::rms_norm_backward<Policy>(dy.data(), x.data(), g, rstd.data(), dx.data(),
                                                 dgamma.data(), rows, cols),
              status::ok);
  }
  const grad64 o = oracle_grad(centered, plus_one, dy, x, g, rows, cols, eps);
  const double k_dx = static_cast<double>(cols) / 64.0 + 16.0;
  for (std::size_t i = 0; i < rows * cols; ++i) {
    const double err = std::fabs(normkit::to_float(dx[i]) - o.dx[i]);
    const double bound =
        half_ulp(std::max(std::fabs(o.dx[i]), std::fabs(static_cast<double>(normkit::to_float(dx[i])))),
                 digits_of<T>()) +
        k_dx * u32 * o.scale[i];
    wdx.add(err, bound);
    ASSERT_LE(err, bound) << "dx[" << i << "] = " << normkit::to_float(dx[i]) << ", fp64 " << o.dx[i] << " ("
                          << type_name<T>() << "/" << type_name<W>() << " rows=" << rows << " cols=" << cols
                          << (centered ? " layer" : " rms") << ")";
  }
  const double k_dg = static_cast<double>(std::min<std::size_t>(rows, 64)) + 8.0 + k_dx;
  for (std::size_t j = 0; j < cols; ++j) {
    const double err = std::fabs(dgamma[j] - o.dgamma[j]), bound = k_dg * u32 * o.dgamma_abs[j];
    wdg.add(err, bound);
    ASSERT_LE(err, bound) << "dgamma[" << j << "] = " << dgamma[j] << ", fp64 " << o.dgamma[j];
    if (centered) {
      const double eb = std::fabs(dbeta[j] - o.dbeta[j]), bb = k_dg * u32 * o.dbeta_abs[j];
      wdg.add(eb, bb);
      ASSERT_LE(eb, bb) << "dbeta[" << j << "] = " << dbeta[j] << ", fp64 " << o.dbeta[j];
    }
  }
}

template <class T, class W>
void oracle_sweep(worst& wdx, worst& wdg) {
  static const std::size_t cols_list[] = {1, 2, 7, 64, 100, 257, 1024};
  std::uint64_t seed = 1;
  for (std::size_t cols : cols_list)
    for (int variant = 0; variant < 4; ++variant) {
      const bool with_gamma = variant != 3;
      const std::size_t rows = variant == 2 ? 70 : 5;
      check_against_oracle<normkit::llama, T, W>(false, rows, cols, 1e-5f, ++seed, false, with_gamma, wdx,
                                                 wdg);
      check_against_oracle<normkit::gemma, T, W>(false, rows, cols, 1e-6f, ++seed, false, with_gamma, wdx,
                                                 wdg);
      if (cols > 1) {  // one element: var = 0, the gradient is 0 up to eps
        check_against_oracle<normkit::pytorch, T, W>(true, rows, cols, 1e-5f, ++seed, variant == 1,
                                                     with_gamma, wdx, wdg);
        check_against_oracle<normkit::gemma, T, W>(true, rows, cols, 1e-5f, ++seed, variant == 0, with_gamma,
                                                   wdx, wdg);
      }
      if (::testing::Test::HasFatalFailure())
        return;
    }
}

TEST(Backward, GradientsWithinStatedBoundsOfFp64AnalyticGradient) {
  // The worst error / bound ratio per type pair (for 16-bit T the half ulp of the final rounding
  // dominates the bound, so ratios near 1 there are the rounding itself).
  auto run = [](auto t, auto w) {
    using T = typename decltype(t)::type;
    using W = typename decltype(w)::type;
    worst wdx, wdg;
    oracle_sweep<T, W>(wdx, wdg);
    std::printf("[ oracle   ] %s %s/%s: worst error / bound: dx %.3f, dgamma/dbeta %.3f\n",
                isa_name().c_str(), type_name<T>(), type_name<W>(), wdx.ratio, wdg.ratio);
  };
  run(type_tag<float>{}, type_tag<float>{});
  run(type_tag<bf16>{}, type_tag<bf16>{});
  run(type_tag<fp16>{}, type_tag<float>{});
}

// ---- fp64 central finite differences of the fp64 forward L(x, gamma, beta) = sum dy * y.
double loss64(bool centered, bool plus_one, const std::vector<double>& x, const std::vector<double>& gamma,
              const std::vector<double>& beta, const std::vector<double>& dy, std::size_t rows,
              std::size_t cols, double eps) {
  double l = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0.0, var = 0.0;
    if (centered) {
      for (std::size_t i = 0; i < cols; ++i)
        mean += x[r * cols + i];
      mean /= static_cast<double>(cols);
    }
    for (std::size_t i = 0; i < cols; ++i)
      var += (x[r * cols + i] - mean) * (x[r * cols + i] - mean);
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(cols) + eps);
    for (std::size_t i = 0; i < cols; ++i) {
      const double g = plus_one ? 1.0 + gamma[i] : gamma[i];
      l += dy[r * cols + i] * ((x[r * cols + i] - mean) * rstd * g + (centered ? beta[i] : 0.0));
    }
  }
  return l;
}

template <class Policy>
void finite_difference_case(bool centered, std::size_t rows, std::size_t cols, std::uint64_t seed) {
  const bool plus_one = normkit::detail::knobs_of<Policy>::gain == normkit::gain_mode::plus_one;
  rng r(seed);
  const std::vector<float> x = normal_vec<float>(r, rows * cols, 1.0f, centered ? 3.0f : 0.0f);
  const std::vector<float> dy = normal_vec<float>(r, rows * cols);
  const std::vector<float> gamma = uniform_vec<float>(r, cols, 0.5f, 1.5f), beta = normal_vec<float>(r, cols);
  const float eps = 1e-5f;
  std::vector<float> y(rows * cols), dx(rows * cols), rstd(rows), mean(rows), dgamma(cols), dbeta(cols);
  if (centered) {
    ASSERT_EQ(normkit::layer_norm_fwd<Policy>(x.data(), gamma.data(), beta.data(), y.data(), mean.data(),
                                              rstd.data(), rows, cols, eps),
              status::ok);
    ASSERT_EQ(
        normkit::layer_norm_backward<Policy>(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(),
                                             dx.data(), dgamma.data(), dbeta.data(), rows, cols),
        status::ok);
  } else {
    ASSERT_EQ(normkit::rms_norm_fwd<Policy>(x.data(), gamma.data(), y.data(), rstd.data(), rows, cols, eps),
              status::ok);
    ASSERT_EQ(normkit::rms_norm_backward<Policy>(dy.data(), x.data(), gamma.data(), rstd.data(), dx.data(),
                                                 dgamma.data(), rows, cols),
              status::ok);
  }
  std::vector<double> xd(x.begin(), x.end()), gd(gamma.begin(), gamma.end()), bd(beta.begin(), beta.end()),
      dyd(dy.begin(), dy.end());
  const grad64 o = oracle_grad(centered, plus_one, dy, x, gamma.data(), rows, cols, eps);
  auto fd = [&](std::vector<double>& v, std::size_t k) {
    const double h = 0x1p-17 * std::max(1.0, std::fabs(v[k])), keep = v[k];
    v[k] = keep + h;
    const double lp = loss64(centered, plus_one, xd, gd, bd, dyd, rows, cols, eps);
    v[k] = keep - h;
    const double lm = loss64(centered, plus_one, xd, gd, bd, dyd, rows, cols, eps);
    v[k] = keep;
    return (lp - lm) / (2.0 * h);
  };
  // Central differences in double: truncation h^2 * f''' / 6 plus cancellation 1e-16 * |L| / h,
  // both far below 1e-6 of the scale here; the bound is the fp32 one of the analytic test plus that.
  const double k_dx = static_cast<double>(cols) / 64.0 + 16.0;
  for (std::size_t k = 0; k < rows * cols; ++k) {
    const double want = fd(xd, k), err = std::fabs(dx[k] - want);
    EXPECT_LE(err, k_dx * u32 * o.scale[k] + 1e-6 * o.scale[k])
        << "dx[" << k << "] = " << dx[k] << ", central difference " << want;
    EXPECT_LE(std::fabs(want - o.dx[k]), 1e-6 * o.scale[k]) << "fp64 analytic vs central difference at " << k;
  }
  const double k_dg = static_cast<double>(rows) + 8.0 + k_dx;
  for (std::size_t j = 0; j < cols; ++j) {
    const double want = fd(gd, j);
    EXPECT_LE(std::fabs(dgamma[j] - want), k_dg * u32 * o.dgamma_abs[j] + 1e-6 * o.dgamma_abs[j])
        << "dgamma[" << j << "] = " << dgamma[j] << ", central difference " << want;
    if (centered) {
      const double wb = fd(bd, j);
      EXPECT_LE(std::fabs(dbeta[j] - wb), k_dg * u32 * o.dbeta_abs[j] + 1e-6 * o.dbeta_abs[j])
          << "dbeta[" << j << "] = " << dbeta[j] << ", central difference " << wb;
    }
  }
}

TEST(Backward, GradientsWithinStatedBoundsOfFp64CentralDifferences) {
  std::uint64_t seed = 100;
  for (std::size_t cols : {2u, 3u, 8u, 33u, 70u}) {
    finite_difference_case<normkit::llama>(false, 3, cols, ++seed);
    finite_difference_case<normkit::gemma>(false, 3, cols, ++seed);
    finite_difference_case<normkit::pytorch>(true, 3, cols, ++seed);
    finite_difference_case<normkit::gemma>(true, 3, cols, ++seed);
  }
}

// ---- Parity: the dispatched path against the reference, bit for bit.
class BackwardParity : public ::testing::TestWithParam<isa> {};

template <class T>
std::vector<T> row_values(rng& r, std::size_t n, int kind) {
  switch (kind % 5) {
    case 0:
      return normal_vec<T>(r, n);
    case 1:
      return normal_vec<T>(r, n, 0.01f, 100.0f);  // a large mean, a small spread
    case 2: {                                     // a few specials: NaN, Inf, subnormal, zeros
      std::vector<T> v = normal_vec<T>(r, n);
      if (n > 3) {
        v[r.u32() % n] = as<T>(0.0f);
        v[r.u32() % n] = from_bits<T>(traits<T>::canonical_nan);
        v[r.u32() % n] = as<T>(-0.0f);
      }
      return v;
    }
    case 3:
      return raw_bits_vec<T>(r, n);
    default:
      return normal_vec<T>(r, n, 1e-3f);
  }
}

// Statistics: mostly what the forward saved, some rows with values no forward produces.
void perturb_stats(rng& r, std::vector<float>& rstd, std::vector<float>& mean) {
  static const float specials[] = {0.0f, -1.0f, -0.0f, 0x1p-140f, 1e30f, 0.0f, 0.0f};
  for (std::size_t k = 0; k < rstd.size(); ++k) {
    const std::uint32_t u = r.u32() % 16u;
    if (u == 0)
      rstd[k] = specials[r.u32() % 7u];
    else if (u == 1)
      rstd[k] = normkit::detail::bits_float(r.u32() % 2u ? 0x7f800000u : 0x7fc00000u);  // Inf, NaN
    else if (u == 2)
      mean[k] = r.uniform(-4.0f, 4.0f);  // not the row's mean
  }
}

template <class Policy, class T, class W>
void parity_case(bool centered, std::size_t rows, std::size_t cols, int kind, bool with_gamma, bool strided,
                 bool in_place, std::uint64_t seed) {
  rng r(seed);
  const std::size_t xs = strided ? cols + 3 : cols, ds = strided ? cols + 5 : cols;
  const std::size_t ys = in_place ? ds : (strided ? cols + 1 : cols);
  std::vector<T> x = row_values<T>(r, rows * xs, kind), dy = row_values<T>(r, rows * ds, kind + 2);
  const std::vector<W> gamma = normal_vec<W>(r, cols);
  const W* g = with_gamma ? gamma.data() : nullptr;
  // Contiguous copies for the reference.
  std::vector<T> xc(rows * cols), dyc(rows * cols);
  for (std::size_t k = 0; k < rows; ++k)
    for (std::size_t i = 0; i < cols; ++i)
      xc[k * cols + i] = x[k * xs + i], dyc[k * cols + i] = dy[k * ds + i];
  std::vector<float> rstd(rows), mean(rows);
  std::vector<T> ytmp(rows * cols);
  if (centered) {
    ASSERT_EQ(
        normkit::reference::layer_norm_fwd<Policy>(xc.data(), g, static_cast<const W*>(nullptr), ytmp.data(),
                                                   mean.data(), rstd.data(), rows, cols, 1e-5f),
        status::ok);
  } else {
    ASSERT_EQ(
        normkit::reference::rms_norm_fwd<Policy>(xc.data(), g, ytmp.data(), rstd.data(), rows, cols, 1e-5f),
        status::ok);
  }
  perturb_stats(r, rstd, mean);

  std::vector<T> want(rows * cols);
  std::vector<float> wg(cols, -1.0f), wb(cols, -1.0f), gg(cols, -2.0f), gb(cols, -2.0f);
  const std::size_t nb = normkit::backward_blocks(rows);
  std::vector<float> wpg(nb * cols), wpb(nb * cols), gpg(nb * cols, -3.0f), gpb(nb * cols, -3.0f);
  std::vector<T> want2(rows * cols), got2(rows * ys + 8, as<T>(7.0f));
  std::vector<T> got(rows * ys + 8, as<T>(7.0f));
  T* dx = in_place ? dy.data() : got.data();
  std::vector<T> dy_copy = dy;
  status st;
  if (centered) {
    ASSERT_EQ(
        normkit::reference::layer_norm_backward<Policy>(dyc.data(), xc.data(), g, mean.data(), rstd.data(),
                                                        want.data(), wg.data(), wb.data(), rows, cols),
        status::ok);
    ASSERT_EQ(normkit::reference::layer_norm_backward_partial<Policy>(dyc.data(), xc.data(), g, mean.data(),
                                                                      rstd.data(), want2.data(), wpg.data(),
                                                                      wpb.data(), rows, cols),
              status::ok);
    st = normkit::layer_norm_backward<Policy>(dy.data(), x.data(), g, mean.data(), rstd.data(), dx, gg.data(),
                                              gb.data(), rows, cols, ds, xs, ys);
  } else {
    ASSERT_EQ(normkit::reference::rms_norm_backward<Policy>(dyc.data(), xc.data(), g, rstd.data(),
                                                            want.data(), wg.data(), rows, cols),
              status::ok);
    ASSERT_EQ(normkit::reference::rms_norm_backward_partial<Policy>(dyc.data(), xc.data(), g, rstd.data(),
                                                                    want2.data(), wpg.data(), rows, cols),
              status::ok);
    st = normkit::rms_norm_backward<Policy>(dy.data(), x.data(), g, rstd.data(), dx, gg.data(), rows, cols,
                                            ds, xs, ys);
  }
  ASSERT_EQ(st, status::ok);
  const std::string what = isa_name() + (centered ? " layer_norm_backward<" : " rms_norm_backward<") +
                           Policy::name + "> " + type_name<T>() + "/" + type_name<W>() +
                           " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                           " kind=" + std::to_string(kind) + (with_gamma ? "" : " no gamma") +
                           (strided ? " strided" : "") + (in_place ? " in place" : "");
  std::vector<T> got_rows(rows * cols);
  for (std::size_t k = 0; k < rows; ++k)
    for (std::size_t i = 0; i < cols; ++i)
      got_rows[k * cols + i] = dx[k * ys + i];
  ASSERT_SAME_BITS(got_rows, want, what + " dx");
  ASSERT_SAME_BITS(gg, wg, what + " dgamma");
  if (centered) {
    ASSERT_SAME_BITS(gb, wb, what + " dbeta");
  }
  ASSERT_SAME_BITS(want2, want, what + " dx of the partial reference");
  // Gaps between strided rows and the slack after the last one are untouched.
  if (!in_place)
    for (std::size_t k = 0; k < got.size(); ++k)
      if (k >= rows * ys || k % ys >= cols) {
        ASSERT_EQ(bits(got[k]), bits(as<T>(7.0f))) << what << ": wrote outside dx at " << k;
      }
  // The partial entry point, dispatched, on the (restored) strided operands.
  T* dx2 = in_place ? dy_copy.data() : got2.data();
  if (centered)
    st = normkit::layer_norm_backward_partial<Policy>(dy_copy.data(), x.data(), g, mean.data(), rstd.data(),
                                                      dx2, gpg.data(), gpb.data(), rows, cols, ds, xs, ys);
  else
    st = normkit::rms_norm_backward_partial<Policy>(dy_copy.data(), x.data(), g, rstd.data(), dx2, gpg.data(),
                                                    rows, cols, ds, xs, ys);
  ASSERT_EQ(st, status::ok);
  ASSERT_SAME_BITS(gpg, wpg, what + " dgamma partials");
  if (centered) {
    ASSERT_SAME_BITS(gpb, wpb, what + " dbeta partials");
  }
}

template <class T, class W>
void parity_types(int& n) {
  static const std::size_t shapes[][2] = {{1, 1},   {1, 5},   {3, 31},  {2, 64},  {3, 65},  {1, 127},
                                          {4, 300}, {64, 17}, {67, 40}, {130, 9}, {2, 1030}};
  constexpr std::size_t n_shapes = sizeof shapes / sizeof shapes[0];
  for (int c = 0; c < 4; ++c, ++n) {
    const std::size_t* s = shapes[static_cast<std::size_t>(n) % n_shapes];
    const std::size_t* s2 = shapes[static_cast<std::size_t>(n + 5) % n_shapes];
    const bool with_gamma = n % 5 != 4, strided = n % 3 == 1, in_place = n % 7 == 3;
    const std::uint64_t seed = 0x1000u + static_cast<std::uint64_t>(n);
    parity_case<normkit::llama, T, W>(false, s[0], s[1], n, with_gamma, strided, in_place, seed);
    parity_case<normkit::gemma, T, W>(false, s2[0], s2[1], n + 1, with_gamma, strided, in_place, seed + 1);
    parity_case<normkit::pytorch, T, W>(true, s[0], s[1], n + 2, with_gamma, strided, in_place, seed + 2);
    parity_case<normkit::gemma, T, W>(true, s2[0], s2[1], n + 3, with_gamma, strided, in_place, seed + 3);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

TEST_P(BackwardParity, SimdEqualsReferenceBits) {
  NORMKIT_USE_ISA(GetParam());
  // Both group sizes on any CPU (AVX-512 runs four; the others run two for either): the shapes'
  // row counts end groups of four with 1, 2 and 3 rows, inside and at the end of a 64-row block.
  for (const std::size_t group : {2u, 4u}) {
    const pinned_grad_group_rows pin(group);
    SCOPED_TRACE("group_rows=" + std::to_string(group));
    // Every T with its own gain type, and each gain type under another T: the kernels see gamma
    // only as the fp32 gain row the entry point makes, so the pairs check that conversion, not
    // new code.
    int n = 0;
    parity_types<float, float>(n);
    parity_types<bf16, bf16>(n);
    parity_types<fp16, fp16>(n);
    parity_types<bf16, float>(n);
    parity_types<float, fp16>(n);
    if (HasFatalFailure())
      return;
  }
}

// ---- dgamma / dbeta: one call == the partial / reduce pair over any split at block boundaries.
TEST_P(BackwardParity, ParameterGradientsIndependentOfRowSplits) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t rows = 700, cols = 130, blocks = normkit::backward_blocks(rows);
  ASSERT_EQ(blocks, 11u);
  rng r(77);
  const std::vector<bf16> x = normal_vec<bf16>(r, rows * cols, 2.0f, 0.5f),
                          dy = normal_vec<bf16>(r, rows * cols);
  const std::vector<bf16> gamma = uniform_vec<bf16>(r, cols, 0.5f, 1.5f);
  std::vector<bf16> y(rows * cols), dx_one(rows * cols), dx(rows * cols);
  std::vector<float> rstd(rows), mean(rows), dg_one(cols), db_one(cols), dg(cols), db(cols), dgr(cols, 0.0f);
  std::vector<float> pg(blocks * cols), pb(blocks * cols);
  ASSERT_EQ(
      normkit::layer_norm_fwd<normkit::pytorch>(x.data(), gamma.data(), static_cast<const bf16*>(nullptr),
                                                y.data(), mean.data(), rstd.data(), rows, cols, 1e-5f),
      status::ok);
  ASSERT_EQ(normkit::layer_norm_backward<normkit::pytorch>(dy.data(), x.data(), gamma.data(), mean.data(),
                                                           rstd.data(), dx_one.data(), dg_one.data(),
                                                           db_one.data(), rows, cols),
            status::ok);
  ASSERT_EQ(normkit::rms_norm_backward<normkit::gemma>(dy.data(), x.data(), gamma.data(), rstd.data(),
                                                       dx.data(), dgr.data(), rows, cols),
            status::ok);
  std::mt19937_64 gen(5);
  for (int split = 0; split < 12; ++split) {
    // Cut points at random block boundaries (split 0: every block alone), chunks run in random order.
    std::vector<std::size_t> cuts = {0, rows};
    for (std::size_t k = 1; k < blocks; ++k)
      if (split == 0 || gen() % 3 == 0)
        cuts.push_back(k * normkit::backward_block_rows);
    std::sort(cuts.begin(), cuts.end());
    std::vector<std::size_t> order(cuts.size() - 1);
    for (std::size_t k = 0; k < order.size(); ++k)
      order[k] = k;
    std::shuffle(order.begin(), order.end(), gen);
    std::fill(pg.begin(), pg.end(), -1.0f);
    for (std::size_t c : order) {
      const std::size_t r0 = cuts[c], n = cuts[c + 1] - r0, b0 = r0 / normkit::backward_block_rows;
      ASSERT_EQ(
          normkit::layer_norm_backward_partial<normkit::pytorch>(
              dy.data() + r0 * cols, x.data() + r0 * cols, gamma.data(), mean.data() + r0, rstd.data() + r0,
              dx.data() + r0 * cols, pg.data() + b0 * cols, pb.data() + b0 * cols, n, cols),
          status::ok);
    }
    ASSERT_EQ(normkit::backward_reduce(pg.data(), blocks, cols, dg.data()), status::ok);
    ASSERT_EQ(normkit::backward_reduce(pb.data(), blocks, cols, db.data()), status::ok);
    const std::string what =
        isa_name() + " split " + std::to_string(split) + " into " + std::to_string(order.size()) + " chunks";
    ASSERT_SAME_BITS(dg, dg_one, what + " dgamma");
    ASSERT_SAME_BITS(db, db_one, what + " dbeta");
    ASSERT_SAME_BITS(dx, dx_one, what + " dx");
    // The same split for RMSNorm's dgamma (gain offset).
    for (std::size_t c : order) {
      const std::size_t r0 = cuts[c], n = cuts[c + 1] - r0, b0 = r0 / normkit::backward_block_rows;
      ASSERT_EQ(normkit::rms_norm_backward_partial<normkit::gemma>(
                    dy.data() + r0 * cols, x.data() + r0 * cols, gamma.data(), rstd.data() + r0,
                    dx.data() + r0 * cols, pg.data() + b0 * cols, n, cols),
                status::ok);
    }
    ASSERT_EQ(normkit::backward_reduce(pg.data(), blocks, cols, dg.data()), status::ok);
    ASSERT_SAME_BITS(dg, dgr, what + " rms dgamma");
  }
}

// Outputs of at least stream_min_bytes() take the streaming stores: a head up to dx's first cache
// line, whole lines (a line of each row before the next row's where a chunk is less than a line),
// then single chunks and a tail; their bits too. Heads of 0, 1 and 8 elements leave 0, 31 and 24
// after the lines: whole chunks that fill no line (AVX2 bf16: one of 16; NEON: three of 8). The
// threshold is pinned to 1 MiB here (the machine's may be tens of MiB) and restored after. Two
// row counts: 131, whose dy and x stay below prefetch_min_bytes, so that AVX-512 runs groups of
// four (ending its last block with three rows); and 4 MiB of dy and x plus 3 rows, whose output
// passes prefetch the rows ahead, across the 64-row blocks of the folded call
// (simd/backward_rows.hpp).
TEST_P(BackwardParity, StreamingStoresOnLargeOutputs) {
  NORMKIT_USE_ISA(GetParam());
  const pinned_stream_threshold pin(std::size_t(1) << 20);
  const pinned_grad_group_rows groups(4);
  const std::size_t cols = 4096, rows = normkit::detail::prefetch_min_bytes / (2 * cols * sizeof(bf16)) + 3;
  ASSERT_FALSE(normkit::detail::prefetches(131 * cols * 2 * sizeof(bf16), cols * sizeof(bf16)));
  ASSERT_TRUE(normkit::detail::prefetches(rows * cols * 2 * sizeof(bf16), cols * sizeof(bf16)));
  ASSERT_GE(131 * cols * sizeof(bf16), normkit::stream_min_bytes());
  rng r(11);
  const std::vector<bf16> x = normal_vec<bf16>(r, rows * cols);
  std::vector<bf16> dy = normal_vec<bf16>(r, rows * cols + 32);
  // A negative NaN in row 9 (whatever the offset below): its dx is all canonical NaNs, streamed.
  dy[9 * cols + 2000] = bf16(-std::numeric_limits<float>::quiet_NaN());
  const std::vector<bf16> gamma = uniform_vec<bf16>(r, cols, 0.5f, 1.5f);
  std::vector<float> rstd(rows), mean(rows), dg(cols), db(cols), wg(cols), wb(cols);
  std::vector<bf16> y(rows * cols), want(rows * cols), got(rows * cols + 32);
  ASSERT_EQ(normkit::reference::layer_norm_fwd<normkit::pytorch>(x.data(), gamma.data(),
                                                                 static_cast<const bf16*>(nullptr), y.data(),
                                                                 mean.data(), rstd.data(), rows, cols, 1e-5f),
            status::ok);
  // Row 5's dx subnormal (a foreign rstd, computed through): the lanes AVX512-BF16's conversion
  // would flush take the exact integer rounding.
  rstd[5] *= 0x1p-130f;
  constexpr std::size_t cache_line = normkit::detail::cache_line;
  const std::size_t line = cache_line / sizeof(bf16),
                    at = reinterpret_cast<std::uintptr_t>(got.data()) % cache_line / sizeof(bf16);
  for (const std::size_t n : {std::size_t(131), rows}) {
    for (const std::size_t head : {std::size_t(0), std::size_t(1), std::size_t(8)}) {
      const std::size_t off = (2 * line - head - at) % line;  // dx + off is head elements before a line
      const std::string what = isa_name() + " rows=" + std::to_string(n) + " head " + std::to_string(head);
      auto dx_rows = [&] {
        return std::vector<bf16>(got.begin() + static_cast<std::ptrdiff_t>(off),
                                 got.begin() + static_cast<std::ptrdiff_t>(off + n * cols));
      };
      ASSERT_EQ(normkit::reference::layer_norm_backward<normkit::pytorch>(
                    dy.data() + off, x.data(), gamma.data(), mean.data(), rstd.data(), want.data(), wg.data(),
                    wb.data(), n, cols),
                status::ok);
      ASSERT_EQ(normkit::layer_norm_backward<normkit::pytorch>(dy.data() + off, x.data(), gamma.data(),
                                                               mean.data(), rstd.data(), got.data() + off,
                                                               dg.data(), db.data(), n, cols),
                status::ok);
      ASSERT_SAME_BITS(dx_rows(),
                       std::vector<bf16>(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(n * cols)),
                       what + " streamed dx");
      ASSERT_SAME_BITS(dg, wg, what + " dgamma");
      ASSERT_SAME_BITS(db, wb, what + " dbeta");
      ASSERT_EQ(normkit::rms_norm_backward<normkit::gemma>(dy.data() + off, x.data(), gamma.data(),
                                                           rstd.data(), got.data() + off, dg.data(), n, cols),
                status::ok);
      ASSERT_EQ(normkit::reference::rms_norm_backward<normkit::gemma>(
                    dy.data() + off, x.data(), gamma.data(), rstd.data(), want.data(), wg.data(), n, cols),
                status::ok);
      ASSERT_SAME_BITS(dx_rows(),
                       std::vector<bf16>(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(n * cols)),
                       what + " streamed rms dx");
      ASSERT_SAME_BITS(dg, wg, what + " rms dgamma");
    }
  }
}

// ---- The fold itself, from its definition: T([0, N)) = T([0, P)) + T([P, N)), P the largest
// power of two below N, written here recursively in double-free fp32 steps (f32_add).
std::vector<float> tree(const std::vector<float>& p, std::size_t lo, std::size_t hi, std::size_t cols) {
  if (hi - lo == 1)
    return std::vector<float>(p.begin() + static_cast<std::ptrdiff_t>(lo * cols),
                              p.begin() + static_cast<std::ptrdiff_t>((lo + 1) * cols));
  std::size_t half = 1;
  while (half * 2 < hi - lo)
    half *= 2;
  std::vector<float> a = tree(p, lo, lo + half, cols), b = tree(p, lo + half, hi, cols);
  for (std::size_t j = 0; j < cols; ++j)
    a[j] = f32_add(a[j], b[j]);
  return a;
}

TEST(Backward, ReduceIsTheFixedTree) {
  rng r(9);
  const std::size_t cols = 67;
  for (std::size_t blocks : {1u, 2u, 3u, 5u, 7u, 8u, 11u, 12u, 33u, 64u, 100u}) {
    std::vector<float> p(blocks * cols);
    for (float& v : p)  // wide magnitudes: the association order shows in the bits
      v = std::ldexp(r.normal(), static_cast<int>(r.u32() % 40u) - 20);
    std::vector<float> got(cols);
    ASSERT_EQ(normkit::backward_reduce(p.data(), blocks, cols, got.data()), status::ok);
    EXPECT_SAME_BITS(got, tree(p, 0, blocks, cols), "blocks=" + std::to_string(blocks));
  }
  std::vector<float> zero(5, -1.0f);
  ASSERT_EQ(normkit::backward_reduce(nullptr, 0, 5, zero.data()), status::ok);
  EXPECT_SAME_BITS(zero, std::vector<float>(5, 0.0f), "no blocks: +0");
}

// ---- Statistics no forward produces are computed through (docs/contract.md): rstd = 0 gives
// dx = 0 and no dgamma contribution, NaN gives a NaN row (canonical).
TEST_P(BackwardParity, StatisticsOutsideTheForwardAreComputedThrough) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t rows = 3, cols = 40;
  rng r(3);
  const std::vector<float> x = normal_vec<float>(r, rows * cols), dy = normal_vec<float>(r, rows * cols);
  std::vector<float> rstd = {0.0f, 1.0f, normkit::detail::bits_float(0x7fc00001u)};
  std::vector<float> dx(rows * cols), dg(cols), dg1(cols), dx1(cols);
  ASSERT_EQ(normkit::rms_norm_backward<normkit::llama>(dy.data(), x.data(), nullptr, rstd.data(), dx.data(),
                                                       dg.data(), rows, cols),
            status::ok);
  for (std::size_t i = 0; i < cols; ++i) {
    EXPECT_EQ(dx[i], 0.0f) << "rstd = 0 row, column " << i;
    EXPECT_EQ(bits(dx[2 * cols + i]), 0x7fc00000u) << "rstd = NaN row, column " << i;
    EXPECT_EQ(bits(dg[i]), 0x7fc00000u) << "a NaN row makes dgamma NaN (canonical), column " << i;
  }
  // Without the NaN row: dgamma is the rstd = 1 row's alone (the rstd = 0 row adds fma(dy, 0, p)).
  std::vector<float> rstd2 = {0.0f, 1.0f};
  ASSERT_EQ(normkit::rms_norm_backward<normkit::llama>(dy.data(), x.data(), nullptr, rstd2.data(), dx.data(),
                                                       dg.data(), 2, cols),
            status::ok);
  ASSERT_EQ(normkit::rms_norm_backward<normkit::llama>(dy.data() + cols, x.data() + cols, nullptr,
                                                       rstd2.data() + 1, dx1.data(), dg1.data(), 1, cols),
            status::ok);
  EXPECT_SAME_BITS(dg, dg1, "rstd = 0 row contributes nothing");
  for (std::size_t i = 0; i < cols; ++i)  // rstd = 1: n = x; dgamma_j = dy_j * x_j exactly rounded once
    EXPECT_EQ(dg1[i], f32_mul(dy[cols + i], x[cols + i])) << i;
}

// ---- dx values at the top of bf16's range: below and on the rounding ties under the largest
// finite values (ties go to the even neighbour: 0x7f7e stays, 0x7f7f becomes Inf) and up to
// FLT_MAX. With x = 0 every n_i is 0, so dx_i = T(dy_i * g_i * rstd) = T(dy_i * rstd) exactly (g = 1,
// dy_i = +-2^-k): one row per value rstd = t. On avx512bf16 the interleaved kernels store these with
// the hardware conversion (simd/chunk.hpp), whose rounding near the maximum no other test reaches
// through that store. Lanes with |dy| = 1 are checked against RNE written here; every lane against
// the reference.
TEST_P(BackwardParity, OutputsRoundingToTheLargestBf16AndBeyond) {
  NORMKIT_USE_ISA(GetParam());
  std::vector<float> rstd;
  for (const std::uint32_t tie : {0x7f7e8000u, 0x7f7f8000u, 0x7f7fff00u})
    for (std::uint32_t u = tie - 256; u < tie + 256 && u <= 0x7f7fffffu; ++u)
      rstd.push_back(normkit::detail::bits_float(u));
  const std::size_t rows = rstd.size(), cols = 2 * 32 + 7;  // two AVX-512 chunks and a tail
  std::vector<bf16> x(rows * cols, bf16(0.0f)), dy(rows * cols), dx(rows * cols), want(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < cols; ++i) {
      const float sign = ((i * 7 + r) >> 1) & 1 ? -1.0f : 1.0f;
      dy[r * cols + i] = bf16(i % 5 == 3 ? std::ldexp(sign, -static_cast<int>(i % 9)) : sign);
    }
  std::vector<float> dg(cols), wg(cols);
  ASSERT_EQ(normkit::rms_norm_backward<normkit::pytorch>(dy.data(), x.data(), nullptr, rstd.data(), dx.data(),
                                                         dg.data(), rows, cols),
            status::ok);
  ASSERT_EQ(normkit::reference::rms_norm_backward<normkit::pytorch>(dy.data(), x.data(), nullptr, rstd.data(),
                                                                    want.data(), wg.data(), rows, cols),
            status::ok);
  ASSERT_SAME_BITS(dx, want, isa_name() + " dx near the bf16 maximum");
  ASSERT_SAME_BITS(dg, wg, isa_name() + " dgamma");
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint32_t u = bits(rstd[r]);
    const std::uint32_t rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // 0x7f80: overflow to Inf
    for (std::size_t i = 0; i < cols; ++i)
      if (i % 5 != 3) {
        const std::uint32_t sign = dy[r * cols + i].bits & 0x8000u;
        ASSERT_EQ(dx[r * cols + i].bits, sign | rne)
            << "rstd 0x" << std::hex << u << ", column " << std::dec << i;
      }
  }
}

// ---- The forward variants: y == the plain forward's bits; rstd and mean independently computed.
float independent_csum(const std::vector<float>& terms, bool squares) {
  float p[64] = {};
  for (std::size_t i = 0; i < terms.size(); ++i)
    p[i % 64] = squares ? std::fma(terms[i], terms[i], p[i % 64]) : f32_add(p[i % 64], terms[i]);
  for (std::size_t w = 32; w >= 1; w /= 2)
    for (std::size_t k = 0; k < w; ++k)
      p[k] = f32_add(p[k], p[k + w]);
  return p[0];
}

template <class T>
void forward_case(std::size_t rows, std::size_t cols, float eps, std::uint64_t seed) {
  rng r(seed);
  std::vector<T> x = normal_vec<T>(r, rows * cols, 1.5f, 0.25f);
  const std::vector<T> gamma = uniform_vec<T>(r, cols, 0.5f, 1.5f), beta = normal_vec<T>(r, cols);
  std::vector<bool> ordinary(rows, true);
  if (rows > 2) {  // an overflow row (rescale path; fp16 cannot hold one) and a NaN row
    x[cols] = std::is_same<T, fp16>::value ? from_bits<T>(0x7bffu) : as<T>(1e30f);
    x[2 * cols + cols / 2] = from_bits<T>(traits<T>::canonical_nan);
    ordinary[1] = ordinary[2] = false;
  }
  const std::string what =
      isa_name() + " " + type_name<T>() + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
  std::vector<T> y0(rows * cols), y1(rows * cols), yr(rows * cols);
  std::vector<float> rstd(rows), mean(rows), rstd_ref(rows), mean_ref(rows);
  const float d = static_cast<float>(cols);

  // RMSNorm: y as rms_norm; rstd as the reference and, on ordinary rows, as computed here.
  ASSERT_EQ(normkit::rms_norm<normkit::llama>(x.data(), gamma.data(), y0.data(), rows, cols, eps),
            status::ok);
  ASSERT_EQ(
      normkit::rms_norm_fwd<normkit::llama>(x.data(), gamma.data(), y1.data(), rstd.data(), rows, cols, eps),
      status::ok);
  ASSERT_EQ(normkit::reference::rms_norm_fwd<normkit::llama>(x.data(), gamma.data(), yr.data(),
                                                             rstd_ref.data(), rows, cols, eps),
            status::ok);
  ASSERT_SAME_BITS(y1, y0, what + " rms_norm_fwd y vs rms_norm");
  ASSERT_SAME_BITS(rstd, rstd_ref, what + " rms rstd vs reference");
  for (std::size_t k = 0; k < rows; ++k) {
    std::vector<float> v(cols);
    for (std::size_t i = 0; i < cols; ++i)
      v[i] = normkit::to_float(x[k * cols + i]);
    if (!ordinary[k])
      continue;
    // contract: inv = 1 / sqrt(csum(x^2) / d + eps)
    const float inv = f32_div(1.0f, f32_sqrt(f32_add(f32_div(independent_csum(v, true), d), eps)));
    ASSERT_EQ(bits(rstd[k]), bits(inv)) << what << " rms rstd row " << k;
  }
  if (rows > 2) {
    ASSERT_EQ(bits(rstd[2]), 0x7fc00000u) << what << ": a NaN row saves the canonical NaN";
  }

  // LayerNorm: y as layer_norm; mean and rstd as the reference and, on ordinary rows that do not
  // refine, K + m and 1 / sqrt(S / d + eps) computed here.
  ASSERT_EQ(
      normkit::layer_norm<normkit::pytorch>(x.data(), gamma.data(), beta.data(), y0.data(), rows, cols, eps),
      status::ok);
  ASSERT_EQ(normkit::layer_norm_fwd<normkit::pytorch>(x.data(), gamma.data(), beta.data(), y1.data(),
                                                      mean.data(), rstd.data(), rows, cols, eps),
            status::ok);
  ASSERT_EQ(
      normkit::reference::layer_norm_fwd<normkit::pytorch>(x.data(), gamma.data(), beta.data(), yr.data(),
                                                           mean_ref.data(), rstd_ref.data(), rows, cols, eps),
      status::ok);
  ASSERT_SAME_BITS(y1, y0, what + " layer_norm_fwd y vs layer_norm");
  ASSERT_SAME_BITS(rstd, rstd_ref, what + " layer rstd vs reference");
  ASSERT_SAME_BITS(mean, mean_ref, what + " layer mean vs reference");
  for (std::size_t k = 0; k < rows; ++k) {
    if (!ordinary[k])
      continue;
    std::vector<float> dv(cols), cv(cols);
    const float K = normkit::to_float(x[k * cols]);
    for (std::size_t i = 0; i < cols; ++i)
      dv[i] = f32_add(normkit::to_float(x[k * cols + i]), -K);
    const float m = f32_div(independent_csum(dv, false), d);
    for (std::size_t i = 0; i < cols; ++i)
      cv[i] = f32_add(dv[i], -m);
    const float S = independent_csum(cv, true);
    if (f32_mul(m, m) > f32_mul(16.0f, f32_div(S, d)))
      continue;  // a refined row: its mean and rstd are compared with the reference above
    ASSERT_EQ(bits(mean[k]), bits(f32_add(K, m))) << what << " layer mean row " << k;
    ASSERT_EQ(bits(rstd[k]), bits(f32_div(1.0f, f32_sqrt(f32_add(f32_div(S, d), eps)))))
        << what << " row " << k;
  }
  // In place (y == x): the statistics are taken before the row is overwritten.
  std::vector<T> xi = x;
  std::vector<float> rstd_i(rows);
  ASSERT_EQ(normkit::rms_norm_fwd<normkit::llama>(xi.data(), gamma.data(), xi.data(), rstd_i.data(), rows,
                                                  cols, eps),
            status::ok);
  ASSERT_EQ(normkit::rms_norm<normkit::llama>(x.data(), gamma.data(), y0.data(), rows, cols, eps),
            status::ok);
  ASSERT_SAME_BITS(xi, y0, what + " rms_norm_fwd in place");
  ASSERT_EQ(
      normkit::rms_norm_fwd<normkit::llama>(x.data(), gamma.data(), y1.data(), rstd.data(), rows, cols, eps),
      status::ok);
  ASSERT_SAME_BITS(rstd_i, rstd, what + " rms_norm_fwd in place rstd");
}

TEST_P(BackwardParity, ForwardVariantsMatchTheForwardAndItsStatistics) {
  NORMKIT_USE_ISA(GetParam());
  std::uint64_t seed = 40;
  for (std::size_t cols : {1u, 7u, 64u, 100u, 1030u})
    for (std::size_t rows : {1u, 3u, 20u}) {
      forward_case<float>(rows, cols, 1e-5f, ++seed);
      forward_case<bf16>(rows, cols, 1e-6f, ++seed);
      forward_case<fp16>(rows, cols, 0.0f, ++seed);
      if (::testing::Test::HasFatalFailure())
        return;
    }
}

// ---- LayerNorm: the backward normalizes each row exactly as its forward did (docs/contract.md,
// "The normalized value"), so the saved mean is the forward's K + m and nothing else is saved.
// Observed through dgamma: one row, dy = 1, no gamma gives dgamma_j = fma(1, n_j, +0) = n_j; the
// forward with no gamma or beta and fp32 output gives y_j = n_j * 1 = n_j. Rows where re-centring
// on the saved mean alone loses bits: a large mean with a small spread, an outlier x_0 (the
// refined shift), a constant row, ordinary rows.
// as_forward false: only the reference's bits (a rescaled row is re-centred on its saved mean).
template <class T>
void normalized_value_case(const std::vector<T>& x, std::size_t cols, const std::string& what,
                           bool as_forward = true) {
  const std::vector<T> dy(cols, as<T>(1.0f));
  std::vector<float> y(cols), dg(cols), db(cols), dgr(cols), dbr(cols), mean(1), rstd(1);
  std::vector<T> dx(cols), dxr(cols);
  ASSERT_EQ(normkit::layer_norm_fwd<normkit::pytorch>(x.data(), nullptr, nullptr, y.data(), mean.data(),
                                                      rstd.data(), 1, cols, 1e-5f),
            status::ok);
  ASSERT_EQ(
      normkit::layer_norm_backward<normkit::pytorch>(dy.data(), x.data(), nullptr, mean.data(), rstd.data(),
                                                     dx.data(), dg.data(), db.data(), 1, cols),
      status::ok);
  ASSERT_EQ(normkit::reference::layer_norm_backward<normkit::pytorch>(dy.data(), x.data(), nullptr,
                                                                      mean.data(), rstd.data(), dxr.data(),
                                                                      dgr.data(), dbr.data(), 1, cols),
            status::ok);
  ASSERT_SAME_BITS(dg, dgr, what + " dgamma vs reference");
  ASSERT_SAME_BITS(dx, dxr, what + " dx vs reference");
  for (std::size_t j = 0; as_forward && j < cols; ++j) {
    // fma(1, -0, +0) is +0: zeros compare by value, everything else by bits.
    if (y[j] == 0.0f)
      ASSERT_EQ(dg[j], 0.0f) << what << " column " << j;
    else
      ASSERT_EQ(bits(dg[j]), bits(y[j]))
          << what << " column " << j << ": backward n " << dg[j] << ", forward n " << y[j];
  }
}

// The forward's first split of a row (docs/contract.md, LayerNorm), steps written here: K = x_0,
// d_i = x_i - K into dv, and the returned m = csum(d_i) / d.
float first_split_m(const std::vector<float>& v, std::vector<float>& dv) {
  dv.resize(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    dv[i] = f32_add(v[i], -v[0]);
  return f32_div(independent_csum(dv, false), static_cast<float>(v.size()));
}

// Whether K + m of the first split is the mean the reference forward saves. Such a row's SIMD
// backward speculates on that split and must find, from the S its sums take, that the forward
// rescaled or refined (simd/backward_rows.hpp, centring_of).
bool first_split_is_saved_mean(const std::vector<float>& v) {
  std::vector<float> dv, y(v.size());
  const float m = first_split_m(v, dv);
  float mean = 0.0f, rstd = 0.0f;
  const normkit::status st = normkit::reference::layer_norm_fwd<normkit::pytorch>(
      v.data(), static_cast<const float*>(nullptr), static_cast<const float*>(nullptr), y.data(), &mean,
      &rstd, 1, v.size(), 1e-5f);
  return st == status::ok && f32_add(v[0], m) == mean;
}

// Whether the forward refines the row's shift: m * m > 16 * (S / d).
bool refines(const std::vector<float>& v) {
  std::vector<float> dv, cv(v.size());
  const float m = first_split_m(v, dv);
  for (std::size_t i = 0; i < v.size(); ++i)
    cv[i] = f32_add(dv[i], -m);
  return f32_mul(m, m) > f32_mul(16.0f, f32_div(independent_csum(cv, true), static_cast<float>(v.size())));
}

TEST_P(BackwardParity, LayerNormBackwardNormalizesAsItsForward) {
  NORMKIT_USE_ISA(GetParam());
  rng r(77);
  for (std::size_t cols : {24u, 64u, 100u, 1030u, 4096u}) {
    const std::string c = isa_name() + " cols=" + std::to_string(cols);
    normalized_value_case(normal_vec<float>(r, cols), cols, c + " f32 N(0,1)");
    normalized_value_case(normal_vec<float>(r, cols, 1e-2f, 1e4f), cols, c + " f32 mean 1e4, spread 1e-2");
    normalized_value_case(normal_vec<bf16>(r, cols, 4.0f, 300.0f), cols, c + " bf16 mean 300, spread 4");
    normalized_value_case(std::vector<float>(cols, 3.25f), cols, c + " f32 constant");
    std::vector<float> outlier = normal_vec<float>(r, cols);
    outlier[0] = 1e4f;  // K = x_0 lies far outside: the forward refines its shift
    ASSERT_TRUE(refines(outlier)) << c;
    normalized_value_case(outlier, cols, c + " f32 outlier x_0");
    std::vector<bf16> outlier16 = normal_vec<bf16>(r, cols, 1.0f, -20.0f);
    outlier16[0] = as<bf16>(3e3f);
    normalized_value_case(outlier16, cols, c + " bf16 outlier x_0");
    std::vector<float> rescaled = normal_vec<float>(r, cols);
    rescaled[0] = 1e30f;  // S overflows: the forward rescales, and its saved mean is not K + m
    normalized_value_case(rescaled, cols, c + " f32 rescaled", false);
    rescaled = normal_vec<float>(r, cols, 1e20f, 0.0f);
    rescaled[0] = 0.0f;  // rescaled too, with K = 0: the saved mean equals K + m at scale 1
    ASSERT_TRUE(first_split_is_saved_mean(rescaled)) << c;
    normalized_value_case(rescaled, cols, c + " f32 rescaled, K = 0", false);
    normalized_value_case(normal_vec<float>(r, cols, 1e17f, 3e17f), cols, c + " f32 |d| beyond 2^51");
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

// The rows whose forward refinement test is closest to its threshold: x_0 stepped one ulp at a
// time across the point where refines() (the test's own steps) changes, on both sides of the
// mean: the rows where a replay that decided the test any other way than the forward's own
// arithmetic (an estimate of S, a shortcut with too thin a margin) would centre differently.
TEST_P(BackwardParity, LayerNormBackwardNormalizesAsItsForwardAtTheRefinementThreshold) {
  NORMKIT_USE_ISA(GetParam());
  rng r(78);
  for (std::size_t cols : {300u, 1030u, 4096u}) {
    const std::vector<float> base = normal_vec<float>(r, cols);
    for (float sign : {1.0f, -1.0f}) {
      auto with_x0 = [&](std::uint32_t u) {
        std::vector<float> v = base;
        v[0] = sign * from_bits<float>(u);
        return v;
      };
      std::uint32_t lo = bits(1.0f), hi = bits(1e3f);  // x_0 = +-1 keeps K, +-1000 refines
      ASSERT_FALSE(refines(with_x0(lo)));
      ASSERT_TRUE(refines(with_x0(hi)));
      while (hi - lo > 1) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        (refines(with_x0(mid)) ? hi : lo) = mid;
      }
      for (std::uint32_t u = hi - 24; u != hi + 24; ++u) {
        const std::string c = isa_name() + " cols=" + std::to_string(cols) +
                              " x_0=" + std::to_string(sign * from_bits<float>(u)) +
                              (refines(with_x0(u)) ? " (refines)" : "");
        normalized_value_case(with_x0(u), cols, c);
        if (::testing::Test::HasFatalFailure())
          return;
      }
    }
  }
}

// ---- Bad arguments: the status, and nothing written.
TEST(BackwardApi, BadArgumentsReturnTheirStatusAndWriteNothing) {
  const std::size_t rows = 4, cols = 8;
  std::vector<float> x(rows * cols, 1.0f), dy(rows * cols, 1.0f), gamma(cols, 1.0f), rstd(rows, 1.0f),
      mean(rows, 0.0f);
  std::vector<float> dx(rows * cols + 16, 7.0f), dg(cols, 7.0f), db(cols, 7.0f);
  auto untouched = [&] {
    for (float v : dx)
      if (v != 7.0f)
        return false;
    for (std::size_t i = 0; i < cols; ++i)
      if (dg[i] != 7.0f || db[i] != 7.0f)
        return false;
    return true;
  };
  using normkit::llama;
  using normkit::pytorch;
  const float* X = x.data();
  const float* DY = dy.data();
  const float* G = gamma.data();
  const float* R = rstd.data();
  const float* M = mean.data();
  float* DX = dx.data();
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, X, G, R, DX, dg.data(), rows, cols, cols - 1, cols, cols),
            status::invalid_stride);
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, X, G, R, DX, dg.data(), rows, cols, cols, cols, cols - 1),
            status::invalid_stride);
  EXPECT_EQ(normkit::rms_norm_backward<llama>(static_cast<const float*>(nullptr), X, G, R, DX, dg.data(),
                                              rows, cols),
            status::null_pointer);
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, X, G, static_cast<const float*>(nullptr), DX, dg.data(),
                                              rows, cols),
            status::null_pointer);
  EXPECT_EQ(
      normkit::rms_norm_backward<llama>(DY, X, G, R, static_cast<float*>(nullptr), dg.data(), rows, cols),
      status::null_pointer);
  EXPECT_EQ(normkit::layer_norm_backward<pytorch>(DY, X, G, static_cast<const float*>(nullptr), R, DX,
                                                  dg.data(), db.data(), rows, cols),
            status::null_pointer);
  const float* misaligned = reinterpret_cast<const float*>(reinterpret_cast<const char*>(X) + 2);
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, misaligned, G, R, DX, dg.data(), rows, cols),
            status::misaligned_pointer);
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, X, G, R, DX, dg.data(), rows, PTRDIFF_MAX / 2,
                                              PTRDIFF_MAX / 2, PTRDIFF_MAX / 2, PTRDIFF_MAX / 2),
            status::size_overflow);
  // dx over x (not in place), dgamma inside dx, dbeta over dgamma, rstd inside dx: overlaps.
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, DX, G, R, DX, dg.data(), rows, cols),
            status::overlapping_output);
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, X, G, R, DX, DX + 3, rows, cols),
            status::overlapping_output);
  EXPECT_EQ(normkit::layer_norm_backward<pytorch>(DY, X, G, M, R, DX, dg.data(), dg.data() + 1, rows, cols),
            status::overlapping_output);
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, X, G, DX + 2, DX, dg.data(), rows, cols),
            status::overlapping_output);
  // The partials are backward_blocks(rows) x cols: a dx right after a partial row of 8 is fine,
  // one that starts inside it is not.
  EXPECT_EQ(normkit::rms_norm_backward_partial<llama>(DY, X, G, R, DX, DX + rows * cols - 4, rows, cols),
            status::overlapping_output);
  EXPECT_TRUE(untouched()) << "a rejected call wrote";
  // dx == dy exactly (same type and stride) is in place: allowed.
  std::vector<float> dyi = dy;
  EXPECT_EQ(normkit::rms_norm_backward<llama>(dyi.data(), X, G, R, dyi.data(), nullptr, rows, cols),
            status::ok);
  // rows == 0: dgamma is the sum of nothing, +0; cols == 0 touches nothing.
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, X, G, R, DX, dg.data(), 0, cols), status::ok);
  for (std::size_t i = 0; i < cols; ++i)
    EXPECT_EQ(bits(dg[i]), 0u) << i;
  std::fill(dg.begin(), dg.end(), 7.0f);
  EXPECT_EQ(normkit::rms_norm_backward<llama>(DY, X, G, R, DX, dg.data(), rows, 0), status::ok);
  EXPECT_TRUE(untouched());

  // Forward variants: eps, and the statistics as outputs.
  std::vector<float> y(rows * cols, 7.0f), st(rows, 7.0f), mu(rows, 7.0f);
  auto fwd_untouched = [&] {
    for (float v : y)
      if (v != 7.0f)
        return false;
    for (std::size_t k = 0; k < rows; ++k)
      if (st[k] != 7.0f || mu[k] != 7.0f)
        return false;
    return true;
  };
  EXPECT_EQ(normkit::rms_norm_fwd<llama>(X, G, y.data(), st.data(), rows, cols, -1.0f), status::invalid_eps);
  EXPECT_EQ(normkit::rms_norm_fwd<llama>(X, G, y.data(), static_cast<float*>(nullptr), rows, cols, 1e-5f),
            status::null_pointer);
  EXPECT_EQ(normkit::layer_norm_fwd<pytorch>(X, G, G, y.data(), static_cast<float*>(nullptr), st.data(), rows,
                                             cols, 1e-5f),
            status::null_pointer);
  EXPECT_EQ(normkit::rms_norm_fwd<llama>(X, G, y.data(), y.data() + 1, rows, cols, 1e-5f),
            status::overlapping_output);
  EXPECT_EQ(normkit::layer_norm_fwd<pytorch>(X, G, G, y.data(), mu.data(), mu.data(), rows, cols, 1e-5f),
            status::overlapping_output);
  EXPECT_EQ(normkit::rms_norm_fwd<llama>(X, G, y.data(), st.data(), rows, cols, 1e-5f, cols - 1, cols),
            status::invalid_stride);
  EXPECT_TRUE(fwd_untouched()) << "a rejected forward call wrote";

  // backward_reduce: the output may not overlap the partials.
  std::vector<float> part(2 * cols, 1.0f);
  EXPECT_EQ(normkit::backward_reduce(part.data(), 2, cols, part.data() + cols), status::overlapping_output);
  EXPECT_EQ(normkit::backward_reduce(static_cast<const float*>(nullptr), 2, cols, dg.data()),
            status::null_pointer);
  EXPECT_TRUE(untouched());
}

INSTANTIATE_TEST_SUITE_P(Isa, BackwardParity, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
