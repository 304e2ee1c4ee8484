// SPDX-License-Identifier: MIT
// The quantized outputs (ops/quantize.hpp, quant.hpp), on every ISA:
//   - the quantize kernel against quantize_op::reference, bit for bit, on crafted values: the
//     rounding ties of each conversion, the saturation and subnormal boundaries, NaN, Inf, -0,
//     random bit patterns; every column count 0..70 and long rows;
//   - the quantized norms (static, dynamic, Q8_0; RMSNorm and LayerNorm) against their reference
//     composition, with strides, several chunks, NaN / zero / huge rows, and poison around every
//     output;
//   - golden checks: the outputs against vLLM's and ggml's formulas as tests/quant_formulas.hpp
//     transcribes them (independent of the code under test), applied to the fp32 values of the
//     plain norm (rms_norm / layer_norm with Out = float); amax against max |v|;
//   - dynamic-scale edge cases (zero row, scale_ub cap, saturation) and the NaN-row rule;
//   - bad arguments: each status, and nothing written.
#include "bad_inputs.hpp"
#include "fp_control.hpp"
#include "quant_formulas.hpp"
#include "support.hpp"

#include <normkit/normkit.hpp>

#include <cfenv>        // std::fesetround, FE_*
#include <cmath>        // std::fabs, std::isfinite, std::isnan
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int8_t, std::uint8_t, std::uint32_t
#include <cstring>      // std::memcmp, std::memcpy, std::memset
#include <memory>       // std::unique_ptr
#include <string>       // std::string
#include <type_traits>  // std::conditional_t, std::is_same
#include <vector>       // std::vector

namespace {

using namespace normkit_test;
using normkit::block_q8_0;
using normkit::e4m3;
using normkit::e5m2;
using normkit::isa;
using normkit::status;
namespace nd = normkit::detail;
using quant_mode = nd::quant_mode;

class Quant : public ::testing::TestWithParam<isa> {};

float f32(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t u32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

template <class Q>
std::uint8_t qbits(Q q) {
  std::uint8_t b;
  std::memcpy(&b, &q, 1);
  return b;
}

// ---- Crafted values: the boundaries of every conversion the op makes.
std::vector<float> specials() {
  std::vector<float> v = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f, 126.5f, 127.0f,
                          127.49998f, 127.5f, -127.5f, -128.0f, -128.5f, -129.0f, 128.0f, 255.5f, 1e9f,
                          // e4m3: max 448, halfway to the next (unrepresentable) step 464; subnormals 2^-9
                          448.0f, 455.99997f, 456.0f, 464.0f, 0x1p-9f, 0x1.8p-9f, 0x1p-10f, 0x1.000002p-10f,
                          0x1.cp-7f, 0x1.ep-7f, 0x1.fp-7f,
                          // e5m2: max 57344, 61440 halfway; subnormals 2^-16
                          57344.0f, 61439.996f, 61440.0f, 0x1p-16f, 0x1.8p-16f, 0x1p-17f, 0x1.8p-15f,
                          // floats' own subnormals and extremes
                          0x1p-149f, -0x1p-140f, 0x1.fffffep127f, -0x1.fffffep127f, f32(0x7f800000u),
                          f32(0xff800000u), f32(0x7fc00000u), f32(0xffc00000u), f32(0x7fa00001u),
                          f32(0x7f800001u)};
  return v;
}

// A row of values for the kernel: specials scaled by powers of two, then random bits / normals.
std::vector<float> kernel_values(rng& r, std::size_t n, int kind) {
  const std::vector<float> sp = specials();
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind % 4) {
      case 0:
        v[i] = sp[r.u32() % sp.size()];
        break;
      case 1:
        v[i] = f32(r.u32());
        break;
      case 2:
        v[i] = std::ldexp(r.normal(), static_cast<int>(r.u32() % 40u) - 20);
        break;
      default:  // exact ties of the int8 / Q8_0 roundings after a scale of 1
        v[i] = static_cast<float>(static_cast<int>(r.u32() % 300u) - 150) + 0.5f;
        break;
    }
  }
  return v;
}

template <class Q>
nd::quantize_op::args<Q> kernel_args(const float* v, Q* q, block_q8_0* blocks, float* scales, float* amax,
                                     std::size_t rows, std::size_t cols, float scale, quant_mode mode) {
  const std::size_t qs = mode == quant_mode::q8_0 ? cols / block_q8_0::size : cols;
  return {v, q, blocks, scales, amax, rows, cols, cols, qs, scale, mode};
}

// One kernel call on the active ISA and the reference; outputs and scales compared as bytes.
template <class Q>
void kernel_case(const std::vector<float>& v, std::size_t rows, std::size_t cols, float scale,
                 quant_mode mode, const std::string& what) {
  const bool blocks = mode == quant_mode::q8_0;
  // One element past the rows: never empty (memset of an empty vector's null data() is UB), and a
  // sentinel that must stay unwritten on both paths.
  std::vector<Q> q1(rows * cols + 1), q2(rows * cols + 1);
  std::vector<block_q8_0> b1(rows * cols / 32 + 1), b2(rows * cols / 32 + 1);
  std::vector<float> s1(rows + 1, 7.0f), s2(rows + 1, 7.0f);
  float a1 = 0.25f, a2 = 0.25f;
  std::memset(static_cast<void*>(q1.data()), 0x5a, q1.size());
  std::memset(static_cast<void*>(q2.data()), 0x5a, q2.size());
  std::memset(static_cast<void*>(b1.data()), 0x5a, b1.size() * sizeof(block_q8_0));
  std::memset(static_cast<void*>(b2.data()), 0x5a, b2.size() * sizeof(block_q8_0));
  const auto x1 = kernel_args<Q>(v.data(), blocks ? nullptr : q1.data(), blocks ? b1.data() : nullptr,
                                 s1.data(), &a1, rows, cols, scale, mode);
  auto x2 = x1;
  x2.q = blocks ? nullptr : q2.data();
  x2.blocks = blocks ? b2.data() : nullptr;
  x2.scales = s2.data();
  x2.amax = &a2;
  ASSERT_EQ((normkit::impl::call<nd::quantize_op, normkit::round_once, Q>(x1)), status::ok) << what;
  ASSERT_EQ((normkit::impl::call_reference<nd::quantize_op, normkit::round_once, Q>(x2)), status::ok) << what;
  for (std::size_t i = 0; i < q1.size(); ++i)
    ASSERT_EQ(qbits(q1[i]), qbits(q2[i]))
        << what << " element " << i << " v=" << v[i] << " (0x" << std::hex << u32(v[i]) << ")";
  ASSERT_EQ(std::memcmp(b1.data(), b2.data(), b1.size() * sizeof(block_q8_0)), 0) << what << " blocks";
  ASSERT_EQ(std::memcmp(s1.data(), s2.data(), s1.size() * sizeof(float)), 0) << what << " scales";
  ASSERT_EQ(u32(a1), u32(a2)) << what << " amax";
}

