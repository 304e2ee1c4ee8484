// SPDX-License-Identifier: MIT
// The canonical reduction order (docs/contract.md, "Canonical sum") is what the reference and every ISA
// implement. The rows below put large and small magnitudes at chosen indices mod 64 so that the
// sum of squares depends on the order; the expected outputs come from this file's own reading of
// the contract (and, for a few rows, from sums worked out by hand), never from the library.
#include "support.hpp"

#include <array>       // std::array
#include <cmath>       // std::fma, std::sqrt, std::ldexp
#include <cstddef>     // std::size_t
#include <cstdint>     // std::uint32_t
#include <functional>  // std::function
#include <stdexcept>   // std::logic_error
#include <string>      // std::string, std::to_string
#include <vector>      // std::vector

namespace {

using namespace normkit_test;
using normkit::isa;

// Keeps the compiler from fusing a product into a following add (-ffp-contract=fast fuses across
// statements), for the "mul then add" alternative only.
float no_fuse(float v) {
  volatile float t = v;
  return t;
}

// ---- The contract, read from docs/contract.md ----
// "K = 64 partial sums. Term i goes to partial i mod K, in increasing i, with an FMA where the term
//  is a square (p = fma(a, a, p)), an add otherwise. The row acts as if zero-padded to a multiple of
//  K. Then fold halves: for w = 32, 16, 8, 4, 2, 1: p[k] = p[k] + p[k + w] for k < w. Result p[0]."
float fold_halves_64(std::array<float, 64>& p) {
  for (std::size_t w = 32; w >= 1; w /= 2)
    for (std::size_t k = 0; k < w; ++k)
      p[k] = p[k] + p[k + w];
  return p[0];
}

float csum_squares(const std::vector<float>& a) {
  std::array<float, 64> p{};
  for (std::size_t i = 0; i < a.size(); ++i)
    p[i % 64] = std::fma(a[i], a[i], p[i % 64]);
  return fold_halves_64(p);
}

float csum_plain(const std::vector<float>& a) {
  std::array<float, 64> p{};
  for (std::size_t i = 0; i < a.size(); ++i)
    p[i % 64] = p[i % 64] + a[i];
  return fold_halves_64(p);
}

// ---- Orders a kernel could plausibly use instead (each must be told apart by some row) ----
struct order {
  const char* name;
  std::function<float(const std::vector<float>&)> sum_squares;
};

// K partials (K != 64), fold halves: the natural order of an 8- or 16-lane kernel.
float k_partials(const std::vector<float>& a, std::size_t k) {
  std::vector<float> p(k, 0.0f);
  for (std::size_t i = 0; i < a.size(); ++i)
    p[i % k] = std::fma(a[i], a[i], p[i % k]);
  for (std::size_t w = k / 2; w >= 1; w /= 2)
    for (std::size_t j = 0; j < w; ++j)
      p[j] = p[j] + p[j + w];
  return p[0];
}

const std::vector<order>& alternative_orders() {
  static const std::vector<order> orders = {
      {"sequential fma",
       [](const std::vector<float>& a) {
         float s = 0.0f;
         for (float v : a)
           s = std::fma(v, v, s);
         return s;
       }},
      {"sequential mul+add",
       [](const std::vector<float>& a) {
         float s = 0.0f;
         for (float v : a)
           s = s + no_fuse(v * v);
         return s;
       }},
      {"64 partials, mul+add",
       [](const std::vector<float>& a) {
         std::array<float, 64> p{};
         for (std::size_t i = 0; i < a.size(); ++i)
           p[i % 64] = p[i % 64] + no_fuse(a[i] * a[i]);
         return fold_halves_64(p);
       }},
      {"8 partials", [](const std::vector<float>& a) { return k_partials(a, 8); }},
      {"16 partials", [](const std::vector<float>& a) { return k_partials(a, 16); }},
      {"32 partials", [](const std::vector<float>& a) { return k_partials(a, 32); }},
      {"128 partials", [](const std::vector<float>& a) { return k_partials(a, 128); }},
      {"64 partials, fold adjacent pairs",
       [](const std::vector<float>& a) {
         std::array<float, 64> p{};
         for (std::size_t i = 0; i < a.size(); ++i)
           p[i % 64] = std::fma(a[i], a[i], p[i % 64]);
         for (std::size_t n = 64; n > 1; n /= 2)
           for (std::size_t k = 0; k < n / 2; ++k)
             p[k] = p[2 * k] + p[2 * k + 1];
         return p[0];
       }},
      {"64 partials, linear fold",
       [](const std::vector<float>& a) {
         std::array<float, 64> p{};
         for (std::size_t i = 0; i < a.size(); ++i)
           p[i % 64] = std::fma(a[i], a[i], p[i % 64]);
         float s = 0.0f;
         for (float v : p)
           s = s + v;
         return s;
       }},
      {"alignment peel of 3, then lanes restart at partial 0",
       [](const std::vector<float>& a) {
         // A kernel that handles 3 leading elements before its aligned loads but counts the
         // partials of the main loop from its own start. (A rotation of the whole assignment,
         // p[(i + r) % 64], is not a distinct order: fold-halves gives the same sum for any
         // cyclic rotation, since each fold step then adds the same pairs.)
         std::array<float, 64> p{};
         for (std::size_t i = 0; i < a.size(); ++i) {
           const std::size_t k = i < 3 ? i : (i - 3) % 64;
           p[k] = std::fma(a[i], a[i], p[k]);
         }
         return fold_halves_64(p);
       }},
      {"64 partials, tail added after the fold",
       [](const std::vector<float>& a) {
         std::array<float, 64> p{};
         const std::size_t body = a.size() / 64 * 64;
         for (std::size_t i = 0; i < body; ++i)
           p[i % 64] = std::fma(a[i], a[i], p[i % 64]);
         float s = fold_halves_64(p);
         for (std::size_t i = body; i < a.size(); ++i)
           s = std::fma(a[i], a[i], s);
         return s;
       }},
      {"64 partials, tail restarts at partial 0 of a register of 8",
       [](const std::vector<float>& a) {
         // A kernel that peels the tail into whole 8-lane registers but restarts the register
         // index at 0 for each leftover register (a plausible indexing bug).
         std::array<float, 64> p{};
         const std::size_t body = a.size() / 64 * 64;
         for (std::size_t i = 0; i < body; ++i)
           p[i % 64] = std::fma(a[i], a[i], p[i % 64]);
         for (std::size_t i = body; i < a.size(); ++i)
           p[(i - body) % 8] = std::fma(a[i], a[i], p[(i - body) % 8]);
         return fold_halves_64(p);
       }},
      {"double accumulation",
       [](const std::vector<float>& a) {
         double s = 0.0;
         for (float v : a)
           s += static_cast<double>(v) * v;
         return static_cast<float>(s);
       }},
  };
  return orders;
}

const order& find_order(const std::string& name) {
  for (const order& o : alternative_orders())
    if (name == o.name)
      return o;
  throw std::logic_error("no order named " + name);
}

// ---- Rows whose sum of squares depends on the order ----
struct row_case {
  std::string name;
  std::vector<float> x;
};

std::vector<row_case> adversarial_rows() {
  std::vector<row_case> rows;
  const std::size_t lengths[] = {2,   5,   31,  63,  64,  65,  66,  96,  100,  127, 128,
                                 129, 191, 192, 193, 200, 255, 256, 257, 1000, 4097};
  rng r(20240611);
  for (std::size_t d : lengths) {
    const std::string len = " d=" + std::to_string(d);
    // 4096^2 = 2^24 in one partial, ones (squares 1, below half an ulp of 2^24) elsewhere: only
    // ones gathered in other partials before meeting the big term survive.
    for (std::size_t big_at : {std::size_t{0}, std::size_t{1}, std::size_t{63}, d / 2, d - 1}) {
      if (big_at >= d)
        continue;
      std::vector<float> x(d, 1.0f);
      x[big_at] = 4096.0f;
      rows.push_back({"big at " + std::to_string(big_at) + ", ones" + len, x});
      std::vector<float> y(d, 0.0f);  // ones only at odd indices
      for (std::size_t i = 1; i < d; i += 2)
        y[i] = 1.0f;
      y[big_at] = 4096.0f;
      rows.push_back({"big at " + std::to_string(big_at) + ", odd ones" + len, y});
    }
    // Big terms at every index = j mod 64, small ones elsewhere.
    for (std::size_t j : {0u, 7u, 32u, 63u}) {
      std::vector<float> x(d);
      for (std::size_t i = 0; i < d; ++i)
        x[i] = i % 64 == j ? 2048.0f + static_cast<float>(i % 3) : 0.75f;
      rows.push_back({"big at " + std::to_string(j) + " mod 64" + len, x});
    }
    // Magnitudes over 2^-10 .. 2^10 with random 24-bit mantissas: squares are inexact, so fma
    // and mul+add differ, and partial sums of different sizes meet in every order.
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<float> x(d);
      for (auto& v : x) {
        const float m = 1.0f + r.uniform();
        const int e = static_cast<int>(r.u32() % 21u) - 10;
        v = (r.u32() & 1u ? -1.0f : 1.0f) * std::ldexp(m, e);
      }
      rows.push_back({"random magnitudes #" + std::to_string(rep) + len, x});
    }
    // Similar magnitudes in [1, 2) with full mantissas: where fma and mul + add part ways.
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<float> x(d);
      for (auto& v : x)
        v = 1.0f + r.uniform();
      rows.push_back({"uniform [1, 2) #" + std::to_string(rep) + len, x});
    }
  }
  return rows;
}

