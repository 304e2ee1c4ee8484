// SPDX-License-Identifier: MIT
// The fused residual add (docs/contract.md, fused residual add) and head-wise norms, on every ISA
// this CPU has, through the public entry points:
// - residual_add equals s = f(x) + f(r) rounded by this file's own rounding (numerics.hpp), NaN
//   sums canonical;
// - add_rms_norm / add_layer_norm with the stored residual equal that add followed by the plain
//   reference norm over the expected residual, and with the fp32 sum equal the plain reference
//   norm over the fp32 sums, and FlashInfer's formula written out here on ordinary rows;
// - rms_norm_heads / layer_norm_heads equal one reference call per head;
// - bad arguments return their status and touch nothing.
// Layouts: strides with gaps, y over x, row counts that span several chunks of the composite;
// poison around every operand catches a write outside the rows.
#include "numerics.hpp"
#include "support.hpp"

#include <array>        // std::array
#include <cmath>        // std::fma, std::ldexp
#include <cstdint>      // std::uint32_t
#include <cstring>      // std::memcpy
#include <limits>       // std::numeric_limits
#include <string>       // std::string, std::to_string
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

namespace {

using namespace normkit_test;
using normkit::isa;
using normkit::status;

// ---- Independent formulations ----

// contract: s = f(x) + f(r), one fp32 add; residual = Res(s), nearest even; NaN -> canonical NaN.
template <class Res>
Res stored_sum(Res x, Res r, float& s) {
  s = f32_add(normkit::to_float(x), normkit::to_float(r));
  if (s != s)
    return from_bits<Res>(format<Res>::nan);
  return normkit::from_float<Res>(static_cast<float>(round_to<Res>(s)));
}

// The canonical sum of squares as docs/contract.md states it: 64 partials, fma, fold halves.
float csum_squares(const std::vector<float>& a) {
  std::array<float, 64> p{};
  for (std::size_t i = 0; i < a.size(); ++i)
    p[i % 64] = std::fma(a[i], a[i], p[i % 64]);
  for (std::size_t w = 32; w >= 1; w /= 2)
    for (std::size_t k = 0; k < w; ++k)
      p[k] = p[k] + p[k + w];
  return p[0];
}

// ---- Rows ----
enum class row_kind { normal, nan_in_x, overflow_sum, huge, zero, shifted, count };

template <class T>
T max_value() {
  return normkit::from_float<T>(static_cast<float>(format<T>::max));
}

// x and r rows of one kind; for overflow_sum, x + r leaves Res's range (fp32 for float, bf16).
template <class Res>
void fill_rows(rng& g, row_kind k, Res* x, Res* r, std::size_t cols) {
  for (std::size_t i = 0; i < cols; ++i) {
    float a = g.normal(), b = g.normal();
    switch (k) {
      case row_kind::normal:
        break;
      case row_kind::nan_in_x:
        if (i == cols / 2)
          a = std::numeric_limits<float>::quiet_NaN();
        break;
      case row_kind::overflow_sum:
        if (i % 3 == 0) {
          x[i] = max_value<Res>();
          r[i] = max_value<Res>();
          continue;
        }
        break;
      case row_kind::huge:  // squares overflow fp32: the norm's rescale path
        a = std::ldexp(a, 70);
        b = std::ldexp(b, 70);
        break;
      case row_kind::zero:
        a = 0.0f;
        b = -0.0f;
        break;
      default:  // shifted: LayerNorm's shift refinement
        a = f32_add(1000.0f, a);
        b = f32_add(24.0f, std::ldexp(b, -6));
        break;
    }
    x[i] = as<Res>(a);
    r[i] = as<Res>(b);
  }
  if (std::is_same<Res, fp16>::value && k == row_kind::huge)  // fp16 cannot hold 2^70
    for (std::size_t i = 0; i < cols; ++i)
      x[i] = max_value<Res>(), r[i] = as<Res>(-1.0f);
}

// A buffer with poison around and between rows; at(k) is the element k of the tensor area.
template <class T>
struct poisoned {
  std::vector<T> v;
  std::size_t lead;
  poisoned(std::size_t n, std::size_t lead_elems, std::uint32_t poison)
      : v(n + lead_elems + 32), lead(lead_elems) {
    for (auto& e : v)
      e = from_bits<T>(poison);
  }
  T* at(std::size_t k) { return v.data() + lead + k; }
};

struct shape {
  std::size_t rows, cols, x_stride, r_stride, y_stride;
  bool y_over_x;
};

std::string describe(const shape& s) {
  return std::to_string(s.rows) + "x" + std::to_string(s.cols) + " strides " + std::to_string(s.x_stride) +
         "/" + std::to_string(s.r_stride) + "/" + std::to_string(s.y_stride) + (s.y_over_x ? " y=x" : "") +
         " on " + isa_name();
}

const std::vector<shape>& shapes(bool same_type) {
  static const std::vector<shape> all = {
      {1, 1, 1, 1, 1, false},       {3, 7, 9, 7, 8, false},          {5, 64, 64, 70, 64, false},
      {4, 65, 65, 65, 80, true},    {2, 300, 333, 300, 301, false},  {1, 4097, 4097, 4097, 4097, true},
      {200, 65, 70, 65, 65, false}, {150, 130, 130, 131, 130, true}, {13, 1000, 1000, 1000, 1000, false},
      {70, 40, 40, 40, 40, true}};
  static std::vector<shape> distinct;
  if (distinct.empty())
    for (const shape& s : all)
      if (!s.y_over_x)
        distinct.push_back(s);
  return same_type ? all : distinct;
}

constexpr std::uint32_t in_poison = 0x7fa5a5a5u;  // a NaN with a payload (read into a row: NaNs)
constexpr std::uint32_t out_poison = 0x5a5a5a5au;

template <class T>
std::uint32_t poison_bits(std::uint32_t p) {
  return static_cast<std::uint32_t>(bits(from_bits<T>(p)));
}

// Outside the rows of a strided tensor nothing changed.
template <class T>
::testing::AssertionResult untouched_outside(poisoned<T>& b, std::size_t rows, std::size_t cols,
                                             std::size_t stride, std::uint32_t poison) {
  const std::uint32_t pb = poison_bits<T>(poison);
  for (std::size_t k = 0; k < b.v.size(); ++k) {
    const std::ptrdiff_t e = static_cast<std::ptrdiff_t>(k) - static_cast<std::ptrdiff_t>(b.lead);
    const bool inside = e >= 0 && static_cast<std::size_t>(e) < (rows - 1) * stride + cols &&
                        static_cast<std::size_t>(e) % stride < cols;
    if (!inside && bits(b.v[k]) != pb)
      return ::testing::AssertionFailure() << "element " << e << " outside the tensor was written";
  }
  return ::testing::AssertionSuccess();
}

// The expected stored residual and fp32 sums, row-major contiguous.
template <class Res>
void expected_add(const std::vector<Res>& x, const std::vector<Res>& r, std::vector<Res>& res,
                  std::vector<float>& sum) {
  res.resize(x.size());
  sum.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    res[i] = stored_sum(x[i], r[i], sum[i]);
}

// One fused call on one shape: its residual and y against the expected ones.
template <class Policy, bool Layer, class Res, class W, class Out>
void check_fused(const shape& s, std::uint64_t seed) {
  rng g(seed);
  const std::size_t n = s.rows * s.cols;
  std::vector<Res> x(n), r(n);
  for (std::size_t row = 0; row < s.rows; ++row)
    fill_rows(g, static_cast<row_kind>(row % static_cast<std::size_t>(row_kind::count)),
              x.data() + row * s.cols, r.data() + row * s.cols, s.cols);
  std::vector<W> gamma(s.cols), beta(s.cols);
  for (std::size_t i = 0; i < s.cols; ++i)
    gamma[i] = as<W>(g.uniform(0.5f, 1.5f)), beta[i] = as<W>(g.normal());
  const float eps = 1e-6f;

  // Expected: the add (this file), then the reference norm over what the policy normalizes.
  std::vector<Res> res_want;
  std::vector<float> sums;
  expected_add(x, r, res_want, sums);
  std::vector<Out> y_want(n);
  const bool reads_sum = Policy::residual == normkit::residual_norm::fp32_sum;
  if (reads_sum) {
    if constexpr (Layer)
      ASSERT_EQ(normkit::reference::layer_norm<Policy>(sums.data(), gamma.data(), beta.data(), y_want.data(),
                                                       s.rows, s.cols, eps),
                status::ok);
    else
      ASSERT_EQ(
          normkit::reference::rms_norm<Policy>(sums.data(), gamma.data(), y_want.data(), s.rows, s.cols, eps),
          status::ok);
  } else {
    if constexpr (Layer)
      ASSERT_EQ(normkit::reference::layer_norm<Policy>(res_want.data(), gamma.data(), beta.data(),
                                                       y_want.data(), s.rows, s.cols, eps),
                status::ok);
    else
      ASSERT_EQ(normkit::reference::rms_norm<Policy>(res_want.data(), gamma.data(), y_want.data(), s.rows,
                                                     s.cols, eps),
                status::ok);
  }

  // The call on a strided layout, poison around.
  poisoned<Res> xb(s.rows * s.x_stride, 3, in_poison), rb(s.rows * s.r_stride, 5, in_poison);
  poisoned<Out> yb(s.rows * s.y_stride, 1, out_poison);
  for (std::size_t row = 0; row < s.rows; ++row) {
    std::memcpy(static_cast<void*>(xb.at(row * s.x_stride)), x.data() + row * s.cols, s.cols * sizeof(Res));
    std::memcpy(static_cast<void*>(rb.at(row * s.r_stride)), r.data() + row * s.cols, s.cols * sizeof(Res));
  }
  Out* y = yb.at(0);
  std::size_t y_stride = s.y_stride;
  if constexpr (std::is_same<Res, Out>::value)
    if (s.y_over_x)
      y = xb.at(0), y_stride = s.x_stride;
  status st;
  if constexpr (Layer)
    st = normkit::add_layer_norm<Policy>(xb.at(0), rb.at(0), gamma.data(), beta.data(), y, s.rows, s.cols,
                                         eps, s.x_stride, s.r_stride, y_stride);
  else
    st = normkit::add_rms_norm<Policy>(xb.at(0), rb.at(0), gamma.data(), y, s.rows, s.cols, eps, s.x_stride,
                                       s.r_stride, y_stride);
  ASSERT_EQ(st, status::ok) << describe(s);
  const std::string what = std::string(Layer ? "add_layer_norm<" : "add_rms_norm<") + Policy::name + "> " +
                           type_name<Res>() + "/" + type_name<W>() + "/" + type_name<Out>() + " " +
                           describe(s);
  for (std::size_t row = 0; row < s.rows; ++row) {
    ASSERT_TRUE(same_bits(static_cast<const Res*>(rb.at(row * s.r_stride)), res_want.data() + row * s.cols,
                          s.cols, what + " residual row " + std::to_string(row)));
    ASSERT_TRUE(same_bits(static_cast<const Out*>(y + row * y_stride), y_want.data() + row * s.cols, s.cols,
                          what + " y row " + std::to_string(row)));
  }
  ASSERT_TRUE(untouched_outside(rb, s.rows, s.cols, s.r_stride, in_poison)) << what << " (residual)";
  if (y == yb.at(0))
    ASSERT_TRUE(untouched_outside(yb, s.rows, s.cols, s.y_stride, out_poison)) << what << " (y)";
  else
    ASSERT_TRUE(untouched_outside(xb, s.rows, s.cols, s.x_stride, in_poison)) << what << " (y over x)";
}

template <class Policy, bool Layer, class Res, class W, class Out>
void check_fused_shapes() {
  std::uint64_t seed = 11;
  for (const shape& s : shapes(std::is_same<Res, Out>::value))
    check_fused<Policy, Layer, Res, W, Out>(s, ++seed * 0x9e3779b97f4a7c15ull);
}

// Each policy with each Res (the residual's type, also x's), mixed gains and outputs.
template <class Policy, bool Layer>
void check_fused_types() {
  check_fused_shapes<Policy, Layer, bf16, bf16, bf16>();
  check_fused_shapes<Policy, Layer, fp16, fp16, fp16>();
  check_fused_shapes<Policy, Layer, float, float, float>();
  check_fused_shapes<Policy, Layer, bf16, float, bf16>();
  check_fused_shapes<Policy, Layer, float, bf16, bf16>();
  check_fused_shapes<Policy, Layer, fp16, float, float>();
}

class AddNorm : public ::testing::TestWithParam<isa> {};

// Stored residual (every model preset): y is the plain norm of the residual as stored.
TEST_P(AddNorm, StoredResidualIsAddThenNorm) {
  NORMKIT_USE_ISA(GetParam());
  check_fused_types<normkit::llama, false>();
  check_fused_types<normkit::gemma, false>();
  check_fused_types<normkit::t5, false>();
  check_fused_types<normkit::gemma3n, false>();
  check_fused_types<normkit::pytorch, true>();
  check_fused_types<normkit::llama, true>();
}

// fp32 sum: y is the plain norm of the fp32 sums (round twice through the input type rounds once:
// the input is fp32), the residual is still stored rounded.
TEST_P(AddNorm, Fp32SumIsTheNormOfTheSums) {
  NORMKIT_USE_ISA(GetParam());
  check_fused_types<normkit::flashinfer, false>();
  check_fused_types<normkit::flashinfer_gemma, false>();
  check_fused_types<normkit::fp32_sum_residual<normkit::llama>, false>();
  check_fused_types<normkit::fp32_sum_residual<normkit::t5>, false>();
  check_fused_types<normkit::fp32_sum_residual<normkit::pytorch>, true>();
}

// The two modes differ on 16-bit residuals (the point of the knob) and agree on fp32 ones.
TEST_P(AddNorm, ModesDifferOnlyThroughTheResidualRounding) {
  NORMKIT_USE_ISA(GetParam());
  rng g(7);
  const std::size_t rows = 16, cols = 512;
  auto run = [&](auto policy, auto tag) {
    using T = typename decltype(tag)::type;
    using P = decltype(policy);
    rng h(3);
    std::vector<T> x = normal_vec<T>(h, rows * cols), r = normal_vec<T>(h, rows * cols), y(rows * cols);
    EXPECT_EQ(normkit::add_rms_norm<P>(x.data(), r.data(), nullptr, y.data(), rows, cols, 1e-6f), status::ok);
    return y;
  };
  const auto a = run(normkit::pytorch{}, type_tag<bf16>{}), b = run(normkit::flashinfer{}, type_tag<bf16>{});
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    differ += bits(a[i]) != bits(b[i]);
  EXPECT_GT(differ, a.size() / 20) << "stored residual and fp32 sum gave nearly the same bf16 outputs";
  EXPECT_SAME_BITS(run(normkit::pytorch{}, type_tag<float>{}), run(normkit::flashinfer{}, type_tag<float>{}),
                   "fp32 residual");
  (void)g;
}

// FlashInfer FusedAddRMSNormKernel written out (include/flashinfer/norm.cuh, as core/policy.hpp
// quotes it): x = f(input) + f(residual); rms_rcp = 1 / sqrt(sum_sq / d + eps) (exact here, where
// the GPU approximates); out = Out(x * rms_rcp * (weight_bias + w)), weight_bias 0 (1: Gemma).
template <class Policy, class T>
void check_flashinfer_formula(float weight_bias) {
  rng g(101);
  for (std::size_t cols : {64u, 100u, 4096u}) {
    const std::size_t rows = 3;
    std::vector<T> x = normal_vec<T>(g, rows * cols), r = normal_vec<T>(g, rows * cols, 2.0f), y(rows * cols);
    std::vector<T> w = normal_vec<T>(g, cols, 0.25f, weight_bias == 0.0f ? 1.0f : 0.0f);
    std::vector<T> r0 = r;
    ASSERT_EQ(normkit::add_rms_norm<Policy>(x.data(), r.data(), w.data(), y.data(), rows, cols, 1e-6f),
              status::ok);
    for (std::size_t row = 0; row < rows; ++row) {
      std::vector<float> s(cols);
      for (std::size_t i = 0; i < cols; ++i)
        s[i] = f32_add(normkit::to_float(x[row * cols + i]), normkit::to_float(r0[row * cols + i]));
      const float rcp =
          f32_div(1.0f, f32_sqrt(f32_add(f32_div(csum_squares(s), static_cast<float>(cols)), 1e-6f)));
      for (std::size_t i = 0; i < cols; ++i) {
        const float v = f32_mul(f32_mul(s[i], rcp), f32_add(weight_bias, normkit::to_float(w[i])));
        ASSERT_TRUE(stores(y[row * cols + i], v))
            << Policy::name << " cols " << cols << " i " << i << " on " << isa_name();
      }
    }
  }
}

TEST_P(AddNorm, MatchesFlashInferFormula) {
  NORMKIT_USE_ISA(GetParam());
  check_flashinfer_formula<normkit::flashinfer, bf16>(0.0f);
  check_flashinfer_formula<normkit::flashinfer, fp16>(0.0f);
  check_flashinfer_formula<normkit::flashinfer_gemma, bf16>(1.0f);
}

// residual_add alone: every tail length, signed zeros, Inf - Inf, overflow, NaN payloads.
template <class T>
void check_residual_add() {
  rng g(5);
  const float specials[] = {0.0f,
                            -0.0f,
                            1.0f,
                            -1.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            static_cast<float>(format<T>::max),
                            -static_cast<float>(format<T>::max),
                            0x1p-140f};
  for (std::size_t cols = 1; cols <= 70; ++cols) {
    const std::size_t rows = 2, stride = cols + 3;
    poisoned<T> xb(rows * stride, 2, in_poison), rb(rows * stride, 1, in_poison);
    std::vector<T> x(rows * cols), r(rows * cols);
    for (std::size_t i = 0; i < rows * cols; ++i) {
      x[i] = g.u32() % 4 ? as<T>(g.normal()) : as<T>(specials[g.u32() % 10]);
      r[i] = g.u32() % 4 ? as<T>(g.normal()) : as<T>(specials[g.u32() % 10]);
      if (g.u32() % 16 == 0)
        x[i] = from_bits<T>(static_cast<std::uint32_t>(bits(x[i])) | format<T>::nan | 1u);  // NaN payload
    }
    for (std::size_t row = 0; row < rows; ++row)
      for (std::size_t i = 0; i < cols; ++i)
        *xb.at(row * stride + i) = x[row * cols + i], *rb.at(row * stride + i) = r[row * cols + i];
    ASSERT_EQ(normkit::residual_add(xb.at(0), rb.at(0), rows, cols, stride, stride), status::ok);
    for (std::size_t row = 0; row < rows; ++row)
      for (std::size_t i = 0; i < cols; ++i) {
        float s;
        const T want = stored_sum(x[row * cols + i], r[row * cols + i], s);
        ASSERT_EQ(bits(*rb.at(row * stride + i)), bits(want))
            << type_name<T>() << " cols " << cols << " i " << i << " on " << isa_name();
      }
    ASSERT_TRUE(untouched_outside(rb, rows, cols, stride, in_poison));
  }
}

TEST_P(AddNorm, ResidualAddRoundsOnceAndCanonicalizesNaN) {
  NORMKIT_USE_ISA(GetParam());
  check_residual_add<float>();
  check_residual_add<bf16>();
  check_residual_add<fp16>();
}

// Far inputs with a streamed output: the norm stage of each chunk prefetches the next chunk's x and
// residual rows (core/ahead.hpp) in its streaming loop. Prefetches change no bit: the same
// residual and y as the reference, with strides, for both norms and both residual modes.
TEST_P(AddNorm, FarStreamedChunksEqualTheReference) {
  NORMKIT_USE_ISA(GetParam());
  const pinned_stream_threshold pin(std::size_t(1) << 20);
  // 4.8 MiB of bf16 x, 8 KiB rows: past prefetches() (core/tuning.hpp), an odd chunk at the end.
  const shape far{601, 4096, 4100, 4104, 4096, false};
  check_fused<normkit::llama, false, bf16, bf16, bf16>(far, 41);
  check_fused<normkit::pytorch, true, bf16, bf16, bf16>(far, 43);
  check_fused<normkit::flashinfer, false, bf16, bf16, bf16>(far, 47);
}

// The hint the norm stage gets: chunk [r0, r0 + n) points at rows r0 + n... of x and of the
// residual (their strides in bytes), as many as the next chunk has; none for the last chunk or a
// call whose input stays in cache.
TEST(AddNormStages, NormStageCarriesTheNextChunksRows) {
  using op = normkit::detail::add_rms_norm_op;
  const std::size_t rows = 600, cols = 4096, xs = 4100, rs = 4104;
  std::vector<bf16> x(rows * xs), r(rows * rs), y(rows * cols);
  op::args<bf16, bf16, bf16> a{x.data(), r.data(), nullptr, nullptr, y.data(), rows,
                               cols,     1e-6f,    xs,      rs,      cols};
  auto hint_of = [&](std::size_t r0, std::size_t n, std::size_t call_rows) {
    normkit::detail::rows_ahead got;
    int norms = 0;
    a.rows = call_rows;
    op::run_rows<normkit::llama>(a, r0, n, nullptr, [&](auto stage, auto, const auto& args) {
      if constexpr (std::is_same<decltype(stage), normkit::detail::rms_norm_op>::value) {
        got = args.ahead;
        ++norms;
      }
    });
    EXPECT_EQ(norms, 1);
    return got;
  };
  const auto first = hint_of(0, 2, rows);
  EXPECT_EQ(first.at[0], x.data() + 2 * xs);
  EXPECT_EQ(first.at[1], r.data() + 2 * rs);
  EXPECT_EQ(first.stride[0], xs * sizeof(bf16));
  EXPECT_EQ(first.stride[1], rs * sizeof(bf16));
  EXPECT_EQ(first.rows, 2u);
  EXPECT_EQ(first.elem, sizeof(bf16));
  const auto before_last = hint_of(597, 2, rows);
  EXPECT_EQ(before_last.at[0], x.data() + 599 * xs);
  EXPECT_EQ(before_last.rows, 1u);  // only the call's last row follows
  EXPECT_EQ(hint_of(598, 2, rows).at[0], nullptr);
  EXPECT_EQ(hint_of(0, 2, 10).at[0], nullptr);  // 80 KiB of input: cached
}

// Bad arguments: their status, nothing written (x, residual and y keep their bits).
TEST_P(AddNorm, BadArgumentsReturnTheirStatusAndTouchNothing) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t rows = 4, cols = 32, n = 3 * rows * cols;
  std::vector<bf16> buf(n), before;
  rng g(9);
  for (auto& e : buf)
    e = as<bf16>(g.normal());
  before = buf;
  std::vector<bf16> gamma(cols, as<bf16>(1.0f));
  bf16* x = buf.data();
  bf16* res = buf.data() + rows * cols;
  bf16* y = buf.data() + 2 * rows * cols;
  struct bad {
    const char* what;
    status want;
    status got;
  };
  const bad cases[] = {
      {"y over the residual", status::overlapping_output,
       normkit::add_rms_norm<normkit::llama>(x, res, gamma.data(), res, rows, cols, 1e-6f)},
      {"residual over x", status::overlapping_output,
       normkit::add_rms_norm<normkit::llama>(x, x, gamma.data(), y, rows, cols, 1e-6f)},
      {"residual overlapping x partially", status::overlapping_output,
       normkit::add_rms_norm<normkit::llama>(x, x + cols, gamma.data(), y, rows, cols, 1e-6f)},
      {"y overlapping x partially", status::overlapping_output,
       normkit::add_rms_norm<normkit::llama>(x + 1, res, gamma.data(), x, rows, cols, 1e-6f)},
      {"y = x with another stride", status::overlapping_output,
       normkit::add_rms_norm<normkit::llama>(x, res, gamma.data(), x, 2, cols, 1e-6f, cols, cols, cols + 1)},
      {"gamma inside the residual", status::overlapping_output,
       normkit::add_rms_norm<normkit::llama>(x, res, static_cast<const bf16*>(res + 3), y, rows, cols,
                                             1e-6f)},
      {"beta inside y", status::overlapping_output,
       normkit::add_layer_norm<normkit::pytorch>(x, res, gamma.data(), static_cast<const bf16*>(y), y, rows,
                                                 cols, 1e-6f)},
      {"residual stride < cols", status::invalid_stride,
       normkit::add_rms_norm<normkit::llama>(x, res, gamma.data(), y, 2, cols, 1e-6f, cols, cols - 1, cols)},
      {"x stride < cols", status::invalid_stride,
       normkit::add_rms_norm<normkit::llama>(x, res, gamma.data(), y, 2, cols, 1e-6f, cols - 1, cols, cols)},
      {"NaN eps", status::invalid_eps,
       normkit::add_rms_norm<normkit::flashinfer>(x, res, gamma.data(), y, rows, cols,
                                                  std::numeric_limits<float>::quiet_NaN())},
      {"null residual", status::null_pointer,
       normkit::add_rms_norm<normkit::llama>(x, static_cast<bf16*>(nullptr), gamma.data(), y, rows, cols,
                                             1e-6f)},
      {"null x", status::null_pointer,
       normkit::add_layer_norm<normkit::pytorch>(static_cast<const bf16*>(nullptr), res, nullptr, nullptr, y,
                                                 rows, cols, 1e-6f)},
      {"misaligned residual", status::misaligned_pointer,
       normkit::add_rms_norm<normkit::llama>(x, reinterpret_cast<bf16*>(reinterpret_cast<char*>(res) + 1),
                                             gamma.data(), y, 1, cols, 1e-6f)},
      {"residual_add over itself", status::overlapping_output, normkit::residual_add(x, x, rows, cols)},
      {"residual_add stride", status::invalid_stride, normkit::residual_add(x, res, 2, cols, cols, cols - 1)},
  };
  for (const bad& c : cases)
    EXPECT_EQ(c.got, c.want) << c.what << " on " << isa_name();
  EXPECT_SAME_BITS(buf, before, "a refused call wrote");
  // Zero sizes are valid and touch nothing; y over x exactly is valid.
  EXPECT_EQ(normkit::add_rms_norm<normkit::llama>(x, res, gamma.data(), y, 0, cols, 1e-6f), status::ok);
  EXPECT_EQ(normkit::add_rms_norm<normkit::llama>(x, res, gamma.data(), y, rows, 0, 1e-6f), status::ok);
  EXPECT_SAME_BITS(buf, before, "an empty call wrote");
  EXPECT_EQ(normkit::add_rms_norm<normkit::llama>(x, res, gamma.data(), x, rows, cols, 1e-6f), status::ok);
}

