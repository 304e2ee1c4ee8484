// SPDX-License-Identifier: MIT
// Public API behaviour (README, status table; core/validate.hpp): every argument error returns
// the status of its class (null_pointer, invalid_stride, invalid_eps, misaligned_pointer, size_overflow,
// overlapping_output) and touches nothing; rows == 0 / cols == 0 are no-ops; in place equals
// out of place; strided rows leave the gaps alone and give the contiguous bits; the nullptr
// gamma / beta overloads mean "gain 1" / "no bias"; normkit::convert's argument checks;
// to_string(status). Run through every ISA, since in-place, strides and null gains reach the
// kernels.
#include "bad_inputs.hpp"
#include "support.hpp"

#include <cstddef>      // std::size_t, std::ptrdiff_t
#include <cstdint>      // std::uint64_t, std::uintptr_t
#include <cstring>      // std::memset, std::memcmp
#include <limits>       // std::numeric_limits
#include <set>          // std::set
#include <string>       // std::string
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

namespace {

using namespace normkit_test;
using normkit::isa;
using normkit::status;

// ---- The two ops behind one interface (x, gamma, beta, y, rows, cols, eps, x_stride, y_stride) ----
template <class Policy, class In, class W, class Out>
struct rms_api {
  using in_t = In;
  using w_t = W;
  using out_t = Out;
  static constexpr bool has_beta = false;
  static std::string name() {
    return std::string("rms_norm<") + type_name<In>() + "," + type_name<W>() + "," + type_name<Out>() + ">";
  }
  static status call(const In* x, const W* g, const W*, Out* y, std::size_t rows, std::size_t cols, float eps,
                     std::size_t xs, std::size_t ys) {
    return normkit::rms_norm<Policy>(x, g, y, rows, cols, eps, xs, ys);
  }
  static status call(const In* x, const W* g, const W*, Out* y, std::size_t rows, std::size_t cols,
                     float eps) {
    return normkit::rms_norm<Policy>(x, g, y, rows, cols, eps);
  }
};

template <class Policy, class In, class W, class Out>
struct layer_api {
  using in_t = In;
  using w_t = W;
  using out_t = Out;
  static constexpr bool has_beta = true;
  static std::string name() {
    return std::string("layer_norm<") + type_name<In>() + "," + type_name<W>() + "," + type_name<Out>() + ">";
  }
  static status call(const In* x, const W* g, const W* b, Out* y, std::size_t rows, std::size_t cols,
                     float eps, std::size_t xs, std::size_t ys) {
    return normkit::layer_norm<Policy>(x, g, b, y, rows, cols, eps, xs, ys);
  }
  static status call(const In* x, const W* g, const W* b, Out* y, std::size_t rows, std::size_t cols,
                     float eps) {
    return normkit::layer_norm<Policy>(x, g, b, y, rows, cols, eps);
  }
};

// ---- Argument errors: the catalogue (bad_inputs.hpp). All tensors live in one byte arena so they
// can be made to overlap, be misaligned or be adjacent; "touches nothing" means the whole arena is
// byte-identical after. ----
using bad_inputs::arena;
using placement = bad_inputs::norm_placement;

template <class Api>
status run_in(arena& a, const placement& p) {
  using In = typename Api::in_t;
  using W = typename Api::w_t;
  using Out = typename Api::out_t;
  return Api::call(a.at<const In>(p.x), a.at<const W>(p.g), a.at<const W>(p.b), a.at<Out>(p.y), p.rows,
                   p.cols, p.eps, p.xs, p.ys);
}

// Every case of the catalogue: the library returns the catalogue's status and touches nothing
// when it rejects the call, and the catalogue's status is the one the rules (expected_status, as
// the fuzz harness uses them) give.
template <class Api>
void check_argument_errors(isa i) {
  const std::string tag = std::string(normkit::to_string(i)) + " " + Api::name() + ": ";
  const bad_inputs::norm_types types =
      bad_inputs::norm_types_of<typename Api::in_t, typename Api::w_t, typename Api::out_t>(Api::has_beta);

  {  // The harness itself: a valid call writes y, so "memory was written" below can fail.
    arena a;
    const auto before = a.snapshot();
    ASSERT_EQ(run_in<Api>(a, placement{}), status::ok) << tag;
    ASSERT_FALSE(a.same_as(before)) << tag << "a valid call wrote nothing";
  }

  for (const bad_inputs::norm_case& c : bad_inputs::norm_cases(types)) {
    placement p;
    c.edit(p);
    arena a;
    EXPECT_EQ(bad_inputs::expected_status(bad_inputs::norm_call(types, a.address(), p)), c.want)
        << tag << c.why << ": the catalogue and the rules disagree";
    const auto before = a.snapshot();
    EXPECT_EQ(run_in<Api>(a, p), c.want) << tag << c.why;
    if (c.want != status::ok) {
      EXPECT_TRUE(a.same_as(before)) << tag << c.why << ": memory was written";
    }
  }
}

class Api : public ::testing::TestWithParam<isa> {};

TEST_P(Api, ArgumentErrorsReturnTheirStatusAndTouchNothing) {
  NORMKIT_USE_ISA(GetParam());
  const isa i = GetParam();
  check_argument_errors<rms_api<normkit::llama, float, float, float>>(i);
  check_argument_errors<rms_api<normkit::llama, bf16, bf16, bf16>>(i);
  check_argument_errors<rms_api<normkit::gemma, fp16, float, bf16>>(i);
  check_argument_errors<rms_api<normkit::t5, bf16, fp16, float>>(i);
  check_argument_errors<layer_api<normkit::pytorch, float, float, float>>(i);
  check_argument_errors<layer_api<normkit::pytorch, bf16, bf16, bf16>>(i);
  check_argument_errors<layer_api<normkit::round_twice, fp16, float, bf16>>(i);
  check_argument_errors<layer_api<normkit::round_once, bf16, fp16, float>>(i);
}

// contract: rows == 0 or cols == 0 is a no-op returning ok -- even with null pointers.
template <class Api>
void check_zero_sizes(isa i) {
  using In = typename Api::in_t;
  using W = typename Api::w_t;
  using Out = typename Api::out_t;
  const std::string tag = std::string(normkit::to_string(i)) + " " + Api::name() + ": ";
  EXPECT_EQ(Api::call(nullptr, nullptr, nullptr, nullptr, 0, 16, 1e-5f), status::ok)
      << tag << "rows 0, nulls";
  EXPECT_EQ(Api::call(nullptr, nullptr, nullptr, nullptr, 16, 0, 1e-5f), status::ok)
      << tag << "cols 0, nulls";
  EXPECT_EQ(Api::call(nullptr, nullptr, nullptr, nullptr, 0, 0, 1e-5f), status::ok) << tag << "both 0, nulls";
  EXPECT_EQ(Api::call(nullptr, nullptr, nullptr, nullptr, 0, 16, 1e-5f, 16, 20), status::ok) << tag;
  for (std::size_t rows : {0u, 4u}) {
    const std::size_t cols = rows ? 0 : 16;
    arena a;
    const auto before = a.snapshot();
    const placement p;
    EXPECT_EQ(Api::call(a.at<const In>(p.x), a.at<const W>(p.g), a.at<const W>(p.b), a.at<Out>(p.y), rows,
                        cols, 1e-5f),
              status::ok)
        << tag;
    EXPECT_TRUE(a.same_as(before)) << tag << "rows " << rows << " cols " << cols << " wrote memory";
  }
}

TEST_P(Api, ZeroRowsOrColsIsANoOp) {
  NORMKIT_USE_ISA(GetParam());
  check_zero_sizes<rms_api<normkit::llama, bf16, bf16, bf16>>(GetParam());
  check_zero_sizes<rms_api<normkit::gemma, float, bf16, fp16>>(GetParam());
  check_zero_sizes<layer_api<normkit::pytorch, float, float, float>>(GetParam());
  check_zero_sizes<layer_api<normkit::round_twice, bf16, fp16, bf16>>(GetParam());
}

// ---- In place, strides, null gains: results compared bit for bit ----

template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), 0xa5, n * sizeof(T));
  return v;
}

