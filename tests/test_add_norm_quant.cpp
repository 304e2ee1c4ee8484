// SPDX-License-Identifier: MIT
// The fused residual add + quantized norms (quant.hpp: add_rms_norm_quant, add_layer_norm_quant,
// their _dynamic_quant and _q8_0 forms; ops/norm_quant.hpp), on every ISA this CPU has:
//   - each call equals its reference (normkit::reference::) bit for bit -- the quantized output,
//     the row scales or Q8_0 blocks, amax and the residual -- with the stored residual (llama) and
//     the fp32 sums (flashinfer), bf16 and fp32 tensors, odd column counts, strides with gaps,
//     row counts that span several chunks, NaN / zero / huge / overflowing rows, and poison
//     around every output;
//   - the fused call equals the unfused sequence on the same ISA: normkit::residual_add, then the
//     quantized norm (rms_norm_quant, ...) over the stored residual; under fp32_sum, over the fp32
//     sums f(x) + f(r) this file computes;
//   - bad arguments: each status, in the documented order, with nothing written.
#include "support.hpp"

#include <normkit/normkit.hpp>

#include <cmath>        // std::ldexp
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int8_t, std::uint8_t, std::uint32_t
#include <cstring>      // std::memcmp, std::memcpy, std::memset
#include <limits>       // std::numeric_limits
#include <string>       // std::string, std::to_string
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