// contract: ms = s / float(d); inv = 1.0f / sqrt(ms + eps); n_i = f(x_i) * inv; round_once with
// no gain: y_i = Out(n_i).
template <class Out>
std::vector<Out> rms_from_sum(const std::vector<float>& x, float s, float eps) {
  const float ms = s / static_cast<float>(x.size());
  const float inv = 1.0f / std::sqrt(ms + eps);
  std::vector<Out> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = normkit::from_float<Out>(x[i] * inv);
  return y;
}

template <class T>
std::vector<float> widen(const std::vector<T>& v) {
  std::vector<float> f(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    f[i] = normkit::to_float(v[i]);
  return f;
}

constexpr float eps = 1e-5f;

// Hand-worked sums: [4096, 1, 0, 1] -- canonical: p0 = 2^24, p1 = p3 = 1; the fold w = 2 makes
// p1 = 2, then p0 + p1 = 2^24 + 2 (exact). Sequentially 2^24 + 1 rounds to 2^24 (tie to even)
// twice: 2^24.
TEST(CanonicalSum, HandWorkedRowsAnchorTheIndependentSum) {
  const std::vector<float> a = {4096.0f, 1.0f, 0.0f, 1.0f};
  EXPECT_EQ(csum_squares(a), 16777218.0f);
  EXPECT_EQ(find_order("sequential fma").sum_squares(a), 16777216.0f);
  // d = 98: x_0 = 4096, x_32 = x_96 = 1. Canonical: p32 = 1 + 1 = 2 (both are 32 mod 64), then
  // fold w = 32 gives p0 = 2^24 + 2. With 32 partials both ones meet 2^24 one at a time: 2^24.
  std::vector<float> b(98, 0.0f);
  b[0] = 4096.0f;
  b[32] = 1.0f;
  b[96] = 1.0f;
  EXPECT_EQ(csum_squares(b), 16777218.0f);
  EXPECT_EQ(k_partials(b, 32), 16777216.0f);
  // d = 66: x_0 = 4096, x_1 = x_65 = 1. Canonical: x_65 is 1 mod 64, so p1 = 2 and the last fold
  // gives 2^24 + 2. A kernel that folds the first 64 and then adds the tail loses both ones: 2^24.
  std::vector<float> c(66, 0.0f);
  c[0] = 4096.0f;
  c[1] = 1.0f;
  c[65] = 1.0f;
  EXPECT_EQ(csum_squares(c), 16777218.0f);
  EXPECT_EQ(find_order("64 partials, tail added after the fold").sum_squares(c), 16777216.0f);
  // The plain (non-square) sum: [2^24, 1, 0, 1] -> 2^24 + 2 canonically.
  EXPECT_EQ(csum_plain({16777216.0f, 1.0f, 0.0f, 1.0f}), 16777218.0f);
}

// The row set can tell the canonical order from every alternative: for each alternative some row
// gets a different sum AND different RMSNorm output bits. Without this, the parity checks below
// could pass with a kernel that uses the wrong order.
TEST(CanonicalSum, RowsTellEveryAlternativeOrderApart) {
  const auto rows = adversarial_rows();
  for (const order& o : alternative_orders()) {
    std::size_t differing = 0;
    for (const row_case& rc : rows) {
      const float want = csum_squares(rc.x), alt = o.sum_squares(rc.x);
      if (bits(want) == bits(alt))
        continue;
      const auto y_want = rms_from_sum<float>(rc.x, want, eps), y_alt = rms_from_sum<float>(rc.x, alt, eps);
      if (!same_bits(y_want, y_alt, ""))
        ++differing;
    }
    EXPECT_GT(differing, 0u) << "no row distinguishes the canonical order from \"" << o.name << "\"";
    std::printf("[ rows     ] %-58s differs on %3zu of %zu rows\n", o.name, differing, rows.size());
  }
}

class CanonicalOrder : public ::testing::TestWithParam<isa> {};

// RMSNorm through the public entry point (and the reference) equals Out(x_i * inv) computed from
// this file's canonical sum, for every adversarial row, one row at a time and as one batch.
template <class In, class Out>
void check_rms_rows(isa i) {
  const auto rows = adversarial_rows();
  for (const row_case& rc : rows) {
    std::vector<In> x(rc.x.size());
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = normkit::from_float<In>(rc.x[k]);
    const std::vector<float> xf = widen(x);
    const std::vector<Out> want = rms_from_sum<Out>(xf, csum_squares(xf), eps);
    std::vector<Out> got(x.size()), ref(x.size());
    const std::string what =
        std::string(normkit::to_string(i)) + " " + type_name<In>() + "->" + type_name<Out>() + " " + rc.name;
    ASSERT_EQ(normkit::rms_norm<normkit::round_once>(x.data(), nullptr, got.data(), 1, x.size(), eps),
              normkit::status::ok);
    ASSERT_EQ(normkit::reference::rms_norm<normkit::round_once>(x.data(), static_cast<const In*>(nullptr),
                                                                ref.data(), 1, x.size(), eps),
              normkit::status::ok);
    EXPECT_SAME_BITS(got, want, what);
    EXPECT_SAME_BITS(ref, want, "reference " + what);
  }
  // All rows of one length as a batch: the order does not depend on the row's position.
  for (std::size_t d : {65u, 129u, 257u}) {
    std::vector<In> x;
    std::vector<Out> want;
    std::size_t n_rows = 0;
    for (const row_case& rc : rows) {
      if (rc.x.size() != d)
        continue;
      ++n_rows;
      std::vector<float> xf;
      for (float v : rc.x) {
        x.push_back(normkit::from_float<In>(v));
        xf.push_back(normkit::to_float(x.back()));
      }
      const auto w = rms_from_sum<Out>(xf, csum_squares(xf), eps);
      want.insert(want.end(), w.begin(), w.end());
    }
    std::vector<Out> got(want.size());
    ASSERT_EQ(normkit::rms_norm<normkit::round_once>(x.data(), nullptr, got.data(), n_rows, d, eps),
              normkit::status::ok);
    EXPECT_SAME_BITS(got, want, std::string(normkit::to_string(i)) + " batch d=" + std::to_string(d));
  }
}

TEST_P(CanonicalOrder, RmsNormUsesTheCanonicalSum) {
  NORMKIT_USE_ISA(GetParam());
  check_rms_rows<float, float>(GetParam());
  check_rms_rows<float, bf16>(GetParam());
  check_rms_rows<bf16, float>(GetParam());
  check_rms_rows<fp16, float>(GetParam());
}

// LayerNorm's two sums follow the same order. contract: K = f(x_0); d_i = f(x_i) - K;
// m = csum(d_i) / float(d); c_i = d_i - m; S = csum(c_i^2); if m * m > 16 * (S / d): K = K + m and
// the same once more; var = S / float(d); inv = 1 / sqrt(var + eps); no gain, no bias:
// y_i = Out(n_i * 1) = Out(c_i * inv). (No adversarial row takes the rescale.)
template <class In, class Out>
void check_layer_rows(isa i) {
  for (const row_case& rc : adversarial_rows()) {
    std::vector<In> x(rc.x.size());
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = normkit::from_float<In>(rc.x[k]);
    const std::vector<float> xf = widen(x);
    const std::size_t d = xf.size();
    const float fd = static_cast<float>(d);
    std::vector<float> dv(d), c(d);
    float m = 0.0f, s = 0.0f;
    auto moments = [&](float k_shift) {
      for (std::size_t k = 0; k < d; ++k)
        dv[k] = xf[k] - k_shift;
      m = csum_plain(dv) / fd;
      for (std::size_t k = 0; k < d; ++k)
        c[k] = dv[k] - m;
      s = csum_squares(c);
    };
    moments(xf[0]);
    // contract: one refinement when x_0 lies more than 4 sigma from the mean: K = K + m.
    const float mm = m * m, bound = 16.0f * (s / fd);
    if (mm > bound)
      moments(xf[0] + m);
    const float var = s / fd;
    const float inv = 1.0f / std::sqrt(var + eps);
    std::vector<Out> want(d), got(d);
    for (std::size_t k = 0; k < d; ++k)
      want[k] = normkit::from_float<Out>(c[k] * inv);
    ASSERT_EQ(normkit::layer_norm<normkit::round_once>(x.data(), nullptr, nullptr, got.data(), 1, d, eps),
              normkit::status::ok);
    EXPECT_SAME_BITS(got, want, std::string(normkit::to_string(i)) + " layer_norm " + rc.name);
  }
}

TEST_P(CanonicalOrder, LayerNormUsesTheCanonicalSum) {
  NORMKIT_USE_ISA(GetParam());
  check_layer_rows<float, float>(GetParam());
  check_layer_rows<bf16, float>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Isa, CanonicalOrder, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