// Inputs with an outlier row (overflow path) and a NaN row besides ordinary ones, so the in-place
// and strided paths are checked on the rare branches too.
template <class In>
std::vector<In> rows_of(rng& r, std::size_t rows, std::size_t cols) {
  std::vector<In> x = normal_vec<In>(r, rows * cols, 2.0f, 0.5f);
  if (rows > 2) {
    // Row 1: +-big, alternating (the sum of squares overflows fp32 for float and bf16 inputs).
    const float big = std::is_same<In, fp16>::value ? 6e4f : 3e19f;
    for (std::size_t c = 0; c < cols; ++c)
      x[cols + c] = as<In>(c % 2 ? -big : big);
    x[2 * cols + cols / 2] = as<In>(std::numeric_limits<float>::quiet_NaN());
  }
  return x;
}

template <class Api>
void check_in_place(isa i, rng& r) {
  using In = typename Api::in_t;
  using W = typename Api::w_t;
  static_assert(std::is_same<In, typename Api::out_t>::value, "in place needs In == Out");
  const std::string tag = std::string(normkit::to_string(i)) + " " + Api::name() + " in place";
  for (std::size_t cols : {1u, 7u, 64u, 67u, 300u}) {
    const std::size_t rows = 4;
    const auto x = rows_of<In>(r, rows, cols);
    const auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f), b = uniform_vec<W>(r, cols, -0.5f, 0.5f);
    auto want = poisoned<In>(rows * cols);
    ASSERT_EQ(Api::call(x.data(), g.data(), b.data(), want.data(), rows, cols, 1e-5f), status::ok) << tag;
    auto y = x;
    ASSERT_EQ(Api::call(y.data(), g.data(), b.data(), y.data(), rows, cols, 1e-5f), status::ok) << tag;
    EXPECT_SAME_BITS(y, want, tag + " cols=" + std::to_string(cols));

    // In place with a row stride: the gaps (NaN patterns) are neither read nor written.
    const std::size_t stride = cols + 5;
    std::vector<In> s(rows * stride, as<In>(std::numeric_limits<float>::quiet_NaN()));
    for (std::size_t row = 0; row < rows; ++row)
      for (std::size_t c = 0; c < cols; ++c)
        s[row * stride + c] = x[row * cols + c];
    const auto s_before = s;
    ASSERT_EQ(Api::call(s.data(), g.data(), b.data(), s.data(), rows, cols, 1e-5f, stride, stride),
              status::ok);
    for (std::size_t row = 0; row < rows; ++row) {
      EXPECT_TRUE(same_bits(s.data() + row * stride, want.data() + row * cols, cols,
                            tag + " strided row " + std::to_string(row)));
      if (row + 1 < rows) {
        EXPECT_TRUE(same_bits(s.data() + row * stride + cols, s_before.data() + row * stride + cols,
                              stride - cols, tag + " gap after row " + std::to_string(row)));
      }
    }
  }
}

