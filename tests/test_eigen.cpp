// SPDX-License-Identifier: MIT
// normkit/eigen.hpp: Eigen's 16-bit scalars are read as normkit's without a copy (layout and bits),
// Eigen matrices, maps, refs and blocks give exactly the bits of the pointer entry points, and
// shapes that do not fit are refused before anything is written.
#include <gtest/gtest.h>
#include <normkit/eigen.hpp>
#include <normkit/normkit.hpp>

#include <cmath>        // std::isnan
#include <cstdint>      // std::uint16_t, std::uint32_t
#include <cstring>      // std::memcpy
#include <random>       // std::mt19937
#include <type_traits>  // std::is_trivially_copyable, std::is_standard_layout
#include <vector>       // std::vector

namespace {

using normkit::bf16;
using normkit::fp16;
template <class T>
using row_matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using col_vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// The layout facts eigen.hpp relies on, stated again where a failure names the test.
static_assert(sizeof(Eigen::bfloat16) == 2 && sizeof(bf16) == 2 && alignof(Eigen::bfloat16) == alignof(bf16),
              "");
static_assert(sizeof(Eigen::half) == 2 && sizeof(fp16) == 2 && alignof(Eigen::half) == alignof(fp16), "");
static_assert(std::is_trivially_copyable<Eigen::bfloat16>::value &&
                  std::is_standard_layout<Eigen::bfloat16>::value,
              "");
static_assert(std::is_trivially_copyable<Eigen::half>::value && std::is_standard_layout<Eigen::half>::value,
              "");
static_assert(std::is_same<normkit::eigen_storage_t<Eigen::bfloat16>, bf16>::value &&
                  std::is_same<normkit::eigen_storage_t<Eigen::half>, fp16>::value &&
                  std::is_same<normkit::eigen_storage_t<float>, float>::value,
              "");

std::uint32_t float_bits(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// Every one of the 65536 encodings: the bytes of an Eigen value, seen as normkit's type (and back),
// denote the same number -- Eigen and normkit agree on the encoding, not only on the size.
TEST(Eigen, Bf16EncodingsMeanTheSameValue) {
  for (std::uint32_t u = 0; u < 0x10000u; ++u) {
    const Eigen::bfloat16 e = Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(u));
    bf16 n;
    std::memcpy(&n, &e, sizeof n);
    ASSERT_EQ(n.bits, u);
    const float a = static_cast<float>(e), b = static_cast<float>(n);
    if (std::isnan(a))
      ASSERT_TRUE(std::isnan(b)) << std::hex << u;
    else
      ASSERT_EQ(float_bits(a), float_bits(b)) << std::hex << u;
  }
}

TEST(Eigen, HalfEncodingsMeanTheSameValue) {
  for (std::uint32_t u = 0; u < 0x10000u; ++u) {
    const Eigen::half e = Eigen::numext::bit_cast<Eigen::half>(static_cast<std::uint16_t>(u));
    fp16 n;
    std::memcpy(&n, &e, sizeof n);
    ASSERT_EQ(n.bits, u);
    const float a = static_cast<float>(e), b = static_cast<float>(n);
    if (std::isnan(a))
      ASSERT_TRUE(std::isnan(b)) << std::hex << u;
    else
      ASSERT_EQ(float_bits(a), float_bits(b)) << std::hex << u;
  }
}

template <class T>
T from_float(float v) {
  return T(v);
}

template <class T>
std::uint16_t bits16(T v) {
  return Eigen::numext::bit_cast<std::uint16_t>(v);
}
inline std::uint32_t bits_of(float v) {
  return float_bits(v);
}
inline std::uint32_t bits_of(Eigen::bfloat16 v) {
  return bits16(v);
}
inline std::uint32_t bits_of(Eigen::half v) {
  return bits16(v);
}
inline std::uint32_t bits_of(bf16 v) {
  return v.bits;
}
inline std::uint32_t bits_of(fp16 v) {
  return v.bits;
}

// The normkit copy of an Eigen buffer, byte for byte (the reference side of the comparisons).
template <class E>
std::vector<normkit::eigen_storage_t<E>> copy_of(const E* p, std::size_t n) {
  std::vector<normkit::eigen_storage_t<E>> v(n);
  std::memcpy(v.data(), p, n * sizeof(E));
  return v;
}

template <class XS, class WS, class YS>
void check_rms_matches_pointer_api() {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const Eigen::Index rows = 5, cols = 131;  // odd: SIMD tails
  row_matrix<XS> x(rows, cols);
  col_vector<WS> gamma(cols);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c)
      x(r, c) = from_float<XS>(normal(gen));
  for (Eigen::Index c = 0; c < cols; ++c)
    gamma(c) = from_float<WS>(1.0f + 0.1f * normal(gen));
  row_matrix<YS> y = row_matrix<YS>::Zero(rows, cols);
  ASSERT_EQ((normkit::rms_norm<normkit::llama>(x, gamma, y, 1e-6f)), normkit::status::ok);