namespace {

using namespace normkit_test;
using normkit::block_q8_0;
using normkit::e4m3;
using normkit::e5m2;
using normkit::isa;
using normkit::status;
namespace nr = normkit::reference;

class AddNormQuant : public ::testing::TestWithParam<isa> {};

std::uint32_t u32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

enum class mode { static_scale, dynamic_row, q8_0 };
enum class norm { rms, layer };

struct shape {
  std::size_t rows, cols, x_stride, r_stride, q_stride;  // q_stride in elements, or blocks for Q8_0
};

std::string describe(const shape& s) {
  return std::to_string(s.rows) + "x" + std::to_string(s.cols) + " strides " + std::to_string(s.x_stride) +
         "/" + std::to_string(s.r_stride) + "/" + std::to_string(s.q_stride);
}

// x and residual rows: normal values, with rows of a NaN in x, zeros, huge values (the norm's
// rescale) and sums beyond Res's range mixed in; the stride gaps hold values no row may read.
template <class Res>
void inputs(rng& g, const shape& s, std::vector<Res>& x, std::vector<Res>& r) {
  x.assign(s.rows * s.x_stride + 1, as<Res>(-3.0f));
  r.assign(s.rows * s.r_stride + 1, as<Res>(5.0f));
  const float big = std::ldexp(1.5f, 127);  // exact in bf16 and f32; twice it is beyond both
  for (std::size_t i = 0; i < s.rows; ++i)
    for (std::size_t j = 0; j < s.cols; ++j) {
      float a = std::ldexp(g.normal(), static_cast<int>(i % 5) - 2), b = g.normal();
      if (i % 7 == 3 && j == s.cols / 2)
        a = std::numeric_limits<float>::quiet_NaN();
      if (i % 7 == 5)
        a = 0.0f, b = -0.0f;
      if (i % 11 == 6)
        a = std::ldexp(a, 60), b = std::ldexp(b, 60);
      if (i % 13 == 9 && j % 3 == 0)
        a = big, b = big;  // the fp32 sum overflows Res (bf16, f32): an Inf residual, a NaN row
      x[i * s.x_stride + j] = as<Res>(a);
      r[i * s.r_stride + j] = as<Res>(b);
    }
}

constexpr unsigned char poison = 0xa5;

// The outputs of one call: the quantized bytes (q or blocks) with slack, row scales with a
// sentinel either side, amax, and the residual (a copy of the input residual).
template <class Res>
struct outputs {
  std::vector<unsigned char> q;
  std::vector<float> scales;
  float amax = -5.0f;
  std::vector<Res> residual;
  outputs(std::size_t q_bytes, std::size_t rows, const std::vector<Res>& r)
      : q(q_bytes + 64, poison), scales(rows + 2, -5.0f), residual(r) {}
};

// One call, fused (Fused) or its reference, on the outputs o.
template <bool Reference, norm N, class Policy, class Res, class W, class Q>
status fused_call(mode m, const shape& s, const std::vector<Res>& x, const std::vector<W>& g,
                  const std::vector<W>& b, float scale, outputs<Res>& o) {
  Q* q = reinterpret_cast<Q*>(o.q.data());
  auto* y = reinterpret_cast<block_q8_0*>(o.q.data());
  float* sc = o.scales.data() + 1;
  Res* res = o.residual.data();
  const W* gp = g.data();
  const W* bp = b.data();
  const float eps = 1e-6f;
  if (m == mode::static_scale) {
    if constexpr (N == norm::rms)
      return Reference ? nr::add_rms_norm_quant<Policy>(x.data(), res, gp, q, s.rows, s.cols, eps, scale,
                                                        &o.amax, s.x_stride, s.r_stride, s.q_stride)
                       : normkit::add_rms_norm_quant<Policy>(x.data(), res, gp, q, s.rows, s.cols, eps, scale,
                                                             &o.amax, s.x_stride, s.r_stride, s.q_stride);
    else
      return Reference
                 ? nr::add_layer_norm_quant<Policy>(x.data(), res, gp, bp, q, s.rows, s.cols, eps, scale,
                                                    &o.amax, s.x_stride, s.r_stride, s.q_stride)
                 : normkit::add_layer_norm_quant<Policy>(x.data(), res, gp, bp, q, s.rows, s.cols, eps, scale,
                                                         &o.amax, s.x_stride, s.r_stride, s.q_stride);
  }
  if (m == mode::dynamic_row) {
    if constexpr (N == norm::rms)
      return Reference
                 ? nr::add_rms_norm_dynamic_quant<Policy>(x.data(), res, gp, q, sc, s.rows, s.cols, eps,
                                                          scale, s.x_stride, s.r_stride, s.q_stride)
                 : normkit::add_rms_norm_dynamic_quant<Policy>(x.data(), res, gp, q, sc, s.rows, s.cols, eps,
                                                               scale, s.x_stride, s.r_stride, s.q_stride);
    else
      return Reference
                 ? nr::add_layer_norm_dynamic_quant<Policy>(x.data(), res, gp, bp, q, sc, s.rows, s.cols, eps,
                                                            scale, s.x_stride, s.r_stride, s.q_stride)
                 : normkit::add_layer_norm_dynamic_quant<Policy>(x.data(), res, gp, bp, q, sc, s.rows, s.cols,
                                                                 eps, scale, s.x_stride, s.r_stride,
                                                                 s.q_stride);
  }
  if constexpr (N == norm::rms)
    return Reference ? nr::add_rms_norm_q8_0<Policy>(x.data(), res, gp, y, s.rows, s.cols, eps, s.x_stride,
                                                     s.r_stride, s.q_stride)
                     : normkit::add_rms_norm_q8_0<Policy>(x.data(), res, gp, y, s.rows, s.cols, eps,
                                                          s.x_stride, s.r_stride, s.q_stride);
  else
    return Reference ? nr::add_layer_norm_q8_0<Policy>(x.data(), res, gp, bp, y, s.rows, s.cols, eps,
                                                       s.x_stride, s.r_stride, s.q_stride)
                     : normkit::add_layer_norm_q8_0<Policy>(x.data(), res, gp, bp, y, s.rows, s.cols, eps,
                                                            s.x_stride, s.r_stride, s.q_stride);
}

// The unfused sequence on the active ISA: residual_add, then the quantized norm of what the
// policy normalizes -- the stored residual, or the fp32 sums (computed here: one float add).
template <norm N, class Policy, class Res, class W, class Q>
status unfused_call(mode m, const shape& s, const std::vector<Res>& x, const std::vector<W>& g,
                    const std::vector<W>& b, float scale, outputs<Res>& o) {
  std::vector<float> sums(s.rows * s.cols);
  for (std::size_t i = 0; i < s.rows; ++i)
    for (std::size_t j = 0; j < s.cols; ++j)
      sums[i * s.cols + j] =
          normkit::to_float(x[i * s.x_stride + j]) + normkit::to_float(o.residual[i * s.r_stride + j]);
  const status st =
      normkit::residual_add(x.data(), o.residual.data(), s.rows, s.cols, s.x_stride, s.r_stride);
  if (st != status::ok)
    return st;
  Q* q = reinterpret_cast<Q*>(o.q.data());
  auto* y = reinterpret_cast<block_q8_0*>(o.q.data());
  float* sc = o.scales.data() + 1;
  const W* gp = g.data();
  const W* bp = b.data();
  const float eps = 1e-6f;
  auto run = [&](const auto* v, std::size_t v_stride) {
    if (m == mode::static_scale) {
      if constexpr (N == norm::rms)
        return normkit::rms_norm_quant<Policy>(v, gp, q, s.rows, s.cols, eps, scale, &o.amax, v_stride,
                                               s.q_stride);
      else
        return normkit::layer_norm_quant<Policy>(v, gp, bp, q, s.rows, s.cols, eps, scale, &o.amax, v_stride,
                                                 s.q_stride);
    }
    if (m == mode::dynamic_row) {
      if constexpr (N == norm::rms)
        return normkit::rms_norm_dynamic_quant<Policy>(v, gp, q, sc, s.rows, s.cols, eps, scale, v_stride,
                                                       s.q_stride);
      else
        return normkit::layer_norm_dynamic_quant<Policy>(v, gp, bp, q, sc, s.rows, s.cols, eps, scale,
                                                         v_stride, s.q_stride);
    }
    if constexpr (N == norm::rms)
      return normkit::rms_norm_q8_0<Policy>(v, gp, y, s.rows, s.cols, eps, v_stride, s.q_stride);
    else
      return normkit::layer_norm_q8_0<Policy>(v, gp, bp, y, s.rows, s.cols, eps, v_stride, s.q_stride);
  };
  const bool reads_sum =
      Policy::residual == normkit::residual_norm::fp32_sum && !std::is_same<Res, float>::value;
  return reads_sum ? run(static_cast<const float*>(sums.data()), s.cols)
                   : run(static_cast<const Res*>(o.residual.data()), s.r_stride);
}

// Two outputs equal byte for byte, and nothing outside the rows written (q and scales).
template <class Res>
void expect_same(const outputs<Res>& a, const outputs<Res>& b, mode m, const shape& s,
                 const std::string& what) {
  for (std::size_t k = 0; k < a.q.size(); ++k)
    ASSERT_EQ(a.q[k], b.q[k]) << what << ": output byte " << k;
  ASSERT_EQ(std::memcmp(a.scales.data(), b.scales.data(), a.scales.size() * sizeof(float)), 0)
      << what << ": row scales";
  ASSERT_EQ(u32(a.amax), u32(b.amax)) << what << ": amax";
  ASSERT_TRUE(same_bits(a.residual, b.residual, what + ": residual"));
  const bool blocks = m == mode::q8_0;
  const std::size_t row_bytes = blocks ? s.cols / 32 * sizeof(block_q8_0) : s.cols;
  const std::size_t stride_bytes = blocks ? s.q_stride * sizeof(block_q8_0) : s.q_stride;
  for (std::size_t k = 0; k < a.q.size(); ++k) {
    const bool inside = k < s.rows * stride_bytes && k % stride_bytes < row_bytes;
    if (!inside) {
      ASSERT_EQ(a.q[k], poison) << what << ": wrote outside the rows, byte " << k;
    }
  }
  ASSERT_EQ(u32(a.scales.front()), u32(-5.0f)) << what;
  ASSERT_EQ(u32(a.scales.back()), u32(-5.0f)) << what;
  if (m == mode::dynamic_row && s.rows > 0) {
    ASSERT_NE(u32(a.scales[1]), u32(-5.0f)) << what << ": no row scale written";
  }
  if (m == mode::static_scale) {
    ASSERT_NE(u32(a.amax), u32(-5.0f)) << what << ": amax not written";
  }
}

template <norm N, class Policy, class Res, class W, class Q>
void one_case(mode m, const shape& s0, float scale, std::uint64_t seed, const std::string& name) {
  shape s = s0;
  if (m == mode::q8_0)
    s.q_stride = s.cols / 32 + seed % 2;
  const std::string what = std::string(normkit::to_string(normkit::active_isa())) + " " + name + " " +
                           describe(s) + " mode " + std::to_string(static_cast<int>(m));
  rng g(seed);
  std::vector<Res> x, r;
  inputs(g, s, x, r);
  const std::vector<W> gamma = normal_vec<W>(g, s.cols), beta = normal_vec<W>(g, s.cols, 0.5f);
  const std::size_t q_bytes =
      m == mode::q8_0 ? s.rows * s.q_stride * sizeof(block_q8_0) : s.rows * s.q_stride;
  outputs<Res> fused(q_bytes, s.rows, r), ref(q_bytes, s.rows, r), unfused(q_bytes, s.rows, r);
  ASSERT_EQ((fused_call<false, N, Policy, Res, W, Q>(m, s, x, gamma, beta, scale, fused)), status::ok)
      << what;
  ASSERT_EQ((fused_call<true, N, Policy, Res, W, Q>(m, s, x, gamma, beta, scale, ref)), status::ok) << what;
  expect_same(fused, ref, m, s, what + " (fused vs reference)");
  ASSERT_EQ((unfused_call<N, Policy, Res, W, Q>(m, s, x, gamma, beta, scale, unfused)), status::ok) << what;
  expect_same(fused, unfused, m, s, what + " (fused vs unfused)");
  // The residual's stride gaps keep the input's values.
  for (std::size_t i = 0; i + 1 < s.rows; ++i)
    for (std::size_t j = s.cols; j < s.r_stride; ++j)
      ASSERT_EQ(bits(fused.residual[i * s.r_stride + j]), bits(r[i * s.r_stride + j])) << what;
}

template <norm N, class Policy, class Res, class W>
void sweep(const char* name) {
  // One row; odd widths and tails; strides with gaps; several 32 KiB chunks (70 x 256 of bf16 +
  // fp32 is 21 rows a chunk); a 4096-wide strided row set; nothing to do.
  const shape shapes[] = {{1, 32, 32, 32, 32},   {5, 33, 40, 37, 35},      {3, 7, 7, 9, 9},
                          {19, 96, 100, 96, 97}, {70, 256, 256, 260, 256}, {3, 4096, 4100, 4096, 4096},
                          {200, 64, 64, 64, 64}, {0, 64, 64, 64, 64}};
  const float scales[] = {1.0f, 100.0f, 0.001f, 5000.0f};
  const float ubs[] = {0.0f, 0.01f, 1e30f};
  std::uint64_t seed = 1;
  for (const shape& s : shapes) {
    ++seed;
    one_case<N, Policy, Res, W, e4m3>(mode::static_scale, s, scales[seed % 4], seed,
                                      std::string(name) + " e4m3");
    one_case<N, Policy, Res, W, std::int8_t>(mode::dynamic_row, s, ubs[seed % 3], seed,
                                             std::string(name) + " i8");
    if (s.cols % 32 == 0)
      one_case<N, Policy, Res, W, std::int8_t>(mode::q8_0, s, 0.0f, seed, std::string(name) + " q8_0");
  }
}

TEST_P(AddNormQuant, EqualsReferenceAndUnfusedSequence) {
  NORMKIT_USE_ISA(GetParam());
  sweep<norm::rms, normkit::llama, bf16, bf16>("add_rms_norm<llama> bf16/bf16");
  sweep<norm::rms, normkit::flashinfer, bf16, bf16>("add_rms_norm<flashinfer> bf16/bf16");
  sweep<norm::rms, normkit::llama, float, float>("add_rms_norm<llama> f32/f32");
  sweep<norm::layer, normkit::flashinfer, bf16, float>("add_layer_norm<flashinfer> bf16/f32");
  sweep<norm::layer, normkit::llama, float, bf16>("add_layer_norm<llama> f32/bf16");
}

// e5m2 and the dynamic fp8 path (a division, not a reciprocal: ops/quantize.hpp) once each.
TEST_P(AddNormQuant, Fp8FormatsEqualReferenceAndUnfused) {
  NORMKIT_USE_ISA(GetParam());
  const shape s{37, 160, 170, 161, 165};
  one_case<norm::rms, normkit::flashinfer, bf16, bf16, e5m2>(mode::static_scale, s, 3.0f, 91,
                                                             "rms flashinfer e5m2");
  one_case<norm::rms, normkit::llama, bf16, bf16, e4m3>(mode::dynamic_row, s, 0.0f, 92,
                                                        "rms llama e4m3 dynamic");
}

// Inputs far enough that each quantize stage prefetches the next chunk's rows of x and of the
// residual (ops/norm_quant.hpp): never read through, so no bit changes.
TEST_P(AddNormQuant, PrefetchedRowsEqualReferenceAndUnfused) {
  NORMKIT_USE_ISA(GetParam());
  const shape s{1030, 2048, 2052, 2050, 2048};  // 4 MiB of 4 KiB x rows: prefetched
  static_assert(normkit::detail::prefetches(1030 * 2048 * sizeof(bf16), 2048 * sizeof(bf16)), "prefetched");
  one_case<norm::rms, normkit::llama, bf16, bf16, std::int8_t>(mode::q8_0, s, 0.0f, 93, "rms llama far q8_0");
  one_case<norm::rms, normkit::llama, bf16, bf16, e4m3>(mode::dynamic_row, s, 0.0f, 94,
                                                        "rms llama far e4m3 dynamic");
  // The static kernel's stage prefetches the same rows itself (its norm_rows' `ahead`).
  one_case<norm::rms, normkit::llama, bf16, bf16, e4m3>(mode::static_scale, s, 3.0f, 95,
                                                        "rms llama far e4m3 static");
  one_case<norm::layer, normkit::pytorch, bf16, bf16, std::int8_t>(mode::static_scale, s, 20.0f, 96,
                                                                   "layer pytorch far i8 static");
}

// A composite's stage runner (dispatch/run.hpp, run_stage) that runs nothing and records the hint
// of the stages of type Stage.
template <class Stage>
struct hint_recorder {
  normkit::detail::rows_ahead* got;
  int* seen;
  bool streams(std::size_t) const { return false; }
  template <class Op, class P, class A>
  bool has_kernel(Op, P, const A&) const {
    return true;
  }
  template <class Op, class P, class A>
  void operator()(Op, P, const A& args) const {
    if constexpr (std::is_same<Op, Stage>::value) {
      *got = args.ahead;
      ++*seen;
    }
  }
};

// The hint the static kernel's stage gets is the next chunk's rows of x and of the residual, as for
// add_rms_norm's norm stage (test_add_norm.cpp checks that geometry): for a first, a middle, the
// next-to-last and the last chunk, and none for a call whose input stays in cache.
TEST(AddNormQuantStages, StaticStageCarriesTheNextChunksRows) {
  using op = normkit::detail::add_norm_quant_op<normkit::detail::rms_norm_op>;
  using stage_op = normkit::detail::norm_static_quant_op<normkit::detail::rms_norm_op>;
  const std::size_t rows = 600, cols = 4096, xs = 4100, rs = 4104;
  std::vector<bf16> x(rows * xs), r(rows * rs);
  std::vector<std::int8_t> q(rows * cols);
  const auto quant = normkit::impl::static_quant<std::int8_t>(q.data(), 1.0f, nullptr, cols);
  op::args<bf16, bf16, std::int8_t> a{x.data(), r.data(), nullptr, nullptr, rows, cols, 1e-6f, xs, rs, quant};
  auto hint_of = [&](std::size_t r0, std::size_t n, std::size_t call_rows) {
    normkit::detail::rows_ahead got;
    int statics = 0;
    a.rows = call_rows;
    op::run_rows<normkit::llama>(a, r0, n, nullptr, hint_recorder<stage_op>{&got, &statics});
    EXPECT_EQ(statics, 1);
    return got;
  };
  for (const std::size_t call_rows : {rows, std::size_t(10)})
    for (const std::size_t r0 : {std::size_t(0), std::size_t(2), std::size_t(596), std::size_t(598)}) {
      if (r0 >= call_rows)
        continue;
      const auto got = hint_of(r0, 2, call_rows);
      const auto want = normkit::detail::next_chunk_ahead(r0, 2, call_rows, cols, x.data(), xs, r.data(), rs);
      const std::string at = "chunk at row " + std::to_string(r0) + " of " + std::to_string(call_rows);
      for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(got.at[k], want.at[k]) << at;
        EXPECT_EQ(got.stride[k], want.stride[k]) << at;
      }
      EXPECT_EQ(got.rows, want.rows) << at;
      EXPECT_EQ(got.elem, want.elem) << at;
    }
  EXPECT_NE(hint_of(0, 2, rows).at[1], nullptr);  // the residual is hinted too
}