TEST_P(Api, InPlaceEqualsOutOfPlace) {
  NORMKIT_USE_ISA(GetParam());
  rng r(11);
  check_in_place<rms_api<normkit::llama, float, float, float>>(GetParam(), r);
  check_in_place<rms_api<normkit::llama, bf16, bf16, bf16>>(GetParam(), r);
  check_in_place<rms_api<normkit::gemma, fp16, bf16, fp16>>(GetParam(), r);
  check_in_place<rms_api<normkit::t5, bf16, float, bf16>>(GetParam(), r);
  check_in_place<layer_api<normkit::pytorch, float, float, float>>(GetParam(), r);
  check_in_place<layer_api<normkit::pytorch, bf16, bf16, bf16>>(GetParam(), r);
  check_in_place<layer_api<normkit::round_twice, fp16, float, fp16>>(GetParam(), r);
}

// Strided rows equal the contiguous result (same ISA and the reference), and the gaps of y keep
// their poison. The gaps of x hold NaNs: a kernel that reads them would produce NaN rows.
template <class Api, class RefApi>
void check_strides(isa i, rng& r) {
  using In = typename Api::in_t;
  using W = typename Api::w_t;
  using Out = typename Api::out_t;
  const std::string tag = std::string(normkit::to_string(i)) + " " + Api::name() + " strided";
  const std::size_t rows = 5;
  for (std::size_t cols : {1u, 9u, 64u, 65u, 131u}) {
    const auto x = rows_of<In>(r, rows, cols);
    const auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f), b = uniform_vec<W>(r, cols, -0.5f, 0.5f);
    auto want = poisoned<Out>(rows * cols), ref = poisoned<Out>(rows * cols);
    ASSERT_EQ(Api::call(x.data(), g.data(), b.data(), want.data(), rows, cols, 1e-5f), status::ok) << tag;
    ASSERT_EQ(RefApi::call(x.data(), g.data(), b.data(), ref.data(), rows, cols, 1e-5f), status::ok) << tag;
    EXPECT_SAME_BITS(want, ref, tag + " contiguous vs reference, cols=" + std::to_string(cols));
    for (std::size_t xs : {cols, cols + 3, 2 * cols + 17}) {
      for (std::size_t ys : {cols, cols + 1, cols + 11}) {
        std::vector<In> sx((rows - 1) * xs + cols, as<In>(std::numeric_limits<float>::quiet_NaN()));
        for (std::size_t row = 0; row < rows; ++row)
          for (std::size_t c = 0; c < cols; ++c)
            sx[row * xs + c] = x[row * cols + c];
        auto sy = poisoned<Out>((rows - 1) * ys + cols + 8);  // + 8: a poisoned tail after the last row
        const auto sy_before = sy;
        ASSERT_EQ(Api::call(sx.data(), g.data(), b.data(), sy.data(), rows, cols, 1e-5f, xs, ys), status::ok);
        const std::string what =
            tag + " cols=" + std::to_string(cols) + " xs=" + std::to_string(xs) + " ys=" + std::to_string(ys);
        for (std::size_t row = 0; row < rows; ++row) {
          EXPECT_TRUE(same_bits(sy.data() + row * ys, want.data() + row * cols, cols, what));
          const std::size_t gap_end = row + 1 < rows ? (row + 1) * ys : sy.size();
          EXPECT_TRUE(same_bits(sy.data() + row * ys + cols, sy_before.data() + row * ys + cols,
                                gap_end - row * ys - cols, what + " gap"));
        }
      }
    }
  }
}