template <class Q>
void kernel_sweep(isa i) {
  rng r(0x51u + sizeof(Q) * 7u + (std::is_same<Q, e5m2>::value ? 1u : 0u));
  std::vector<std::size_t> cols_list;
  for (std::size_t c = 0; c <= 70; ++c)
    cols_list.push_back(c);
  for (std::size_t c : {96u, 255u, 256u, 1000u, 4096u})
    cols_list.push_back(c);
  const float scales[] = {1.0f, 0.37f, 3.0f, 1e-30f, 3e38f, 0x1p-149f};
  const float ubs[] = {0.0f, -1.0f, 0.5f, 3.0f, 1e30f};
  int n = 0;
  for (std::size_t cols : cols_list)
    for (int kind = 0; kind < 4; ++kind, ++n) {
      const std::size_t rows = 3;
      const std::vector<float> v = kernel_values(r, rows * cols, kind);
      const std::string what = std::string(normkit::to_string(i)) + " " + normkit_test::type_name<Q>() +
                               " cols=" + std::to_string(cols) + " kind=" + std::to_string(kind);
      kernel_case<Q>(v, rows, cols, scales[n % 6], quant_mode::static_scale, what + " static");
      kernel_case<Q>(v, rows, cols, ubs[n % 5], quant_mode::dynamic_row, what + " dynamic");
      if (std::is_same<Q, std::int8_t>::value && cols % 32 == 0)
        kernel_case<Q>(v, rows, cols, 0.0f, quant_mode::q8_0, what + " q8_0");
    }
}

TEST_P(Quant, KernelEqualsReferenceOnCraftedValues) {
  NORMKIT_USE_ISA(GetParam());
  kernel_sweep<e4m3>(GetParam());
  kernel_sweep<e5m2>(GetParam());
  kernel_sweep<std::int8_t>(GetParam());
}

// ---- The quantized norms against their reference composition.

// Rows: normal values, with a NaN row, a zero row and a huge row mixed in (row_class).
template <class T>
std::vector<T> norm_input(rng& r, std::size_t rows, std::size_t stride, std::size_t cols) {
  std::vector<T> x(rows * stride, as<T>(-3.0f));  // the gaps hold values the call must not read into rows
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      float v = std::ldexp(r.normal(), static_cast<int>(i % 5) - 2);
      if (i % 7 == 3 && j == cols / 2)
        v = f32(0x7fc00000u);  // a NaN row
      if (i % 7 == 5)
        v = 0.0f;  // a zero row (eps = 0 cases give NaN rows too)
      if (i % 11 == 6)
        v = std::ldexp(r.normal(), 60);  // sum of squares overflows: the rescale path
      x[i * stride + j] = as<T>(v);
    }
  return x;
}

constexpr std::uint8_t poison = 0xa5;

struct norm_case {
  std::size_t rows, cols, x_stride, q_stride;  // q_stride in elements, or blocks for Q8_0
  float eps;
  std::uint64_t seed;
};

enum class norm_kind { rms, layer };

template <norm_kind K, class Policy, class In, class W, class Q>
void fused_case(const norm_case& c, quant_mode mode, float scale, const std::string& what) {
  rng r(c.seed);
  const std::vector<In> x = norm_input<In>(r, c.rows, c.x_stride, c.cols);
  const std::vector<W> g = normal_vec<W>(r, c.cols), b = normal_vec<W>(r, c.cols, 0.5f);
  const bool blocks = mode == quant_mode::q8_0;
  const std::size_t out_bytes = blocks ? c.rows * c.q_stride * sizeof(block_q8_0) : c.rows * c.q_stride;
  std::vector<unsigned char> o1(out_bytes + 64, poison), o2(out_bytes + 64, poison);
  std::vector<float> s1(c.rows + 2, -5.0f), s2(c.rows + 2, -5.0f);
  float a1 = -5.0f, a2 = -5.0f;
  Q* q1 = reinterpret_cast<Q*>(o1.data());
  Q* q2 = reinterpret_cast<Q*>(o2.data());
  auto* y1 = reinterpret_cast<block_q8_0*>(o1.data());
  auto* y2 = reinterpret_cast<block_q8_0*>(o2.data());
  status st1 = status::ok, st2 = status::ok;
  namespace nr = normkit::reference;
  if constexpr (K == norm_kind::rms) {
    if (mode == quant_mode::static_scale) {
      st1 = normkit::rms_norm_quant<Policy>(x.data(), g.data(), q1, c.rows, c.cols, c.eps, scale, &a1,
                                            c.x_stride, c.q_stride);
      st2 = nr::rms_norm_quant<Policy>(x.data(), g.data(), q2, c.rows, c.cols, c.eps, scale, &a2, c.x_stride,
                                       c.q_stride);
    } else if (mode == quant_mode::dynamic_row) {
      st1 = normkit::rms_norm_dynamic_quant<Policy>(x.data(), g.data(), q1, s1.data() + 1, c.rows, c.cols,
                                                    c.eps, scale, c.x_stride, c.q_stride);
      st2 = nr::rms_norm_dynamic_quant<Policy>(x.data(), g.data(), q2, s2.data() + 1, c.rows, c.cols, c.eps,
                                               scale, c.x_stride, c.q_stride);
    } else if constexpr (std::is_same<Q, std::int8_t>::value) {
      st1 = normkit::rms_norm_q8_0<Policy>(x.data(), g.data(), y1, c.rows, c.cols, c.eps, c.x_stride,
                                           c.q_stride);
      st2 = nr::rms_norm_q8_0<Policy>(x.data(), g.data(), y2, c.rows, c.cols, c.eps, c.x_stride, c.q_stride);
    }
  } else {
    if (mode == quant_mode::static_scale) {
      st1 = normkit::layer_norm_quant<Policy>(x.data(), g.data(), b.data(), q1, c.rows, c.cols, c.eps, scale,
                                              &a1, c.x_stride, c.q_stride);
      st2 = nr::layer_norm_quant<Policy>(x.data(), g.data(), b.data(), q2, c.rows, c.cols, c.eps, scale, &a2,
                                         c.x_stride, c.q_stride);
    } else if (mode == quant_mode::dynamic_row) {
      st1 = normkit::layer_norm_dynamic_quant<Policy>(x.data(), g.data(), b.data(), q1, s1.data() + 1, c.rows,
                                                      c.cols, c.eps, scale, c.x_stride, c.q_stride);
      st2 = nr::layer_norm_dynamic_quant<Policy>(x.data(), g.data(), b.data(), q2, s2.data() + 1, c.rows,
                                                 c.cols, c.eps, scale, c.x_stride, c.q_stride);
    } else if constexpr (std::is_same<Q, std::int8_t>::value) {
      st1 = normkit::layer_norm_q8_0<Policy>(x.data(), g.data(), b.data(), y1, c.rows, c.cols, c.eps,
                                             c.x_stride, c.q_stride);
      st2 = nr::layer_norm_q8_0<Policy>(x.data(), g.data(), b.data(), y2, c.rows, c.cols, c.eps, c.x_stride,
                                        c.q_stride);
    }
  }
  ASSERT_EQ(st1, status::ok) << what;
  ASSERT_EQ(st2, status::ok) << what;
  for (std::size_t k = 0; k < o1.size(); ++k)
    ASSERT_EQ(o1[k], o2[k]) << what << ": output byte " << k;
  // Nothing outside the rows: the stride gaps and the slack keep their poison.
  const std::size_t row_bytes = blocks ? c.cols / 32 * sizeof(block_q8_0) : c.cols;
  const std::size_t stride_bytes = blocks ? c.q_stride * sizeof(block_q8_0) : c.q_stride;
  for (std::size_t k = 0; k < o1.size(); ++k) {
    const bool inside = k < c.rows * stride_bytes && k % stride_bytes < row_bytes;
    if (!inside) {
      ASSERT_EQ(o1[k], poison) << what << ": wrote outside the rows, byte " << k;
    }
  }
  ASSERT_EQ(std::memcmp(s1.data(), s2.data(), s1.size() * sizeof(float)), 0) << what << ": row scales";
  ASSERT_EQ(u32(s1[0]), u32(-5.0f)) << what;
  ASSERT_EQ(u32(s1[c.rows + 1]), u32(-5.0f)) << what;
  if (mode == quant_mode::static_scale) {
    ASSERT_EQ(u32(a1), u32(a2)) << what << ": amax";
  }
}