  const auto xn = copy_of(x.data(), static_cast<std::size_t>(x.size()));
  const auto gn = copy_of(gamma.data(), static_cast<std::size_t>(cols));
  std::vector<normkit::eigen_storage_t<YS>> yn(static_cast<std::size_t>(x.size()));
  ASSERT_EQ(
      (normkit::rms_norm<normkit::llama>(xn.data(), gn.data(), yn.data(), static_cast<std::size_t>(rows),
                                         static_cast<std::size_t>(cols), 1e-6f)),
      normkit::status::ok);
  for (Eigen::Index i = 0; i < x.size(); ++i)
    ASSERT_EQ(bits_of(y.data()[i]), bits_of(yn[static_cast<std::size_t>(i)])) << "element " << i;
}

TEST(Eigen, MatricesGiveThePointerApiBits) {
  check_rms_matches_pointer_api<Eigen::bfloat16, Eigen::bfloat16, Eigen::bfloat16>();
  check_rms_matches_pointer_api<Eigen::half, Eigen::half, Eigen::half>();
  check_rms_matches_pointer_api<float, float, float>();
  check_rms_matches_pointer_api<Eigen::bfloat16, float, Eigen::bfloat16>();
  check_rms_matches_pointer_api<Eigen::half, Eigen::bfloat16, float>();
}

// The known answer, independent of normkit: a row of +-3 has RMS 3 (eps 0), so with gain 1 every
// output is exactly +-1, and a gemma gain stored as 0 is a gain of 1 too.
TEST(Eigen, KnownAnswer) {
  // y zeroed: GCC 12 warns (maybe-uninitialized) when a never-written heap buffer reaches the
  // entry points' `const Out*` overlap check.
  row_matrix<Eigen::bfloat16> x(2, 8), y = row_matrix<Eigen::bfloat16>::Zero(2, 8);
  for (Eigen::Index c = 0; c < 8; ++c) {
    x(0, c) = Eigen::bfloat16(c % 2 ? -3.0f : 3.0f);
    x(1, c) = Eigen::bfloat16(0.25f);
  }
  const col_vector<Eigen::bfloat16> zero = col_vector<Eigen::bfloat16>::Zero(8);
  ASSERT_EQ((normkit::rms_norm<normkit::gemma>(x, zero, y, 0.0f)), normkit::status::ok);
  for (Eigen::Index c = 0; c < 8; ++c) {
    EXPECT_EQ(static_cast<float>(y(0, c)), c % 2 ? -1.0f : 1.0f);
    EXPECT_EQ(static_cast<float>(y(1, c)), 1.0f);
  }
}