template <class Policy>
struct ref_rms {
  template <class In, class W, class Out>
  static status call(const In* x, const W* g, const W*, Out* y, std::size_t rows, std::size_t cols,
                     float eps) {
    return normkit::reference::rms_norm<Policy>(x, g, y, rows, cols, eps);
  }
};
template <class Policy>
struct ref_layer {
  template <class In, class W, class Out>
  static status call(const In* x, const W* g, const W* b, Out* y, std::size_t rows, std::size_t cols,
                     float eps) {
    return normkit::reference::layer_norm<Policy>(x, g, b, y, rows, cols, eps);
  }
};

TEST_P(Api, StridedRowsEqualContiguousAndLeaveGapsAlone) {
  NORMKIT_USE_ISA(GetParam());
  rng r(12);
  check_strides<rms_api<normkit::llama, bf16, bf16, bf16>, ref_rms<normkit::llama>>(GetParam(), r);
  check_strides<rms_api<normkit::gemma3n, float, float, float>, ref_rms<normkit::gemma3n>>(GetParam(), r);
  check_strides<rms_api<normkit::t5, fp16, bf16, float>, ref_rms<normkit::t5>>(GetParam(), r);
  check_strides<layer_api<normkit::pytorch, bf16, float, bf16>, ref_layer<normkit::pytorch>>(GetParam(), r);
  check_strides<layer_api<normkit::round_twice, float, fp16, fp16>, ref_layer<normkit::round_twice>>(
      GetParam(), r);
}

// ---- nullptr gamma / beta: the overloads compile and mean g = 1 / no bias ----

// contract: g_i = 1.0f when gamma is null -- for plain gains the same as explicit ones; for the
// 1 + gamma offset (Gemma) the same as explicit zeros. The nullptr overload takes W = In.
template <class Policy, class In, class Out>
void check_rms_null_gamma(isa i, rng& r, float explicit_gamma) {
  const std::string tag = std::string(normkit::to_string(i)) + " rms_norm null gamma " + type_name<In>() +
                          "->" + type_name<Out>();
  const std::size_t rows = 3;
  for (std::size_t cols : {5u, 64u, 100u}) {
    const auto x = rows_of<In>(r, rows, cols);
    const std::vector<In> g(cols, as<In>(explicit_gamma));
    auto want = poisoned<Out>(rows * cols), got = poisoned<Out>(rows * cols),
         got_s = poisoned<Out>(rows * cols);
    ASSERT_EQ(normkit::rms_norm<Policy>(x.data(), g.data(), want.data(), rows, cols, 1e-6f), status::ok);
    ASSERT_EQ(normkit::rms_norm<Policy>(x.data(), nullptr, got.data(), rows, cols, 1e-6f), status::ok);
    ASSERT_EQ(normkit::rms_norm<Policy>(x.data(), nullptr, got_s.data(), rows, cols, 1e-6f, cols, cols),
              status::ok);
    EXPECT_SAME_BITS(got, want, tag);
    EXPECT_SAME_BITS(got_s, want, tag + " (strided overload)");
  }
}