template <norm_kind K, class Policy, class In, class W>
void fused_sweep(isa i, const char* name) {
  // rows x cols: one row, chunks of several rows (32 KiB of fp32 per chunk), a partial last chunk.
  const norm_case cases[] = {{1, 32, 32, 32, 1e-6f, 1},     {5, 33, 40, 35, 1e-5f, 2},
                             {3, 7, 7, 9, 0.0f, 3},         {19, 96, 100, 97, 1e-6f, 4},
                             {70, 256, 256, 256, 1e-6f, 5}, {3, 4096, 4100, 4096, 1e-6f, 6},
                             {4, 1, 1, 1, 1e-6f, 7},        {0, 64, 64, 64, 1e-6f, 8}};
  int n = 0;
  for (const norm_case& c0 : cases) {
    ++n;
    const std::string what = std::string(normkit::to_string(i)) + " " + name +
                             " rows=" + std::to_string(c0.rows) + " cols=" + std::to_string(c0.cols);
    const float scales[] = {1.0f, 100.0f, 0.001f, 5000.0f};
    const float ubs[] = {0.0f, 0.01f, 1e30f};
    fused_case<K, Policy, In, W, e4m3>(c0, quant_mode::static_scale, scales[n % 4], what + " e4m3 static");
    fused_case<K, Policy, In, W, e5m2>(c0, quant_mode::static_scale, scales[(n + 1) % 4],
                                       what + " e5m2 static");
    fused_case<K, Policy, In, W, std::int8_t>(c0, quant_mode::static_scale, scales[(n + 2) % 4],
                                              what + " i8 static");
    fused_case<K, Policy, In, W, e4m3>(c0, quant_mode::dynamic_row, ubs[n % 3], what + " e4m3 dynamic");
    fused_case<K, Policy, In, W, e5m2>(c0, quant_mode::dynamic_row, ubs[(n + 1) % 3], what + " e5m2 dynamic");
    fused_case<K, Policy, In, W, std::int8_t>(c0, quant_mode::dynamic_row, ubs[(n + 2) % 3],
                                              what + " i8 dynamic");
    if (c0.cols % 32 == 0) {
      norm_case c = c0;
      c.q_stride = c.cols / 32 + static_cast<std::size_t>(n % 2);
      fused_case<K, Policy, In, W, std::int8_t>(c, quant_mode::q8_0, 0.0f, what + " q8_0");
    }
  }
}

TEST_P(Quant, FusedOpsEqualTheReferenceComposition) {
  NORMKIT_USE_ISA(GetParam());
  const isa i = GetParam();
  fused_sweep<norm_kind::rms, normkit::llama, bf16, bf16>(i, "rms_norm<llama> bf16/bf16");
  fused_sweep<norm_kind::rms, normkit::gemma, bf16, float>(i, "rms_norm<gemma> bf16/f32");
  fused_sweep<norm_kind::rms, normkit::pytorch, fp16, fp16>(i, "rms_norm<pytorch> f16/f16");
  fused_sweep<norm_kind::rms, normkit::llama, float, float>(i, "rms_norm<llama> f32/f32");
  fused_sweep<norm_kind::layer, normkit::pytorch, bf16, bf16>(i, "layer_norm<pytorch> bf16/bf16");
  fused_sweep<norm_kind::layer, normkit::llama, fp16, float>(i, "layer_norm<llama> f16/f32");
}

// ---- The statically quantized norms' own kernel (ops/norm_static_quant.hpp), which the static
// calls above run when the build holds it. Rows of +-1 with eps 0 normalize to exactly +-1 (RMSNorm;
// LayerNorm on balanced rows: m = -+1, c_i = +-1, var = 1), so with no bias v_i = +-g_i exactly and
// the crafted values, as gains, reach the output pass unrounded: every conversion's ties,
// saturation and subnormal edges, in whole chunks and in a row's tail. Finite gains take the fast
// loop (no NaN selects), a NaN or Inf gain the general one. Bits against the op's reference, and
// for finite gains against the formulas (tests/quant_formulas.hpp) and max |g|.
template <class Q>
std::uint8_t formula_bits(float p) {
  if constexpr (std::is_same<Q, e4m3>::value)
    return formula::e4m3_reference().from_float(p);
  else if constexpr (std::is_same<Q, e5m2>::value)
    return formula::e5m2_reference().from_float(p);
  else
    return static_cast<std::uint8_t>(formula::int8_rne_sat(p));
}