// ---- Head views ----

struct head_layout {
  std::size_t tokens, heads, dim, x_ts, x_hs, y_ts, y_hs, g_hs;
  bool in_place;
};

// Packed QKV (q heads of a token contiguous, k and v after them), head-major views, per-head gains.
const head_layout head_layouts[] = {
    {5, 4, 64, (4 + 2 * 2) * 64, 64, 4 * 64, 64, 0, true},    // q of packed QKV, in place
    {3, 2, 128, (8 + 2 * 2) * 128, 128, 256, 128, 0, false},  // k of packed QKV, out of place
    {7, 3, 65, 3 * 65, 65, 3 * 70, 70, 65, false},            // Cohere: one gain per head
    {4, 6, 40, 40, 4 * 40 + 3, 40, 4 * 40 + 3, 0, true},      // head-major: head stride > token stride
    {1, 16, 128, 16 * 128, 128, 16 * 128, 128, 128, true},    // decode: one token
    {33, 2, 24, 2 * 24 + 8, 24, 2 * 24 + 8, 24, 0, false},    // short heads, many tokens
};

template <class Policy, bool Layer, class T, class W>
void check_heads(const head_layout& L, std::uint64_t seed) {
  rng g(seed);
  const std::size_t x_span = (L.tokens - 1) * L.x_ts + (L.heads - 1) * L.x_hs + L.dim;
  const std::size_t y_span = (L.tokens - 1) * L.y_ts + (L.heads - 1) * L.y_hs + L.dim;
  std::vector<T> xbuf(x_span);
  for (auto& e : xbuf)
    e = as<T>(g.normal() * 3.0f + 0.5f);
  const std::size_t g_count = L.g_hs ? (L.heads - 1) * L.g_hs + L.dim : L.dim;
  std::vector<W> gamma(g_count), beta(g_count);
  for (std::size_t i = 0; i < g_count; ++i)
    gamma[i] = as<W>(g.uniform(0.5f, 1.5f)), beta[i] = as<W>(g.normal());
  // Expected: one reference call per head.
  std::vector<T> want = xbuf;
  std::vector<T> ybuf(L.in_place ? 0 : y_span, from_bits<T>(out_poison));
  std::vector<T> want_y = L.in_place ? std::vector<T>() : ybuf;
  for (std::size_t t = 0; t < L.tokens; ++t)
    for (std::size_t h = 0; h < L.heads; ++h) {
      const T* xr = xbuf.data() + t * L.x_ts + h * L.x_hs;
      T* yr = L.in_place ? want.data() + t * L.x_ts + h * L.x_hs : want_y.data() + t * L.y_ts + h * L.y_hs;
      const W* gr = gamma.data() + h * L.g_hs;
      const W* br = beta.data() + h * L.g_hs;
      std::vector<T> row(xr, xr + L.dim);
      if constexpr (Layer)
        ASSERT_EQ(normkit::reference::layer_norm<Policy>(row.data(), gr, br, yr, 1, L.dim, 1e-5f),
                  status::ok);
      else
        ASSERT_EQ(normkit::reference::rms_norm<Policy>(row.data(), gr, yr, 1, L.dim, 1e-5f), status::ok);
    }
  status st;
  if (L.in_place) {
    if constexpr (Layer)
      st = normkit::layer_norm_heads<Policy>(xbuf.data(), gamma.data(), beta.data(), L.tokens, L.heads, L.dim,
                                             1e-5f, L.x_ts, L.x_hs, L.g_hs);
    else
      st = normkit::rms_norm_heads<Policy>(xbuf.data(), gamma.data(), L.tokens, L.heads, L.dim, 1e-5f, L.x_ts,
                                           L.x_hs, L.g_hs);
  } else {
    const T* xc = xbuf.data();
    if constexpr (Layer)
      st = normkit::layer_norm_heads<Policy>(xc, gamma.data(), beta.data(), ybuf.data(), L.tokens, L.heads,
                                             L.dim, 1e-5f, L.x_ts, L.x_hs, L.y_ts, L.y_hs, L.g_hs);
    else
      st = normkit::rms_norm_heads<Policy>(xc, gamma.data(), ybuf.data(), L.tokens, L.heads, L.dim, 1e-5f,
                                           L.x_ts, L.x_hs, L.y_ts, L.y_hs, L.g_hs);
  }
  ASSERT_EQ(st, status::ok);
  const std::string what = std::string(Layer ? "layer_norm_heads<" : "rms_norm_heads<") + Policy::name +
                           "> " + type_name<T>() + " " + std::to_string(L.tokens) + "x" +
                           std::to_string(L.heads) + "x" + std::to_string(L.dim) + " on " + isa_name();
  // Whole buffers: the heads' bits, and everything between them untouched.
  if (L.in_place)
    EXPECT_SAME_BITS(xbuf, want, what);
  else
    EXPECT_SAME_BITS(ybuf, want_y, what);
}