// Blocks with an outer stride, Maps with a stride, Refs: same bits as the pointer API with that
// stride; nothing outside the block is written.
TEST(Eigen, BlocksMapsAndRefsUseTheOuterStride) {
  std::mt19937 gen(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  row_matrix<Eigen::bfloat16> big(9, 100), out(9, 100);
  for (Eigen::Index i = 0; i < big.size(); ++i)
    big.data()[i] = Eigen::bfloat16(normal(gen));
  const Eigen::bfloat16 sentinel =
      Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(0x7fab));
  out.setConstant(sentinel);
  col_vector<float> gamma(37);
  for (Eigen::Index c = 0; c < 37; ++c)
    gamma(c) = 1.0f + 0.05f * normal(gen);

  // rows 2..6, cols 5..41 of a 100-wide matrix: row stride 100 on both sides.
  ASSERT_EQ((normkit::layer_norm<normkit::pytorch>(big.block(2, 5, 5, 37), gamma, nullptr,
                                                   out.block(2, 5, 5, 37), 1e-5f)),
            normkit::status::ok);
  const auto bn = copy_of(big.data(), static_cast<std::size_t>(big.size()));
  std::vector<bf16> yn(static_cast<std::size_t>(big.size()), bf16::from_bits(0x7fab));
  ASSERT_EQ((normkit::layer_norm<normkit::pytorch>(bn.data() + 2 * 100 + 5, gamma.data(), nullptr,
                                                   yn.data() + 2 * 100 + 5, 5, 37, 1e-5f, 100, 100)),
            normkit::status::ok);
  for (Eigen::Index i = 0; i < big.size(); ++i)
    ASSERT_EQ(bits_of(out.data()[i]), yn[static_cast<std::size_t>(i)].bits) << "element " << i;

  // A Map with an outer stride (every other row of `big`) into a Ref of a fresh matrix.
  const Eigen::Map<const row_matrix<Eigen::bfloat16>, 0, Eigen::OuterStride<>> every_other(
      big.data(), 4, 100, Eigen::OuterStride<>(200));
  row_matrix<Eigen::bfloat16> y = row_matrix<Eigen::bfloat16>::Zero(4, 100);
  Eigen::Ref<row_matrix<Eigen::bfloat16>> y_ref(y);
  ASSERT_EQ((normkit::rms_norm<normkit::llama>(every_other, nullptr, y_ref, 1e-6f)), normkit::status::ok);
  std::vector<bf16> y2(400);
  ASSERT_EQ((normkit::rms_norm<normkit::llama>(bn.data(), nullptr, y2.data(), 4, 100, 1e-6f, 200, 100)),
            normkit::status::ok);
  for (std::size_t i = 0; i < 400; ++i)
    ASSERT_EQ(bits_of(y.data()[i]), y2[i].bits) << "element " << i;

  // A Ref<const> input, in place output rows of the same matrix type.
  const Eigen::Ref<const row_matrix<Eigen::bfloat16>> x_ref(big.middleRows(1, 3));
  row_matrix<Eigen::bfloat16> z = row_matrix<Eigen::bfloat16>::Zero(3, 100);
  ASSERT_EQ((normkit::rms_norm<normkit::llama>(x_ref, nullptr, z, 1e-6f)), normkit::status::ok);
  for (Eigen::Index c = 0; c < 100; ++c)  // z row 1 is big row 2, which y2 row 1 normalized too
    ASSERT_EQ(bits_of(z(1, c)), y2[static_cast<std::size_t>(100 + c)].bits) << "col " << c;
}

// Shapes that do not fit are refused (status::shape_mismatch) and nothing is written.
TEST(Eigen, MismatchedShapesAreRefusedUntouched) {
  row_matrix<float> x = row_matrix<float>::Ones(3, 16), y = row_matrix<float>::Constant(3, 16, 42.0f);
  col_vector<float> gamma = col_vector<float>::Ones(16), short_gamma = col_vector<float>::Ones(15);
  row_matrix<float> y_wide = row_matrix<float>::Constant(3, 17, 42.0f);
  EXPECT_EQ((normkit::rms_norm<normkit::llama>(x, short_gamma, y, 1e-6f)), normkit::status::shape_mismatch);
  EXPECT_EQ((normkit::rms_norm<normkit::llama>(x, gamma, y_wide, 1e-6f)), normkit::status::shape_mismatch);
  EXPECT_EQ((normkit::layer_norm<normkit::pytorch>(x, gamma, short_gamma, y, 1e-5f)),
            normkit::status::shape_mismatch);
  EXPECT_EQ((normkit::rms_norm<normkit::llama>(x, gamma, y.topRows(2), 1e-6f)),
            normkit::status::shape_mismatch);
  // A non-unit inner stride: the elements of a row are not contiguous.
  const Eigen::Map<const row_matrix<float>, 0, Eigen::Stride<Eigen::Dynamic, 2>> strided(
      x.data(), 3, 8, Eigen::Stride<Eigen::Dynamic, 2>(16, 2));
  row_matrix<float> y8 = row_matrix<float>::Constant(3, 8, 42.0f);
  EXPECT_EQ((normkit::rms_norm<normkit::llama>(strided, nullptr, y8, 1e-6f)),
            normkit::status::shape_mismatch);
  // Errors of the kernels' own checks come through unchanged.
  EXPECT_EQ((normkit::rms_norm<normkit::llama>(x, gamma, y, -1.0f)), normkit::status::invalid_eps);
  for (Eigen::Index i = 0; i < y.size(); ++i)
    ASSERT_EQ(y.data()[i], 42.0f);
  for (Eigen::Index i = 0; i < y_wide.size(); ++i)
    ASSERT_EQ(y_wide.data()[i], 42.0f);
  for (Eigen::Index i = 0; i < y8.size(); ++i)
    ASSERT_EQ(y8.data()[i], 42.0f);
  // Empty matrices are a no-op, as in the pointer API.
  row_matrix<float> e(0, 16), ey(0, 16);  // no elements: nothing to initialize
  EXPECT_EQ((normkit::rms_norm<normkit::llama>(e, gamma, ey, 1e-6f)), normkit::status::ok);
}

}  // namespace