template <norm_kind K, class Policy, class T, class Q>
void crafted_gain_case(isa i, float scale, bool finite, const std::string& what) {
  using op =
      std::conditional_t<K == norm_kind::rms, nd::rms_norm_static_quant_op, nd::layer_norm_static_quant_op>;
  // The calls below run it, not the stages (in builds whose dispatch objects hold every kernel).
  if (NORMKIT_TEST_EVERY_KERNEL && i != isa::scalar && op::template has_kernel<T, T, Q>) {
    ASSERT_TRUE((normkit::impl::has_kernel<op, Policy, T, T, Q>())) << what;
  }
  std::vector<float> sp = specials();
  if (finite)  // finite as T: 3e38 is Inf in bf16 and fp16
    for (float& e : sp)
      e = std::isfinite(normkit::to_float(as<T>(e))) ? e : 1.0f;
  const std::size_t rows = 3, cols = 2 * sp.size() + 6;  // even (balanced rows), with a tail
  std::vector<T> x(rows * cols), g(cols);
  for (std::size_t j = 0; j < cols; ++j)
    g[j] = as<T>(j < 2 * sp.size() ? sp[j / 2] * (j % 2 ? -1.0f : 1.0f) : 0.75f);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < cols; ++j)
      x[r * cols + j] = as<T>((j + r) % 2 ? -1.0f : 1.0f);
  std::vector<Q> q1(rows * cols + 1), q2(rows * cols + 1);
  std::memset(static_cast<void*>(q1.data()), poison, q1.size());
  std::memset(static_cast<void*>(q2.data()), poison, q2.size());
  float a1 = -1.0f, a2 = -1.0f;
  namespace nr = normkit::reference;
  if constexpr (K == norm_kind::rms) {
    ASSERT_EQ(normkit::rms_norm_quant<Policy>(x.data(), g.data(), q1.data(), rows, cols, 0.0f, scale, &a1),
              status::ok);
    ASSERT_EQ(
        nr::rms_norm_quant<Policy>(x.data(), g.data(), q2.data(), rows, cols, 0.0f, scale, &a2, cols, cols),
        status::ok);
  } else {
    ASSERT_EQ(normkit::layer_norm_quant<Policy>(x.data(), g.data(), static_cast<const T*>(nullptr), q1.data(),
                                                rows, cols, 0.0f, scale, &a1),
              status::ok);
    ASSERT_EQ(nr::layer_norm_quant<Policy>(x.data(), g.data(), static_cast<const T*>(nullptr), q2.data(),
                                           rows, cols, 0.0f, scale, &a2, cols, cols),
              status::ok);
  }
  ASSERT_EQ(u32(a1), u32(a2)) << what << ": amax";
  ASSERT_EQ(qbits(q1[rows * cols]), poison) << what << ": wrote past the last row";
  float want_amax = 0.0f;
  for (std::size_t k = 0; k < rows * cols; ++k) {
    ASSERT_EQ(qbits(q1[k]), qbits(q2[k])) << what << ": element " << k;
    const float v = normkit::to_float(x[k]) * normkit::to_float(g[k % cols]);  // exact: +-g
    if (finite) {
      ASSERT_EQ(qbits(q1[k]), formula_bits<Q>(v * scale)) << what << ": element " << k << " v=" << v;
      want_amax = std::fabs(v) > want_amax ? std::fabs(v) : want_amax;
    }
  }
  if (finite) {
    ASSERT_EQ(u32(a1), u32(want_amax)) << what << ": amax";
  }
}

template <norm_kind K, class Policy, class T>
void crafted_gain_sweep(isa i, const char* name) {
  for (const bool finite : {true, false})
    for (const float scale : {1.0f, 0.37f}) {
      const std::string what = std::string(normkit::to_string(i)) + " " + name +
                               (finite ? " finite gains" : " non-finite gains") + " scale " +
                               std::to_string(scale);
      crafted_gain_case<K, Policy, T, e4m3>(i, scale, finite, what + " e4m3");
      crafted_gain_case<K, Policy, T, e5m2>(i, scale, finite, what + " e5m2");
      crafted_gain_case<K, Policy, T, std::int8_t>(i, scale, finite, what + " i8");
    }
}

TEST_P(Quant, StaticKernelOnCraftedGains) {
  NORMKIT_USE_ISA(GetParam());
  const isa i = GetParam();
  crafted_gain_sweep<norm_kind::rms, normkit::llama, bf16>(i, "rms_norm<llama> bf16");
  crafted_gain_sweep<norm_kind::rms, normkit::pytorch, float>(i, "rms_norm<pytorch> f32");
  crafted_gain_sweep<norm_kind::rms, normkit::pytorch, fp16>(i, "rms_norm<pytorch> f16");
  crafted_gain_sweep<norm_kind::layer, normkit::pytorch, bf16>(i, "layer_norm<pytorch> bf16");
  crafted_gain_sweep<norm_kind::layer, normkit::llama, fp16>(i, "layer_norm<llama> f16");
}

// The static kernel's memory paths (simd/rows.hpp): streamed 1-byte stores (a threshold of 0
// streams every call; q misaligned by one byte, so each row has a peeled head, and a stride that
// moves the head from row to row) and the prefetch of the next row in unstreamed calls (an input
// of 4 MiB of rows of 4 KiB or more: core/tuning.hpp, prefetches), each against the reference,
// bit for bit, amax included, with nothing written outside q's rows.
template <norm_kind K, class Policy, class Q>
void memory_path_case(std::size_t rows, std::size_t threshold, std::size_t q_offset,
                      const std::string& what) {
  const std::size_t cols = 2053, q_stride = cols + 5, n = (rows - 1) * q_stride + cols;
  rng r(7 + q_offset);
  std::vector<bf16> x(rows * cols), g(cols), b(cols);
  for (bf16& e : x)
    e = bf16(r.normal());
  for (std::size_t j = 0; j < cols; ++j)
    g[j] = bf16(0.5f + 0.01f * static_cast<float>(j % 97)), b[j] = bf16(0.02f * r.normal());
  std::vector<Q> q1(n + q_offset + 1), q2(n);
  std::memset(static_cast<void*>(q1.data()), poison, q1.size());
  std::memset(static_cast<void*>(q2.data()), poison, q2.size());
  float a1 = -1.0f, a2 = -1.0f;
  const float scale = 40.0f;
  const std::size_t before = normkit::stream_min_bytes();
  normkit::set_stream_min_bytes(threshold);
  status s1;
  if constexpr (K == norm_kind::rms)
    s1 = normkit::rms_norm_quant<Policy>(x.data(), g.data(), q1.data() + q_offset, rows, cols, 1e-6f, scale,
                                         &a1, cols, q_stride);
  else
    s1 = normkit::layer_norm_quant<Policy>(x.data(), g.data(), b.data(), q1.data() + q_offset, rows, cols,
                                           1e-5f, scale, &a1, cols, q_stride);
  normkit::set_stream_min_bytes(before);
  ASSERT_EQ(s1, status::ok) << what;
  namespace nr = normkit::reference;
  if constexpr (K == norm_kind::rms)
    ASSERT_EQ(nr::rms_norm_quant<Policy>(x.data(), g.data(), q2.data(), rows, cols, 1e-6f, scale, &a2, cols,
                                         q_stride),
              status::ok);
  else
    ASSERT_EQ(nr::layer_norm_quant<Policy>(x.data(), g.data(), b.data(), q2.data(), rows, cols, 1e-5f, scale,
                                           &a2, cols, q_stride),
              status::ok);
  ASSERT_EQ(u32(a1), u32(a2)) << what << ": amax";
  for (std::size_t k = 0; k < q_offset; ++k)
    ASSERT_EQ(qbits(q1[k]), poison) << what << ": wrote before q";
  ASSERT_EQ(qbits(q1[q_offset + n]), poison) << what << ": wrote past the last row";
  for (std::size_t k = 0; k < n; ++k)  // the gaps between rows (poison in both) included
    ASSERT_EQ(qbits(q1[q_offset + k]), qbits(q2[k])) << what << ": element " << k;
}