class Heads : public ::testing::TestWithParam<isa> {};

TEST_P(Heads, EveryHeadIsOneRowOfThePlainNorm) {
  NORMKIT_USE_ISA(GetParam());
  std::uint64_t seed = 1;
  for (const head_layout& L : head_layouts) {
    check_heads<normkit::llama, false, bf16, bf16>(L, ++seed);
    check_heads<normkit::gemma, false, bf16, float>(L, ++seed);
    check_heads<normkit::pytorch, false, float, float>(L, ++seed);
    check_heads<normkit::llama, false, fp16, fp16>(L, ++seed);
    check_heads<normkit::pytorch, true, bf16, bf16>(L, ++seed);
    check_heads<normkit::olmo2, true, float, bf16>(L, ++seed);
  }
}

TEST_P(Heads, ViewsThatOverlapThemselvesAreRefused) {
  NORMKIT_USE_ISA(GetParam());
  std::vector<bf16> buf(4096, as<bf16>(1.0f)), before = buf, g(64, as<bf16>(1.0f));
  std::vector<bf16> y(4096);
  // Heads that share elements (head stride < dim), tokens that run into the next token's heads,
  // a gain head stride inside a gain vector, y partially over x.
  EXPECT_EQ(normkit::rms_norm_heads<normkit::llama>(buf.data(), g.data(), 4, 4, 64, 1e-6f, 256, 32),
            status::invalid_stride);
  EXPECT_EQ(normkit::rms_norm_heads<normkit::llama>(buf.data(), g.data(), 4, 4, 64, 1e-6f, 128, 64),
            status::invalid_stride);
  EXPECT_EQ(normkit::rms_norm_heads<normkit::llama>(buf.data(), g.data(), 4, 4, 64, 1e-6f, 64, 128),
            status::invalid_stride);  // head-major, heads run into the next token's
  EXPECT_EQ(normkit::rms_norm_heads<normkit::llama>(buf.data(), g.data(), 4, 4, 16, 1e-6f, 256, 64, 8),
            status::invalid_stride);
  EXPECT_EQ(
      normkit::layer_norm_heads<normkit::pytorch>(static_cast<const bf16*>(buf.data()), g.data(), g.data(),
                                                  buf.data() + 32, 4, 4, 64, 1e-6f, 256, 64, 256, 64),
      status::overlapping_output);
  EXPECT_SAME_BITS(buf, before, "a refused call wrote");
  // The smallest valid strides: heads back to back, tokens back to back.
  EXPECT_EQ(normkit::rms_norm_heads<normkit::llama>(buf.data(), g.data(), 4, 4, 64, 1e-6f, 256, 64),
            status::ok);
  EXPECT_EQ(normkit::rms_norm_heads<normkit::llama>(buf.data(), g.data(), 4, 4, 64, 1e-6f, 64, 256),
            status::ok);
}