TEST_P(Api, NullGammaIsGainOne) {
  NORMKIT_USE_ISA(GetParam());
  rng r(13);
  check_rms_null_gamma<normkit::round_once, float, float>(GetParam(), r, 1.0f);
  check_rms_null_gamma<normkit::llama, bf16, bf16>(GetParam(), r, 1.0f);
  check_rms_null_gamma<normkit::gemma3n, fp16, float>(GetParam(), r, 1.0f);
  check_rms_null_gamma<normkit::t5, bf16, float>(GetParam(), r, 1.0f);
  check_rms_null_gamma<normkit::onnx, fp16, fp16>(GetParam(), r, 1.0f);
  check_rms_null_gamma<normkit::gemma, bf16, bf16>(GetParam(), r, 0.0f);  // 1 + 0
  check_rms_null_gamma<normkit::gemma, float, fp16>(GetParam(), r, 0.0f);
}

// LayerNorm: (null, null) == (ones, -0s), (g, null) == (g, -0s), (null, b) == (ones, b). "No
// bias" is a plain product Out(n * g); fma(n, g, -0) is that product for every n * g (signed
// zeros included), while fma(n, g, +0) turns a -0 product into +0.
template <class Policy, class In, class W, class Out>
void check_layer_null(isa i, rng& r) {
  const std::string tag = std::string(normkit::to_string(i)) + " layer_norm null gamma/beta " +
                          type_name<In>() + "," + type_name<W>() + "->" + type_name<Out>();
  const std::size_t rows = 3;
  for (std::size_t cols : {5u, 64u, 100u}) {
    const auto x = rows_of<In>(r, rows, cols);
    const auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f), b = uniform_vec<W>(r, cols, -0.5f, 0.5f);
    const std::vector<W> ones(cols, as<W>(1.0f)), neg_zeros(cols, as<W>(-0.0f));
    const std::vector<In> ones_in(cols, as<In>(1.0f)), neg_zeros_in(cols, as<In>(-0.0f));
    const std::size_t n = rows * cols;
    auto want = poisoned<Out>(n), got = poisoned<Out>(n);
    const auto run_ok = [&](status s) { ASSERT_EQ(s, status::ok) << tag; };

    run_ok(normkit::layer_norm<Policy>(x.data(), ones_in.data(), neg_zeros_in.data(), want.data(), rows, cols,
                                       1e-5f));
    run_ok(normkit::layer_norm<Policy>(x.data(), nullptr, nullptr, got.data(), rows, cols, 1e-5f));
    EXPECT_SAME_BITS(got, want, tag + " (null, null)");
    got = poisoned<Out>(n);
    run_ok(
        normkit::layer_norm<Policy>(x.data(), nullptr, nullptr, got.data(), rows, cols, 1e-5f, cols, cols));
    EXPECT_SAME_BITS(got, want, tag + " (null, null) strided");

    run_ok(normkit::layer_norm<Policy>(x.data(), g.data(), neg_zeros.data(), want.data(), rows, cols, 1e-5f));
    got = poisoned<Out>(n);
    run_ok(normkit::layer_norm<Policy>(x.data(), g.data(), nullptr, got.data(), rows, cols, 1e-5f));
    EXPECT_SAME_BITS(got, want, tag + " (gamma, null)");
    got = poisoned<Out>(n);
    run_ok(
        normkit::layer_norm<Policy>(x.data(), g.data(), nullptr, got.data(), rows, cols, 1e-5f, cols, cols));
    EXPECT_SAME_BITS(got, want, tag + " (gamma, null) strided");

    run_ok(normkit::layer_norm<Policy>(x.data(), ones.data(), b.data(), want.data(), rows, cols, 1e-5f));
    got = poisoned<Out>(n);
    run_ok(normkit::layer_norm<Policy>(x.data(), nullptr, b.data(), got.data(), rows, cols, 1e-5f));
    EXPECT_SAME_BITS(got, want, tag + " (null, beta)");
    got = poisoned<Out>(n);
    run_ok(
        normkit::layer_norm<Policy>(x.data(), nullptr, b.data(), got.data(), rows, cols, 1e-5f, cols, cols));
    EXPECT_SAME_BITS(got, want, tag + " (null, beta) strided");
  }
}