TEST_P(Quant, StaticKernelStreamedAndPrefetchedRows) {
  NORMKIT_USE_ISA(GetParam());
  const std::string name = normkit::to_string(GetParam());
  for (const std::size_t offset : {std::size_t(0), std::size_t(1)}) {
    const std::string what = name + " streamed, q offset " + std::to_string(offset);
    memory_path_case<norm_kind::rms, normkit::llama, e4m3>(9, 0, offset, what + " rms llama e4m3");
    memory_path_case<norm_kind::rms, normkit::llama, std::int8_t>(9, 0, offset, what + " rms llama i8");
    memory_path_case<norm_kind::layer, normkit::pytorch, e4m3>(9, 0, offset, what + " layer pytorch e4m3");
  }
  constexpr std::size_t far_rows = 1030;  // 4.03 MiB of rows of 4106 bytes
  static_assert(nd::prefetches(far_rows * 2053 * sizeof(bf16), 2053 * sizeof(bf16)), "prefetched rows");
  memory_path_case<norm_kind::rms, normkit::llama, std::int8_t>(
      far_rows, ~std::size_t(0), 1, name + " unstreamed, prefetched, rms llama i8");
}

// The staged quantized norms (dynamic, Q8_0) on inputs far enough that each quantize stage
// prefetches the next chunk's rows (ops/norm_quant.hpp): the hint is never read through, so the
// bits are the reference's; and its geometry, which no output shows, checked on its own: the rows
// that follow the chunk, no more than the call has, none after the last chunk or in a small call.
TEST_P(Quant, StagedRowsPrefetchTheNextChunk) {
  NORMKIT_USE_ISA(GetParam());
  const std::string what = std::string(normkit::to_string(GetParam())) + " far rows";
  const norm_case far{1027, 2048, 2056, 2050, 1e-6f, 77};  // 4.03 MiB of 4 KiB rows, a partial last chunk
  static_assert(nd::prefetches(1027 * 2048 * sizeof(bf16), 2048 * sizeof(bf16)), "prefetched rows");
  fused_case<norm_kind::rms, normkit::llama, bf16, bf16, e4m3>(far, quant_mode::dynamic_row, 0.0f,
                                                               what + " rms llama e4m3 dynamic");
  fused_case<norm_kind::layer, normkit::pytorch, bf16, bf16, std::int8_t>(far, quant_mode::dynamic_row, 0.01f,
                                                                          what + " layer pytorch i8 dynamic");
  norm_case blocks = far;
  blocks.q_stride = far.cols / 32;
  fused_case<norm_kind::rms, normkit::llama, bf16, bf16, std::int8_t>(blocks, quant_mode::q8_0, 0.0f,
                                                                      what + " rms llama q8_0");

  const std::size_t rows = 600, cols = 4096, stride = 4100;  // 4.7 MiB of bf16
  std::vector<bf16> x(rows * stride), res(rows * stride);
  const auto q = normkit::impl::dynamic_quant<std::int8_t>(nullptr, nullptr, 0.0f, cols);
  using qo = nd::quant_outputs;
  const auto first = qo::stage(q, 0, 2, rows, cols, nullptr, x.data(), stride, res.data(), stride);
  EXPECT_EQ(first.ahead.at[0], x.data() + 2 * stride);
  EXPECT_EQ(first.ahead.at[1], res.data() + 2 * stride);
  EXPECT_EQ(first.ahead.stride[0], stride * sizeof(bf16));
  EXPECT_EQ(first.ahead.rows, 2u);
  EXPECT_EQ(first.ahead.elem, sizeof(bf16));
  const auto before_last = qo::stage(q, 597, 2, rows, cols, nullptr, x.data(), stride);
  EXPECT_EQ(before_last.ahead.at[0], x.data() + 599 * stride);
  EXPECT_EQ(before_last.ahead.at[1], nullptr);
  EXPECT_EQ(before_last.ahead.rows, 1u);  // only the call's last row follows
  EXPECT_EQ(qo::stage(q, 598, 2, rows, cols, nullptr, x.data(), stride).ahead.at[0], nullptr);
  EXPECT_EQ(qo::stage(q, 0, 2, 10, cols, nullptr, x.data(), stride).ahead.at[0], nullptr);  // cached input
}

// contract (FP environment): in every rounding mode, and with flush-to-zero, each path gives the
// reference's bits of that environment -- the block scales' fp16 rounding included (NEON's
// follows FPCR, so such calls run the reference there: quantize_op::narrows).
TEST_P(Quant, EveryRoundingModeAndFlushToZero) {
  NORMKIT_USE_ISA(GetParam());
  const isa i = GetParam();
  rng r(0xfe);
  const int modes[] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  for (int flush = 0; flush < 2; ++flush)
    for (int mode : modes) {
      const std::string what =
          std::string(normkit::to_string(i)) + " mode " + std::to_string(mode) + (flush ? " ftz" : "");
      std::unique_ptr<flush_to_zero_scope> ftz(flush ? new flush_to_zero_scope : nullptr);
      ASSERT_EQ(std::fesetround(mode), 0);
      for (int kind = 0; kind < 4; ++kind) {
        const std::vector<float> v = kernel_values(r, 2 * 1024, kind);
        kernel_case<e4m3>(v, 2, 1024, 0.37f, quant_mode::static_scale, what + " e4m3 static");
        kernel_case<e5m2>(v, 2, 1024, 0.0f, quant_mode::dynamic_row, what + " e5m2 dynamic");
        kernel_case<std::int8_t>(v, 2, 1024, 0.5f, quant_mode::dynamic_row, what + " i8 dynamic");
        kernel_case<std::int8_t>(v, 2, 1024, 0.0f, quant_mode::q8_0, what + " q8_0");
      }
      const norm_case c{5, 1024, 1024, 32, 1e-6f, 11};
      fused_case<norm_kind::rms, normkit::llama, bf16, bf16, std::int8_t>(c, quant_mode::q8_0, 0.0f,
                                                                          what + " q8_0");
      const norm_case d{5, 1024, 1024, 1024, 1e-6f, 12};
      fused_case<norm_kind::layer, normkit::pytorch, fp16, fp16, e4m3>(d, quant_mode::dynamic_row, 0.0f,
                                                                       what + " e4m3 dynamic");
      fused_case<norm_kind::rms, normkit::llama, bf16, bf16, e4m3>(d, quant_mode::static_scale, 0.001f,
                                                                   what + " e4m3 static");
      fused_case<norm_kind::layer, normkit::pytorch, fp16, fp16, std::int8_t>(d, quant_mode::static_scale,
                                                                              30.0f, what + " i8 static");
      std::fesetround(FE_TONEAREST);
    }
}