// Empty views are calls that do nothing, whatever their strides: zero-length heads with zero head
// and token strides used to divide by zero in the self-overlap check (SIGFPE).
TEST_P(Heads, EmptyViewsAreOkAndTouchNothing) {
  NORMKIT_USE_ISA(GetParam());
  std::vector<float> buf(64, 1.0f), before = buf;
  for (const std::size_t token_stride : {std::size_t{0}, std::size_t{4}})
    for (const std::size_t head_stride : {std::size_t{0}, std::size_t{2}}) {
      EXPECT_EQ(normkit::rms_norm_heads<normkit::llama>(buf.data(), static_cast<const float*>(nullptr), 3, 2,
                                                        0, 1e-6f, token_stride, head_stride),
                status::ok);
      EXPECT_EQ(normkit::layer_norm_heads<normkit::pytorch>(buf.data(), static_cast<const float*>(nullptr),
                                                            static_cast<const float*>(nullptr), 3, 2, 0,
                                                            1e-5f, token_stride, head_stride),
                status::ok);
    }
  EXPECT_SAME_BITS(buf, before, "an empty call wrote");
}

INSTANTIATE_TEST_SUITE_P(Isa, AddNorm, ::testing::ValuesIn(all_isas()), isa_param_name);
INSTANTIATE_TEST_SUITE_P(Isa, Heads, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
