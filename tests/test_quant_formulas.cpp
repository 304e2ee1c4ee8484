// SPDX-License-Identifier: MIT
// The independent quantization formulas of quant_formulas.hpp (vLLM's dynamic per-token int8 /
// fp8 quantization, ggml's Q8_0 reference quantizer, the fp16 rounding of its block scale) on
// cases worked out by hand: each expected value is derived in the comment next to it, never
// produced by the helper. The quantized ops will be checked against these helpers.
#include "quant_formulas.hpp"

#include <gtest/gtest.h>

#include <cmath>    // std::isinf
#include <cstdint>  // std::int8_t, std::uint8_t, std::uint16_t
#include <limits>   // std::numeric_limits
#include <vector>   // std::vector

namespace {

namespace f = normkit_test::formula;

const float nan_f = std::numeric_limits<float>::quiet_NaN();
const float inf_f = std::numeric_limits<float>::infinity();

template <class T, std::size_t N>
void expect_row(const T* got, const int (&want)[N], const char* what) {
  for (std::size_t i = 0; i < N; ++i)
    EXPECT_EQ(static_cast<int>(got[i]), want[i]) << what << " at " << i;
}

// ---- vLLM, int8: scale = max(amax / 127, FLT_EPSILON), q = RNE-saturate(v * (1 / scale)).

TEST(VllmDynamicInt8, HandWorkedRows) {
  std::int8_t q[8];
  {
    // amax 127 -> scale 127/127 = 1, inverse 1: q = v rounded half to EVEN (roundf would give
    // -3, 1, 2, -1 for -2.5, 0.5, 1.5, -0.5).
    const float v[] = {127.0f, -2.5f, 0.5f, 1.5f, -0.5f, 3.49f};
    EXPECT_EQ(f::vllm_dynamic_per_token_int8(v, 6, q), 1.0f);
    expect_row(q, {127, -2, 0, 2, 0, 3}, "amax 127");
  }
  {
    // amax 254 -> scale 2 (exact), inverse 0.5: 127, 0.5 -> 0 (even), -1.5 -> -2.
    const float v[] = {254.0f, 1.0f, -3.0f};
    EXPECT_EQ(f::vllm_dynamic_per_token_int8(v, 3, q), 2.0f);
    expect_row(q, {127, 0, -2}, "amax 254");
  }
  {
    // All zero: amax / 127 = 0 < FLT_EPSILON, so scale = 2^-23; q = 0 * 2^23 = 0.
    const float v[] = {0.0f, -0.0f, 0.0f};
    EXPECT_EQ(f::vllm_dynamic_per_token_int8(v, 3, q), 0x1p-23f);
    expect_row(q, {0, 0, 0}, "zero row");
  }
  {
    // fmaxf skips the NaN: amax 254, scale 2; the NaN element converts to 0 (cvt.rni.sat).
    const float v[] = {nan_f, 254.0f, -3.0f};
    EXPECT_EQ(f::vllm_dynamic_per_token_int8(v, 3, q), 2.0f);
    expect_row(q, {0, 127, -2}, "NaN in row");
  }
  {
    // Inf: amax Inf, scale Inf, inverse 0: Inf * 0 = NaN -> 0, 1 * 0 = 0.
    const float v[] = {inf_f, 1.0f};
    EXPECT_TRUE(std::isinf(f::vllm_dynamic_per_token_int8(v, 2, q)));
    expect_row(q, {0, 0}, "Inf in row");
  }
}

// ---- vLLM, e4m3: scale = max(min(amax, ub) / 448, 1 / (448 * 512)),
// q = e4m3(clamp(v / scale, -448, 448)).

TEST(VllmDynamicE4m3, HandWorkedRows) {
  std::uint8_t q[8];
  {
    // amax 448 -> scale 1: 448 = 0.1111.110 (0x7E); -224 = 1.75 * 2^7 = 1.1110.110 (0xF6);
    // 1 = 0.0111.000 (0x38); 2^-4 = 0.0011.000 (0x18).
    const float v[] = {448.0f, -224.0f, 1.0f, 0.0625f};
    EXPECT_EQ(f::vllm_dynamic_per_token_e4m3(v, 4, nullptr, q), 1.0f);
    expect_row(q, {0x7e, 0xf6, 0x38, 0x18}, "amax 448");
  }
  {
    // No cap: amax 896 -> scale 2: 448 (0x7E) and 0.5 = 0.0110.000 (0x30).
    const float v[] = {896.0f, 1.0f};
    EXPECT_EQ(f::vllm_dynamic_per_token_e4m3(v, 2, nullptr, q), 2.0f);
    expect_row(q, {0x7e, 0x30}, "amax 896");
    // scale_ub 448 caps amax: scale 448 / 448 = 1; 896 / 1 is clamped to 448 (0x7E); 1 -> 0x38.
    const float ub = 448.0f;
    EXPECT_EQ(f::vllm_dynamic_per_token_e4m3(v, 2, &ub, q), 1.0f);
    expect_row(q, {0x7e, 0x38}, "scale_ub 448");
    // A cap above amax changes nothing.
    const float big = 1e6f;
    EXPECT_EQ(f::vllm_dynamic_per_token_e4m3(v, 2, &big, q), 2.0f);
    expect_row(q, {0x7e, 0x30}, "scale_ub 1e6");
  }
  {
    // All zero: scale = 1 / 229376 (448 * 512 = 2^15 * 7); 0 / s = 0 (0x00), -0 / s = -0, and
    // fmin(-0, 448) = -0, fmax(-448, -0) = -0: 0x80.
    const float v[] = {0.0f, -0.0f};
    EXPECT_EQ(f::vllm_dynamic_per_token_e4m3(v, 2, nullptr, q), 1.0f / 229376.0f);
    expect_row(q, {0x00, 0x80}, "zero row");
  }
  {
    // NaN skipped by fmaxf: amax 896, scale 2. The NaN element: NaN / 2 = NaN, fmin(NaN, 448) =
    // 448 (fmin ignores NaN), so it becomes +448 (0x7E); 896 / 2 = 448 (0x7E); 2 / 2 = 1 (0x38).
    const float v[] = {nan_f, 896.0f, 2.0f};
    EXPECT_EQ(f::vllm_dynamic_per_token_e4m3(v, 3, nullptr, q), 2.0f);
    expect_row(q, {0x7e, 0x7e, 0x38}, "NaN in row");
  }
}

// fp8 divides by the scale (vLLM keeps the division "for exact match with FBGemm"): find an
// element where v / s and v * (1 / s) give different e4m3 patterns, with plain float arithmetic
// here, and check that the helper gives the division's.
TEST(VllmDynamicE4m3, DividesByTheScale) {
  const auto& ref = f::e4m3_reference();
  bool found = false;
  for (int k = 1; k < 4000 && !found; ++k) {
    const float s = 1.0f + static_cast<float>(k) * 0.001f;  // the row's scale: amax = 448 * s
    const float amax = 448.0f * s;
    if (amax / 448.0f != s)
      continue;  // keep only rows whose scale is exactly s
    for (int j = 1; j < 448 && !found; ++j) {
      const float v = static_cast<float>(j) * s * 0.0625f;
      const float by_div = v / s, by_mul = v * (1.0f / s);
      if (ref.from_float(by_div) == ref.from_float(by_mul))
        continue;
      found = true;
      const float row[] = {amax, v};
      std::uint8_t q[2];
      ASSERT_EQ(f::vllm_dynamic_per_token_e4m3(row, 2, nullptr, q), s);
      EXPECT_EQ(q[1], ref.from_float(by_div)) << "v = " << v << ", s = " << s;
      EXPECT_NE(q[1], ref.from_float(by_mul));
    }
  }
  EXPECT_TRUE(found) << "no element separates division from the reciprocal product";
}

// ---- ggml Q8_0: d = amax / 127 (stored as fp16), id = d ? 1/d : 0, q = roundf(v * id).

TEST(GgmlQ8Ref, Fp16RoundingOfTheScale) {
  // 1 = 0x3C00; 65504 the largest finite (0x7BFF); 65520 the RNE overflow point -> Inf; 2^-24
  // the smallest subnormal; 2^-25 a tie with 0 -> 0; 1.5 * 2^-24 a tie 1 | 2 -> 2; 2^-14 the
  // smallest normal; 1/127 = 2^-7 * 1.00787 -> exponent field 8, mantissa 0.00787 * 1024 = 8.06
  // -> 8: 0x2008; 1 + 2^-11 a tie 0x3C00 | 0x3C01 -> 0x3C00; 1 + 3 * 2^-11 a tie 0x3C01 | 0x3C02
  // -> 0x3C02.
  EXPECT_EQ(f::fp16_rne(1.0f), 0x3c00);
  EXPECT_EQ(f::fp16_rne(-2.0f), 0xc000);
  EXPECT_EQ(f::fp16_rne(65504.0f), 0x7bff);
  EXPECT_EQ(f::fp16_rne(65519.996f), 0x7bff);
  EXPECT_EQ(f::fp16_rne(65520.0f), 0x7c00);
  EXPECT_EQ(f::fp16_rne(0x1p-24f), 0x0001);
  EXPECT_EQ(f::fp16_rne(0x1p-25f), 0x0000);
  EXPECT_EQ(f::fp16_rne(0x1.8p-24f), 0x0002);
  EXPECT_EQ(f::fp16_rne(0x1p-14f), 0x0400);
  EXPECT_EQ(f::fp16_rne(1.0f / 127.0f), 0x2008);
  EXPECT_EQ(f::fp16_rne(1.00048828125f), 0x3c00);
  EXPECT_EQ(f::fp16_rne(1.00146484375f), 0x3c02);
}

TEST(GgmlQ8Ref, HandWorkedBlocks) {
  std::vector<float> v(64, 0.0f);
  f::q8_0_block out[2];
  // Block 0: amax 127 -> d = 1 (0x3C00), id = 1: roundf rounds half AWAY from zero, so 2.5 -> 3,
  // -2.5 -> -3, 0.5 -> 1, -0.5 -> -1 (RNE would give 2, -2, 0, 0); 1.49 -> 1.
  const float b0[] = {127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.49f};
  // Block 1: amax 254 (from -254) -> d = 2 (0x4000), id = 0.5: -127; 5 -> 2.5 -> 3; -1 -> -0.5 -> -1.
  const float b1[] = {-254.0f, 5.0f, -1.0f};
  for (int j = 0; j < 6; ++j)
    v[static_cast<std::size_t>(j)] = b0[j];
  for (int j = 0; j < 3; ++j)
    v[static_cast<std::size_t>(32 + j)] = b1[j];
  ASSERT_TRUE(f::ggml_quantize_row_q8_0_ref(v.data(), 64, out));
  EXPECT_EQ(out[0].d, 0x3c00);
  expect_row(out[0].qs, {127, 3, -3, 1, -1, 1, 0}, "block 0");
  EXPECT_EQ(out[1].d, 0x4000);
  expect_row(out[1].qs, {-127, 3, -1, 0}, "block 1");
  for (int j = 7; j < 32; ++j)
    EXPECT_EQ(out[0].qs[j], 0);
}

TEST(GgmlQ8Ref, ZeroBlockAndScaleRounding) {
  std::vector<float> v(64, 0.0f);
  f::q8_0_block out[2];
  // Block 0 all zero: d = 0 (0x0000), id = 0, every q = 0.
  // Block 1: amax 1 -> d = 1/127 (fp16 0x2008, derived above); id = 1/d is 127 within a few
  // ulps, so 1 -> 127 and 0.25 -> 31.75 -> 32, -0.25 -> -32.
  v[32] = 1.0f;
  v[33] = 0.25f;
  v[34] = -0.25f;
  ASSERT_TRUE(f::ggml_quantize_row_q8_0_ref(v.data(), 64, out));
  EXPECT_EQ(out[0].d, 0x0000);
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(out[0].qs[j], 0);
  EXPECT_EQ(out[1].d, 0x2008);
  expect_row(out[1].qs, {127, 32, -32, 0}, "block 1");
}

TEST(GgmlQ8Ref, NanBlocksAreOutsideTheDefinedDomain) {
  std::vector<float> v(32, 0.0f);
  f::q8_0_block out[1];
  // MAX(a, b) = a > b ? a : b: 100, then MAX(100, NaN) = NaN, then MAX(NaN, 1) = 1, then 1.
  // So amax = 1, d = 1/127 (0x2008), and 100 * 127 = 12700 does not fit an int8: undefined in C.
  v[0] = 100.0f;
  v[1] = nan_f;
  v[2] = 1.0f;
  EXPECT_FALSE(f::ggml_quantize_row_q8_0_ref(v.data(), 32, out));
  EXPECT_EQ(out[0].d, 0x2008);
  EXPECT_EQ(out[0].qs[2], 127);  // 1 * id -> 127: the element after the NaN is still defined
  // A NaN as the last element leaves amax NaN: d and id NaN, every q undefined.
  v[0] = 1.0f;
  v[1] = 0.0f;
  v[31] = nan_f;
  EXPECT_FALSE(f::ggml_quantize_row_q8_0_ref(v.data(), 32, out));
}

}  // namespace