// ---- Golden: the formulas of vLLM and ggml (tests/quant_formulas.hpp) on the plain norm's fp32
// values v, which the quantized ops must quantize.

constexpr std::size_t g_rows = 9, g_cols = 512;

template <class Policy>
std::vector<float> plain_v(const std::vector<bf16>& x, const std::vector<bf16>& g) {
  std::vector<float> v(g_rows * g_cols);
  EXPECT_EQ(normkit::rms_norm<Policy>(x.data(), g.data(), v.data(), g_rows, g_cols, 1e-6f), status::ok);
  return v;
}

struct golden_data {
  std::vector<bf16> x, g;
  golden_data() {
    rng r(77);
    x = normal_vec<bf16>(r, g_rows * g_cols, 2.0f);
    g = normal_vec<bf16>(r, g_cols);
    for (std::size_t j = 0; j < g_cols; ++j)
      x[4 * g_cols + j] = as<bf16>(0.0f);  // a zero row: v = 0, the minimum scale
    x[6 * g_cols + 17] = as<bf16>(3e4f);   // one large element: the row's other values quantize small
  }
};

TEST_P(Quant, DynamicInt8MatchesVllm) {
  NORMKIT_USE_ISA(GetParam());
  const golden_data d;
  const std::vector<float> v = plain_v<normkit::llama>(d.x, d.g);
  std::vector<std::int8_t> q(g_rows * g_cols), want(g_cols);
  std::vector<float> s(g_rows);
  ASSERT_EQ(normkit::rms_norm_dynamic_quant<normkit::llama>(d.x.data(), d.g.data(), q.data(), s.data(),
                                                            g_rows, g_cols, 1e-6f, 0.0f),
            status::ok);
  for (std::size_t r = 0; r < g_rows; ++r) {
    const float ws = formula::vllm_dynamic_per_token_int8(v.data() + r * g_cols, g_cols, want.data());
    EXPECT_EQ(u32(s[r]), u32(ws)) << "row " << r;
    for (std::size_t j = 0; j < g_cols; ++j)
      ASSERT_EQ(q[r * g_cols + j], want[j]) << "row " << r << " col " << j;
  }
  EXPECT_EQ(s[4], FLT_EPSILON);  // the zero row: vLLM's min_scaling_factor for int8
}

TEST_P(Quant, DynamicE4m3MatchesVllmWithAndWithoutScaleUb) {
  NORMKIT_USE_ISA(GetParam());
  const golden_data d;
  const std::vector<float> v = plain_v<normkit::gemma>(d.x, d.g);
  for (float ub : {0.0f, 2.0f, 1e6f}) {
    std::vector<e4m3> q(g_rows * g_cols);
    std::vector<std::uint8_t> want(g_cols);
    std::vector<float> s(g_rows);
    ASSERT_EQ(normkit::rms_norm_dynamic_quant<normkit::gemma>(d.x.data(), d.g.data(), q.data(), s.data(),
                                                              g_rows, g_cols, 1e-6f, ub),
              status::ok);
    for (std::size_t r = 0; r < g_rows; ++r) {
      const float ws = formula::vllm_dynamic_per_token_e4m3(v.data() + r * g_cols, g_cols,
                                                            ub > 0.0f ? &ub : nullptr, want.data());
      EXPECT_EQ(u32(s[r]), u32(ws)) << "row " << r << " ub " << ub;
      for (std::size_t j = 0; j < g_cols; ++j)
        ASSERT_EQ(q[r * g_cols + j].bits, want[j]) << "row " << r << " col " << j << " ub " << ub;
    }
    if (ub == 2.0f) {  // the cap bites on every normal row: s = 2 / 448 and the large values saturate
      EXPECT_EQ(s[0], 2.0f / 448.0f);
      EXPECT_EQ(q[6 * g_cols + 17].bits, 0x7eu);
    }
    EXPECT_EQ(s[4], 1.0f / (448.0f * 512.0f));  // zero row
  }
}

TEST_P(Quant, Q8_0MatchesGgmlReference) {
  NORMKIT_USE_ISA(GetParam());
  const golden_data d;
  const std::vector<float> v = plain_v<normkit::llama>(d.x, d.g);
  std::vector<block_q8_0> y(g_rows * g_cols / 32);
  ASSERT_EQ(normkit::rms_norm_q8_0<normkit::llama>(d.x.data(), d.g.data(), y.data(), g_rows, g_cols, 1e-6f),
            status::ok);
  std::vector<formula::q8_0_block> want(g_cols / 32);
  for (std::size_t r = 0; r < g_rows; ++r) {
    ASSERT_TRUE(formula::ggml_quantize_row_q8_0_ref(v.data() + r * g_cols, g_cols, want.data()));
    for (std::size_t b = 0; b < g_cols / 32; ++b) {
      const block_q8_0& got = y[r * g_cols / 32 + b];
      ASSERT_EQ(got.d.bits, want[b].d) << "row " << r << " block " << b;
      for (std::size_t j = 0; j < 32; ++j)
        ASSERT_EQ(got.qs[j], want[b].qs[j]) << "row " << r << " block " << b << " j " << j;
    }
  }
  EXPECT_EQ(y[4 * g_cols / 32].d.bits, 0u);  // zero row: d = 0, id = 0, q = 0
}

// Ties: values whose v * id is exactly k + 0.5 round away from zero (ggml's roundf), not to even.
TEST_P(Quant, Q8_0RoundsTiesAwayFromZeroLikeGgml) {
  NORMKIT_USE_ISA(GetParam());
  // v_j = (j - 16) + 0.5 with amax 127: d = 1, id = 1, v * id exact ties.
  std::vector<float> v(32);
  for (std::size_t j = 0; j < 32; ++j)
    v[j] = static_cast<float>(static_cast<int>(j) - 16) + 0.5f;
  v[31] = 127.0f;
  std::vector<block_q8_0> got(1);
  const auto a = kernel_args<std::int8_t>(v.data(), nullptr, got.data(), nullptr, nullptr, 1, 32, 0.0f,
                                          quant_mode::q8_0);
  ASSERT_EQ((normkit::impl::call<nd::quantize_op, normkit::round_once, std::int8_t>(a)), status::ok);
  std::vector<formula::q8_0_block> want(1);
  ASSERT_TRUE(formula::ggml_quantize_row_q8_0_ref(v.data(), 32, want.data()));
  EXPECT_EQ(got[0].d.bits, want[0].d);
  for (std::size_t j = 0; j < 32; ++j)
    EXPECT_EQ(got[0].qs[j], want[0].qs[j]) << j;
  EXPECT_EQ(got[0].qs[18], 3);   // 2.5 -> 3
  EXPECT_EQ(got[0].qs[15], -1);  // -0.5 -> -1
}