TEST_P(Api, NullGammaBetaAreGainOneAndNoBias) {
  NORMKIT_USE_ISA(GetParam());
  rng r(14);
  check_layer_null<normkit::pytorch, float, float, float>(GetParam(), r);
  check_layer_null<normkit::pytorch, bf16, bf16, bf16>(GetParam(), r);
  check_layer_null<normkit::round_twice, bf16, float, float>(GetParam(), r);
  check_layer_null<normkit::round_once, fp16, bf16, fp16>(GetParam(), r);
}

// No bias is a plain product, not fma with +0. With gamma = -0 every product n * g is a zero whose
// sign is the opposite of n's: Out(n * g) keeps it, fma(n, g, +0) would give +0 for every column
// (an exact zero plus +0 is +0) -- so a kernel that emulates "no bias" with a +0 bias fails here.
TEST_P(Api, NoBiasKeepsTheSignOfAZeroProduct) {
  NORMKIT_USE_ISA(GetParam());
  rng r(15);
  for (std::size_t cols : {7u, 77u}) {
    const auto x = normal_vec<float>(r, cols);
    const std::vector<float> g(cols, -0.0f), ones(cols, 1.0f), zeros(cols, 0.0f);
    std::vector<float> n(cols), no_bias(cols), plus_zero(cols);
    ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), ones.data(), nullptr, n.data(), 1, cols, 1e-5f),
              status::ok);
    ASSERT_EQ(
        normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), nullptr, no_bias.data(), 1, cols, 1e-5f),
        status::ok);
    ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), zeros.data(), plus_zero.data(), 1,
                                                    cols, 1e-5f),
              status::ok);
    for (std::size_t c = 0; c < cols; ++c) {
      ASSERT_NE(n[c], 0.0f) << "column " << c;  // n's sign is known from the gain-1 run
      EXPECT_EQ(bits(no_bias[c]), n[c] > 0.0f ? 0x80000000u : 0u) << "layer_norm, no bias, column " << c;
      EXPECT_EQ(bits(plus_zero[c]), 0u) << "layer_norm, bias +0, column " << c;
    }
    // rms_norm never has a bias: y = Out(n * -0), n with the sign of x.
    std::vector<float> y(cols);
    ASSERT_EQ(normkit::rms_norm<normkit::pytorch>(x.data(), g.data(), y.data(), 1, cols, 1e-5f), status::ok);
    for (std::size_t c = 0; c < cols; ++c)
      EXPECT_EQ(bits(y[c]), x[c] > 0.0f ? 0x80000000u : 0u) << "rms_norm, column " << c;
  }
}

// ---- normkit::convert: the same argument rules, minus eps and strides (its own check) ----

template <class Src, class Dst>
void check_convert_errors(isa i) {
  const std::string tag =
      std::string(normkit::to_string(i)) + " convert<" + type_name<Src>() + "," + type_name<Dst>() + ">: ";
  const bad_inputs::convert_types types = bad_inputs::convert_types_of<Src, Dst>();
  const auto run = bad_inputs::run_convert<Src, Dst>;
  {
    arena a;
    const auto before = a.snapshot();
    ASSERT_EQ(run(a, bad_inputs::convert_placement{}), status::ok);
    if (!std::is_same<Src, Dst>::value) {
      EXPECT_FALSE(a.same_as(before)) << tag << "a valid call wrote nothing";
    }
  }
  for (const bad_inputs::convert_case& c : bad_inputs::convert_cases(types)) {
    bad_inputs::convert_placement p;
    c.edit(p);
    arena a;
    EXPECT_EQ(bad_inputs::expected_status(bad_inputs::convert_call(types, a.address(), p)), c.want)
        << tag << c.why << ": the catalogue and the rules disagree";
    const auto before = a.snapshot();
    EXPECT_EQ(run(a, p), c.want) << tag << c.why;
    if (c.want != status::ok) {
      EXPECT_TRUE(a.same_as(before)) << tag << c.why << ": memory was written";
    }
  }
}