// ---- Bad arguments: each status in the documented order (quant.hpp), nothing written.
TEST_P(AddNormQuant, BadArgumentsReturnTheirStatusAndWriteNothing) {
  NORMKIT_USE_ISA(GetParam());
  using normkit::llama;
  const std::size_t rows = 2, cols = 64;
  rng g(9);
  std::vector<bf16> x = normal_vec<bf16>(g, rows * cols), gamma = normal_vec<bf16>(g, cols);
  const std::vector<bf16> r0 = normal_vec<bf16>(g, rows * cols + 16);
  std::vector<bf16> r = r0;
  std::vector<std::int8_t> q(rows * cols + 8, 0x11);
  std::vector<float> s(rows + 2, 9.0f);
  std::vector<block_q8_0> y(rows * cols / 32 + 1);
  std::memset(static_cast<void*>(y.data()), 0x22, y.size() * sizeof(block_q8_0));
  float amax = 9.0f;
  const std::vector<bf16> x0 = x;
  const auto untouched = [&](const std::string& what) {
    for (std::int8_t e : q)
      ASSERT_EQ(e, 0x11) << what;
    for (float e : s)
      ASSERT_EQ(e, 9.0f) << what;
    ASSERT_EQ(amax, 9.0f) << what;
    const auto* bytes = reinterpret_cast<const unsigned char*>(y.data());
    for (std::size_t k = 0; k < y.size() * sizeof(block_q8_0); ++k)
      ASSERT_EQ(bytes[k], 0x22u) << what;
    ASSERT_TRUE(same_bits(r, r0, what + ": residual"));
    ASSERT_TRUE(same_bits(x, x0, what + ": x"));
  };
  const bf16* xp = x.data();
  const bf16* gp = gamma.data();
  bf16* rp = r.data();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();

  // Scalars, in order: eps, then the strides (residual_stride included), then scale / block.
  EXPECT_EQ(
      normkit::add_rms_norm_quant<llama>(xp, rp, gp, q.data(), rows, cols, nan, 0.0f, &amax, cols, 1, 1),
      status::invalid_eps);
  untouched("eps first");
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, q.data(), rows, cols, 1e-6f, 0.0f, &amax, cols,
                                               cols - 1, cols),
            status::invalid_stride);
  untouched("residual_stride before scale");
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, q.data(), rows, cols, 1e-6f, 1.0f, &amax, cols - 1,
                                               cols, cols),
            status::invalid_stride);
  untouched("x_stride");
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, q.data(), rows, cols, 1e-6f, 1.0f, &amax, cols,
                                               cols, cols - 1),
            status::invalid_stride);
  untouched("q_stride");
  EXPECT_EQ(normkit::add_rms_norm_q8_0<llama>(xp, rp, gp, y.data(), rows, cols, 1e-6f, cols, cols, 1),
            status::invalid_stride);
  untouched("y_stride");
  EXPECT_EQ(normkit::add_rms_norm_q8_0<llama>(xp, rp, gp, y.data(), rows, cols, 1e-6f, cols, cols - 1, 2),
            status::invalid_stride);
  untouched("q8_0 residual_stride");
  for (float bad : {0.0f, -0.0f, -1.0f, nan, inf, -inf}) {
    EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, q.data(), rows, cols, 1e-6f, bad, &amax),
              status::invalid_scale)
        << bad;
    untouched("static scale");
  }
  for (float bad : {nan, inf, -inf}) {
    EXPECT_EQ(normkit::add_layer_norm_dynamic_quant<llama>(xp, rp, gp, gp, q.data(), s.data(), rows, cols,
                                                           1e-6f, bad),
              status::invalid_scale);
    untouched("scale_ub");
  }
  EXPECT_EQ(normkit::add_layer_norm_q8_0<llama>(xp, rp, gp, gp, y.data(), rows, 48, 1e-6f, 48, 48, 2),
            status::invalid_block);
  untouched("cols % 32");

  // Buffers: null, misaligned, overlapping (the residual is an output: disjoint from everything).
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(static_cast<const bf16*>(nullptr), rp, gp, q.data(), rows,
                                               cols, 1e-6f, 1.0f, &amax),
            status::null_pointer);
  untouched("null x");
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, static_cast<bf16*>(nullptr), gp, q.data(), rows, cols,
                                               1e-6f, 1.0f, &amax),
            status::null_pointer);
  untouched("null residual");
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, static_cast<e4m3*>(nullptr), rows, cols, 1e-6f,
                                               1.0f, &amax),
            status::null_pointer);
  untouched("null q");
  EXPECT_EQ(normkit::add_rms_norm_dynamic_quant<llama>(xp, rp, gp, q.data(), static_cast<float*>(nullptr),
                                                       rows, cols, 1e-6f, 0.0f),
            status::null_pointer);
  untouched("null row_scales");
  EXPECT_EQ(
      normkit::add_rms_norm_q8_0<llama>(xp, rp, gp, static_cast<block_q8_0*>(nullptr), rows, cols, 1e-6f),
      status::null_pointer);
  untouched("null blocks");
  auto* odd_r = reinterpret_cast<bf16*>(reinterpret_cast<unsigned char*>(rp) + 1);
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, odd_r, gp, q.data(), rows, cols, 1e-6f, 1.0f, &amax),
            status::misaligned_pointer);
  untouched("misaligned residual");
  auto* odd_s = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(s.data()) + 1);
  EXPECT_EQ(normkit::add_rms_norm_dynamic_quant<llama>(xp, rp, gp, q.data(), odd_s, rows, cols, 1e-6f, 0.0f),
            status::misaligned_pointer);
  untouched("misaligned row_scales");
  EXPECT_EQ(
      normkit::add_rms_norm_quant<llama>(xp, x.data() + 16, gp, q.data(), rows, cols, 1e-6f, 1.0f, &amax),
      status::overlapping_output);
  untouched("residual over x");
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, static_cast<const bf16*>(rp + 8), q.data(), rows, cols,
                                               1e-6f, 1.0f, &amax),
            status::overlapping_output);
  untouched("gamma inside the residual");
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, reinterpret_cast<std::int8_t*>(rp + 4), rows, cols,
                                               1e-6f, 1.0f, &amax),
            status::overlapping_output);
  untouched("q over the residual");
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, q.data(), rows, cols, 1e-6f, 1.0f,
                                               reinterpret_cast<float*>(rp + 2)),
            status::overlapping_output);
  untouched("amax inside the residual");
  EXPECT_EQ(normkit::add_rms_norm_dynamic_quant<llama>(
                xp, rp, gp, q.data(), reinterpret_cast<float*>(q.data() + 4), rows, cols, 1e-6f, 0.0f),
            status::overlapping_output);
  untouched("row_scales inside q");
  EXPECT_EQ(
      normkit::add_rms_norm_q8_0<llama>(xp, rp, gp, reinterpret_cast<block_q8_0*>(rp), rows, cols, 1e-6f),
      status::overlapping_output);
  untouched("blocks over the residual");
  // The references check the same.
  EXPECT_EQ(nr::add_rms_norm_quant<llama>(xp, x.data(), gp, q.data(), rows, cols, 1e-6f, 1.0f, &amax),
            status::overlapping_output);
  untouched("reference: residual over x");
  EXPECT_EQ(nr::add_layer_norm_q8_0<llama>(xp, rp, gp, gp, y.data(), rows, 48, 1e-6f, 48, 48, 2),
            status::invalid_block);
  untouched("reference: cols % 32");

  // Zero sizes are valid no-ops: nothing written but amax, the max over no value.
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, q.data(), 0, cols, 1e-6f, 1.0f, &amax),
            status::ok);
  EXPECT_EQ(u32(amax), 0u);
  amax = 9.0f;
  EXPECT_EQ(nr::add_layer_norm_quant<llama>(xp, rp, gp, gp, q.data(), rows, 0, 1e-6f, 1.0f, &amax),
            status::ok);
  EXPECT_EQ(u32(amax), 0u);
  amax = 9.0f;
  alignas(4) unsigned char raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(normkit::add_rms_norm_quant<llama>(xp, rp, gp, q.data(), 0, cols, 1e-6f, 1.0f,
                                               reinterpret_cast<float*>(raw + 2)),
            status::misaligned_pointer);
  for (unsigned i = 0; i < sizeof raw; ++i)
    EXPECT_EQ(raw[i], i + 1) << "empty call, misaligned amax: byte " << i;
  untouched("empty calls");
}

INSTANTIATE_TEST_SUITE_P(Isa, AddNormQuant, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