TEST_P(Quant, StaticMatchesTheConversionFormulasAndAmax) {
  NORMKIT_USE_ISA(GetParam());
  const golden_data d;
  const std::vector<float> v = plain_v<normkit::llama>(d.x, d.g);
  float want_amax = 0.0f;
  for (float e : v)
    want_amax = std::fabs(e) > want_amax ? std::fabs(e) : want_amax;
  for (float scale : {1.0f, 37.5f, 1e4f}) {
    std::vector<e4m3> q4(v.size());
    std::vector<e5m2> q5(v.size());
    std::vector<std::int8_t> q8(v.size());
    float a4 = -1, a5 = -1, a8 = -1;
    ASSERT_EQ(normkit::rms_norm_quant<normkit::llama>(d.x.data(), d.g.data(), q4.data(), g_rows, g_cols,
                                                      1e-6f, scale, &a4),
              status::ok);
    ASSERT_EQ(normkit::rms_norm_quant<normkit::llama>(d.x.data(), d.g.data(), q5.data(), g_rows, g_cols,
                                                      1e-6f, scale, &a5),
              status::ok);
    ASSERT_EQ(normkit::rms_norm_quant<normkit::llama>(d.x.data(), d.g.data(), q8.data(), g_rows, g_cols,
                                                      1e-6f, scale, &a8),
              status::ok);
    EXPECT_EQ(u32(a4), u32(want_amax));
    EXPECT_EQ(u32(a5), u32(want_amax));
    EXPECT_EQ(u32(a8), u32(want_amax));
    for (std::size_t k = 0; k < v.size(); ++k) {
      const float p = v[k] * scale;
      ASSERT_EQ(q4[k].bits, formula::e4m3_reference().from_float(p)) << k << " scale " << scale;
      ASSERT_EQ(q5[k].bits, formula::e5m2_reference().from_float(p)) << k << " scale " << scale;
      ASSERT_EQ(q8[k], formula::int8_rne_sat(p)) << k << " scale " << scale;
    }
    if (scale == 1e4f) {  // saturation: the largest |v| is far beyond every max
      std::size_t arg = 0;
      for (std::size_t k = 0; k < v.size(); ++k)
        arg = std::fabs(v[k]) > std::fabs(v[arg]) ? k : arg;
      EXPECT_EQ(q4[arg].bits & 0x7fu, 0x7eu);
      EXPECT_EQ(q5[arg].bits & 0x7fu, 0x7bu);
      EXPECT_EQ(q8[arg], v[arg] > 0 ? 127 : -128);
    }
  }
}

// NaN rows (a NaN or Inf input): static q canonical NaN / 0 and amax NaN; dynamic row scale NaN;
// Q8_0 d the canonical fp16 NaN and qs 0. The other rows are unaffected.
TEST_P(Quant, NanRowsAreDocumented) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t rows = 3, cols = 64;
  rng r(5);
  std::vector<bf16> x = normal_vec<bf16>(r, rows * cols), g = normal_vec<bf16>(r, cols);
  x[cols + 9] = from_bits<bf16>(0x7f80u);  // +Inf in row 1: the row is NaN (contract)
  std::vector<e4m3> q4(rows * cols);
  std::vector<e5m2> q5(rows * cols);
  std::vector<std::int8_t> q8(rows * cols);
  float amax = 0.0f;
  ASSERT_EQ(
      normkit::rms_norm_quant<normkit::llama>(x.data(), g.data(), q4.data(), rows, cols, 1e-6f, 2.0f, &amax),
      status::ok);
  EXPECT_EQ(u32(amax), 0x7fc00000u);
  ASSERT_EQ(normkit::rms_norm_quant<normkit::llama>(x.data(), g.data(), q5.data(), rows, cols, 1e-6f, 2.0f,
                                                    nullptr),
            status::ok);
  std::vector<float> s(rows);
  ASSERT_EQ(normkit::rms_norm_dynamic_quant<normkit::llama>(x.data(), g.data(), q8.data(), s.data(), rows,
                                                            cols, 1e-6f, 0.0f),
            status::ok);
  EXPECT_EQ(u32(s[1]), 0x7fc00000u);
  EXPECT_FALSE(std::isnan(s[0]));
  for (std::size_t j = 0; j < cols; ++j) {
    EXPECT_EQ(q4[cols + j].bits, 0x7fu);
    EXPECT_EQ(q5[cols + j].bits, 0x7eu);
    EXPECT_EQ(q8[cols + j], 0);
  }
  std::vector<block_q8_0> y(rows * cols / 32);
  ASSERT_EQ(normkit::rms_norm_q8_0<normkit::llama>(x.data(), g.data(), y.data(), rows, cols, 1e-6f),
            status::ok);
  for (std::size_t b = 2; b < 4; ++b) {
    EXPECT_EQ(y[b].d.bits, 0x7e00u);
    for (std::int8_t e : y[b].qs)
      EXPECT_EQ(e, 0);
  }
  EXPECT_NE(y[0].d.bits, 0x7e00u);
}