// In place (dst == src, same type) gives the out-of-place bits.
template <class T>
void check_convert_in_place(isa i) {
  rng r(16);
  const auto src = raw_bits_vec<T>(r, 1000);
  std::vector<T> want(src.size());
  ASSERT_EQ(normkit::convert(src.data(), want.data(), src.size()), status::ok);
  auto v = src;
  ASSERT_EQ(normkit::convert(v.data(), v.data(), v.size()), status::ok);
  EXPECT_SAME_BITS(v, want, std::string(normkit::to_string(i)) + " convert in place " + type_name<T>());
}

TEST_P(Api, ConvertArgumentErrors) {
  NORMKIT_USE_ISA(GetParam());
  const isa i = GetParam();
  check_convert_errors<float, bf16>(i);
  check_convert_errors<bf16, float>(i);
  check_convert_errors<fp16, bf16>(i);
  check_convert_errors<bf16, bf16>(i);
  check_convert_errors<float, float>(i);
  check_convert_in_place<float>(i);
  check_convert_in_place<bf16>(i);
  check_convert_in_place<fp16>(i);
}

INSTANTIATE_TEST_SUITE_P(Isa, Api, ::testing::ValuesIn(all_isas()), isa_param_name);

TEST(Status, ToStringNamesEveryValue) {
  static_assert(normkit::to_string(status::ok)[0] == 'o', "usable in constant expressions");
  EXPECT_STREQ(normkit::to_string(status::ok), "ok");
  EXPECT_EQ(static_cast<int>(status::ok), 0);  // `if (s != status::ok)` and `!static_cast<int>(s)` agree
  // Each class: its own value, a message that starts with the enumerator's name and says what to
  // pass instead (the phrase after the name), and is_invalid_argument() for argument errors.
  struct row {
    status s;
    const char* name;
    const char* advice;
    bool argument_error;
  };
  const row rows[] = {
      {status::null_pointer, "null_pointer", "pass valid buffers or zero sizes", true},
      {status::invalid_stride, "invalid_stride", "pass a stride >= cols", true},
      {status::size_overflow, "size_overflow", "check rows, cols and the strides", true},
      {status::invalid_eps, "invalid_eps", "pass a finite eps >= 0", true},
      {status::misaligned_pointer, "misaligned_pointer", "pass element-aligned pointers", true},
      {status::overlapping_output, "overlapping_output", "use a separate output buffer", true},
      {status::unsupported_isa, "unsupported_isa", "nothing was changed", false},
      {status::isa_above_ceiling, "isa_above_ceiling", "unset or raise NORMKIT_ISA", false},
      {status::shape_mismatch, "shape_mismatch", "pass matching shapes", true},
      {status::out_of_memory, "out_of_memory", "nothing was written", false},
  };
  std::set<int> values{0};
  for (const row& r : rows) {
    const std::string text = normkit::to_string(r.s);
    EXPECT_EQ(text.rfind(std::string(r.name) + ": ", 0), 0u) << text;
    EXPECT_NE(text.find(r.advice), std::string::npos) << text;
    EXPECT_EQ(normkit::is_invalid_argument(r.s), r.argument_error) << r.name;
    EXPECT_TRUE(values.insert(static_cast<int>(r.s)).second) << r.name << " shares a value";
  }
  EXPECT_FALSE(normkit::is_invalid_argument(status::ok));
  EXPECT_STREQ(normkit::to_string(static_cast<status>(99)), "unknown status");
}

// The 0.1 enumerator still compiles (with a deprecation warning, silenced here), keeps its value,
// is never returned, and is_invalid_argument() is the replacement for comparing against it.
TEST(Status, DeprecatedInvalidArgumentStillCompiles) {
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  const status legacy = status::invalid_argument;
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
  EXPECT_EQ(static_cast<int>(legacy), 1);
  EXPECT_TRUE(normkit::is_invalid_argument(legacy));
  EXPECT_EQ(std::string(normkit::to_string(legacy)).rfind("invalid_argument: ", 0), 0u);
  const float x[4] = {1, 2, 3, 4};
  float y[4];
  const status s = normkit::rms_norm<normkit::llama>(x, static_cast<const float*>(nullptr), y, 1, 4, -1.0f);
  EXPECT_EQ(s, status::invalid_eps);
  EXPECT_NE(static_cast<int>(s), static_cast<int>(legacy));
}

}  // namespace