// ---- Bad arguments: each a status, nothing written (outputs, scales and amax keep their bytes).
TEST_P(Quant, BadArgumentsReturnTheirStatusAndWriteNothing) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t rows = 2, cols = 64;
  rng r(9);
  std::vector<bf16> x = normal_vec<bf16>(r, rows * cols), g = normal_vec<bf16>(r, cols);
  std::vector<std::int8_t> q(rows * cols + 8, 0x11);
  std::vector<float> s(rows + 2, 9.0f);
  std::vector<block_q8_0> y(rows * cols / 32 + 1);
  std::memset(static_cast<void*>(y.data()), 0x22, y.size() * sizeof(block_q8_0));
  float amax = 9.0f;
  const auto untouched = [&](const char* what) {
    for (std::int8_t e : q)
      ASSERT_EQ(e, 0x11) << what;
    for (float e : s)
      ASSERT_EQ(e, 9.0f) << what;
    ASSERT_EQ(amax, 9.0f) << what;
    const auto* bytes = reinterpret_cast<const unsigned char*>(y.data());
    for (std::size_t k = 0; k < y.size() * sizeof(block_q8_0); ++k)
      ASSERT_EQ(bytes[k], 0x22u) << what;
  };
  using normkit::llama;
  const bf16* xp = x.data();
  const bf16* gp = g.data();
  const float nan = f32(0x7fc00000u), inf = f32(0x7f800000u);
  for (float bad : {0.0f, -0.0f, -1.0f, nan, inf, -inf}) {
    EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, q.data(), rows, cols, 1e-6f, bad, &amax),
              status::invalid_scale)
        << bad;
    untouched("static scale");
  }
  for (float bad : {nan, inf, -inf}) {
    EXPECT_EQ(normkit::rms_norm_dynamic_quant<llama>(xp, gp, q.data(), s.data(), rows, cols, 1e-6f, bad),
              status::invalid_scale);
    untouched("scale_ub");
  }
  EXPECT_EQ(normkit::rms_norm_q8_0<llama>(xp, gp, y.data(), rows, 48, 1e-6f, 48, 2), status::invalid_block);
  untouched("cols % 32");
  EXPECT_EQ(normkit::rms_norm_q8_0<llama>(xp, gp, y.data(), rows, cols, 1e-6f, cols, 1),
            status::invalid_stride);
  untouched("y_stride");
  EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, q.data(), rows, cols, 1e-6f, 1.0f, &amax, cols, cols - 1),
            status::invalid_stride);
  untouched("q_stride");
  EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, q.data(), rows, cols, -1.0f, 1.0f, &amax),
            status::invalid_eps);
  untouched("eps");
  EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, q.data(), rows, cols, -1.0f, 0.0f, &amax),
            status::invalid_eps);
  untouched("eps before scale");
  EXPECT_EQ(normkit::rms_norm_dynamic_quant<llama>(xp, gp, q.data(), static_cast<float*>(nullptr), rows, cols,
                                                   1e-6f, 0.0f),
            status::null_pointer);
  untouched("null row_scales");
  EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, static_cast<std::int8_t*>(nullptr), rows, cols, 1e-6f,
                                           1.0f, &amax),
            status::null_pointer);
  untouched("null q");
  EXPECT_EQ(normkit::rms_norm_q8_0<llama>(xp, gp, static_cast<block_q8_0*>(nullptr), rows, cols, 1e-6f),
            status::null_pointer);
  untouched("null blocks");
  auto* odd_scales = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(s.data()) + 1);
  EXPECT_EQ(normkit::rms_norm_dynamic_quant<llama>(xp, gp, q.data(), odd_scales, rows, cols, 1e-6f, 0.0f),
            status::misaligned_pointer);
  untouched("misaligned row_scales");
  auto* odd_blocks = reinterpret_cast<block_q8_0*>(reinterpret_cast<unsigned char*>(y.data()) + 1);
  EXPECT_EQ(normkit::rms_norm_q8_0<llama>(xp, gp, odd_blocks, rows, cols, 1e-6f), status::misaligned_pointer);
  untouched("misaligned blocks");
  EXPECT_EQ(normkit::rms_norm_dynamic_quant<llama>(xp, gp, q.data(), reinterpret_cast<float*>(q.data() + 4),
                                                   rows, cols, 1e-6f, 0.0f),
            status::overlapping_output);
  untouched("row_scales inside q");
  float* amax_in_x = reinterpret_cast<float*>(x.data() + 2);
  const std::vector<bf16> x_before = x;
  EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, q.data(), rows, cols, 1e-6f, 1.0f, amax_in_x),
            status::overlapping_output);
  EXPECT_EQ(std::memcmp(x.data(), x_before.data(), x.size() * sizeof(bf16)), 0);
  untouched("amax inside x");
  auto* q_in_x = reinterpret_cast<std::int8_t*>(x.data());
  EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, q_in_x, rows, cols, 1e-6f, 1.0f, nullptr),
            status::overlapping_output);
  EXPECT_EQ(std::memcmp(x.data(), x_before.data(), x.size() * sizeof(bf16)), 0);
  // Zero sizes are valid no-ops; amax receives the max over no value, 0.
  EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, q.data(), 0, cols, 1e-6f, 1.0f, &amax), status::ok);
  EXPECT_EQ(amax, 0.0f);
  // ... but an empty call still writes amax, so a misaligned one is refused there too, unwritten.
  alignas(4) unsigned char raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  float* const odd_amax = reinterpret_cast<float*>(raw + 1);
  EXPECT_EQ(normkit::rms_norm_quant<llama>(xp, gp, q.data(), 0, cols, 1e-6f, 1.0f, odd_amax),
            status::misaligned_pointer);
  EXPECT_EQ(
      normkit::reference::layer_norm_quant<llama>(xp, gp, gp, q.data(), rows, 0, 1e-6f, 1.0f, odd_amax, 0, 0),
      status::misaligned_pointer);
  for (unsigned i = 0; i < sizeof raw; ++i)
    EXPECT_EQ(raw[i], i + 1) << "byte " << i;
  EXPECT_TRUE(normkit::is_invalid_argument(status::invalid_scale));
  EXPECT_TRUE(normkit::is_invalid_argument(status::invalid_block));
}

// The catalogue (tests/bad_inputs.hpp, quant_cases): each case's status as written by hand, as the
// rules give it (expected_quant_status), and as the call returns it; a rejected call leaves every
// byte of the arena as it was.
template <class Policy, class In, class W, class Q>
void catalogue_for(bool layer, const char* types) {
  namespace bi = bad_inputs;
  for (bi::quant_format f :
       {bi::quant_format::static_scale, bi::quant_format::dynamic_row, bi::quant_format::q8_0}) {
    const bi::quant_types t = bi::quant_types_of<In, W, Q>(layer, f);
    for (const bi::quant_case& c : bi::quant_cases(t, f)) {
      bi::quant_placement p;
      p.format = f;
      p.qs = f == bi::quant_format::q8_0 ? 2 : p.cols;
      c.edit(p);
      bi::arena a;
      const std::string what = std::string(layer ? "layer_norm " : "rms_norm ") + types + " format " +
                               std::to_string(static_cast<int>(f)) + ": " + c.why;
      EXPECT_EQ(bi::expected_quant_status(t, a.address(), p), c.want)
          << what << " (the rules vs the catalogue)";
      const auto before = a.snapshot();
      EXPECT_EQ((bi::run_quant<Policy, In, W, Q>(layer, a, p)), c.want) << what;
      if (c.want != status::ok) {
        EXPECT_TRUE(a.same_as(before)) << what << ": a rejected call wrote";
      }
    }
  }
}

TEST_P(Quant, CatalogueOfBadArguments) {
  NORMKIT_USE_ISA(GetParam());
  catalogue_for<normkit::llama, bf16, bf16, e4m3>(false, "bf16/bf16/e4m3");
  catalogue_for<normkit::llama, bf16, bf16, std::int8_t>(false, "bf16/bf16/i8");
  catalogue_for<normkit::pytorch, float, fp16, e5m2>(true, "f32/f16/e5m2");
}

INSTANTIATE_TEST_SUITE_P(Isa, Quant, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
