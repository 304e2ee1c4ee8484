// SPDX-License-Identifier: MIT
// Differential fuzzing of the quantized norms (quant.hpp: rms_norm_quant, layer_norm_quant, their
// _dynamic_quant and _q8_0 forms, and the fused add_* forms) through the public API.
//
// One input picks one of twelve op/policy/type combinations (plain or fused, RMS or Layer; a
// stored-residual preset or flashinfer's fp32 sums for the fused ones; In/Res bf16 or f32; Q e4m3,
// e5m2 or int8, the int8 ones also run Q8_0), the quant mode, rows in [0, 8], cols in [0, 4096]
// (biased to vector widths +-1), row strides with gaps, placement against guard pages, value
// classes for x and the residual, eps, the static scale or the dynamic scale_ub from tables
// (valid, 0, negative, NaN, Inf, subnormal, huge, or raw bits), amax null or not, and one
// malformation or none (null, short stride, misaligned, an output over an input or over another
// output). Invariants (any violation aborts): the status follows the documented rules (written
// out below, not the library's checks); a rejected call changes no byte; an accepted call writes
// exactly the rows of the residual, q (or the Q8_0 blocks), the row scales and amax, with the bits
// of normkit::reference on contiguous copies, on every available ISA; inputs never change.
#include <normkit/normkit.hpp>

#include <algorithm>    // std::max
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint32_t, std::uintptr_t, std::int8_t
#include <cstdio>       // std::fprintf
#include <iterator>     // std::size
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

#include "guarded.hpp"
#include "values.hpp"

namespace {

using namespace normkit_fuzz;
using normkit::block_q8_0;
using normkit::e4m3;
using normkit::e5m2;
using normkit::isa;
using normkit::status;

constexpr std::uint32_t eps_patterns[] = {0x358637bdu, 0x00000000u, 0x80000000u, 0x00000001u,
                                          0x7f7fffffu, 0xb58637bdu, 0x7fc00000u, 0x7f800000u};
// Static scales: valid (1, 2^-7, 448, 127), 0, -0, negative, NaN (both signs), +-Inf,
// subnormal, huge (FLT_MAX, 1e30). Past the table: raw bits from the input.
constexpr std::uint32_t scale_patterns[] = {0x3f800000u, 0x3c000000u, 0x43e00000u, 0x42fe0000u, 0x00000000u,
                                            0x80000000u, 0xbf800000u, 0x7fc00000u, 0xffc00001u, 0x7f800000u,
                                            0xff800000u, 0x00000001u, 0x00400000u, 0x7f7fffffu, 0x7149f2cau};
// scale_ub: <= 0, no cap (0, -0, -1, -FLT_MAX); caps 1, 0.01, 448, subnormal, FLT_MAX; invalid:
// NaN, +-Inf. Past the table: raw bits.
constexpr std::uint32_t scale_ub_patterns[] = {0x00000000u, 0x80000000u, 0xbf800000u, 0x3f800000u,
                                               0x3c23d70au, 0x00000001u, 0x7f7fffffu, 0x43e00000u,
                                               0x7fc00000u, 0x7f800000u, 0xff800000u, 0xff7fffffu};

enum class qmode : unsigned { static_scale, dynamic_row, q8_0 };

enum class malform : unsigned {
  none,
  null_pointer,      // x, the residual, q / the blocks or the row scales
  short_stride,      // x, the residual or q
  misaligned,        // x, the residual, gamma, the blocks, the row scales or amax, one byte on
  output_in_input,   // an output starts inside x, gamma or beta
  output_in_output,  // an output starts inside another output
  input_in_output,   // gamma or beta starts inside an output
  count
};

struct call_args {
  std::uintptr_t x, residual, gamma, beta, q, scales, amax;
  std::size_t rows, cols, x_stride, r_stride, q_stride;
  float eps, scale;  // scale: the static scale, or scale_ub
};

struct sizes {
  std::size_t sr, sw, sq;  // In/Res, W, and one q element (1) or Q8_0 block (34)
  std::size_t aq;          // q's alignment: 1, or 2 for the blocks
};

struct range {
  std::uintptr_t b, e;
};
bool overlap(range u, range v) {
  return u.b < v.e && v.b < u.e;
}

// The documented rules (quant.hpp's header comment, docs/contract.md), in their order: eps;
// strides (x, the residual: cols; q: cols, or cols / 32 blocks); the scale (static: +0, negative,
// NaN, Inf; dynamic: scale_ub NaN or +-Inf); Q8_0 cols % 32; empty calls are ok; then null
// (gamma, beta, amax optional), misaligned, (no extent overflow is generated), and overlaps: every
// output (residual, q / blocks, row scales, amax) disjoint from every input and every other
// output, no in-place form.
status expected_status(const call_args& a, bool fused, qmode m, const sizes& z) {
  const std::uint32_t eb = bits(a.eps);
  if (eb > 0x7f7fffffu && eb != 0x80000000u)
    return status::invalid_eps;
  const std::size_t qcols = m == qmode::q8_0 ? a.cols / 32 : a.cols;
  if (a.x_stride < a.cols || (fused && a.r_stride < a.cols) || a.q_stride < qcols)
    return status::invalid_stride;
  const std::uint32_t sb = bits(a.scale);
  if (m == qmode::static_scale && (sb == 0 || sb >= 0x7f800000u))
    return status::invalid_scale;
  if (m == qmode::dynamic_row && (sb & 0x7fffffffu) >= 0x7f800000u)
    return status::invalid_scale;
  if (m == qmode::q8_0 && a.cols % 32 != 0)
    return status::invalid_block;
  if (a.rows == 0 || a.cols == 0)
    return status::ok;
  if (!a.x || (fused && !a.residual) || !a.q || (m == qmode::dynamic_row && !a.scales))
    return status::null_pointer;
  if (a.x % z.sr || (fused && a.residual % z.sr) || a.gamma % z.sw || a.beta % z.sw || a.q % z.aq ||
      (m == qmode::dynamic_row && a.scales % 4) || (m == qmode::static_scale && a.amax % 4))
    return status::misaligned_pointer;
  auto rows_of = [&](std::uintptr_t p, std::size_t stride, std::size_t n, std::size_t elem) {
    return range{p, p + ((a.rows - 1) * stride + n) * elem};
  };
  std::vector<range> in{rows_of(a.x, a.x_stride, a.cols, z.sr)}, out;
  if (a.gamma)
    in.push_back({a.gamma, a.gamma + a.cols * z.sw});
  if (a.beta)
    in.push_back({a.beta, a.beta + a.cols * z.sw});
  if (fused)
    out.push_back(rows_of(a.residual, a.r_stride, a.cols, z.sr));
  out.push_back(rows_of(a.q, a.q_stride, qcols, z.sq));
  if (m == qmode::dynamic_row)
    out.push_back({a.scales, a.scales + a.rows * 4});
  if (m == qmode::static_scale && a.amax)
    out.push_back({a.amax, a.amax + 4});
  for (std::size_t k = 0; k < out.size(); ++k) {
    for (const range& i : in)
      if (overlap(out[k], i))
        return status::overlapping_output;
    for (std::size_t j = 0; j < k; ++j)
      if (overlap(out[k], out[j]))
        return status::overlapping_output;
  }
  return status::ok;
}

// One call, on the API (Ref = false) or its normkit::reference twin. P: the policy; T: In/Res.
#define NK_QCALL(fn, ...) (Ref ? normkit::reference::fn<P>(__VA_ARGS__) : normkit::fn<P>(__VA_ARGS__))

template <bool Ref, bool Fused, bool Layer, class P, class T, class W, class Q>
status invoke(qmode m, const call_args& a) {
  const T* x = reinterpret_cast<const T*>(a.x);
  T* r = reinterpret_cast<T*>(a.residual);
  const W* g = reinterpret_cast<const W*>(a.gamma);
  const W* b = reinterpret_cast<const W*>(a.beta);
  Q* q = reinterpret_cast<Q*>(a.q);
  block_q8_0* y = reinterpret_cast<block_q8_0*>(a.q);
  float* s = reinterpret_cast<float*>(a.scales);
  float* amax = reinterpret_cast<float*>(a.amax);
  const std::size_t n = a.rows, c = a.cols, xs = a.x_stride, rs = a.r_stride, qs = a.q_stride;
  if (m == qmode::q8_0) {
    if constexpr (std::is_same<Q, std::int8_t>::value) {
      if constexpr (Fused && Layer)
        return NK_QCALL(add_layer_norm_q8_0, x, r, g, b, y, n, c, a.eps, xs, rs, qs);
      else if constexpr (Fused)
        return NK_QCALL(add_rms_norm_q8_0, x, r, g, y, n, c, a.eps, xs, rs, qs);
      else if constexpr (Layer)
        return NK_QCALL(layer_norm_q8_0, x, g, b, y, n, c, a.eps, xs, qs);
      else
        return NK_QCALL(rms_norm_q8_0, x, g, y, n, c, a.eps, xs, qs);
    }
    FUZZ_CHECK(false, "harness: q8_0 with a non-int8 combination");
  }
  if (m == qmode::dynamic_row) {
    if constexpr (Fused && Layer)
      return NK_QCALL(add_layer_norm_dynamic_quant, x, r, g, b, q, s, n, c, a.eps, a.scale, xs, rs, qs);
    else if constexpr (Fused)
      return NK_QCALL(add_rms_norm_dynamic_quant, x, r, g, q, s, n, c, a.eps, a.scale, xs, rs, qs);
    else if constexpr (Layer)
      return NK_QCALL(layer_norm_dynamic_quant, x, g, b, q, s, n, c, a.eps, a.scale, xs, qs);
    else
      return NK_QCALL(rms_norm_dynamic_quant, x, g, q, s, n, c, a.eps, a.scale, xs, qs);
  }
  if constexpr (Fused && Layer)
    return NK_QCALL(add_layer_norm_quant, x, r, g, b, q, n, c, a.eps, a.scale, amax, xs, rs, qs);
  else if constexpr (Fused)
    return NK_QCALL(add_rms_norm_quant, x, r, g, q, n, c, a.eps, a.scale, amax, xs, rs, qs);
  else if constexpr (Layer)
    return NK_QCALL(layer_norm_quant, x, g, b, q, n, c, a.eps, a.scale, amax, xs, qs);
  else
    return NK_QCALL(rms_norm_quant, x, g, q, n, c, a.eps, a.scale, amax, xs, qs);
}
#undef NK_QCALL

template <class Q>
constexpr const char* q_name() {
  return std::is_same<Q, e4m3>::value ? "e4m3" : std::is_same<Q, e5m2>::value ? "e5m2" : "int8";
}

struct case_ops {
  bool fused, layer, int8;
  const char *policy, *t_name, *w_name, *q_name;
  std::size_t st, sw;
  status (*api)(qmode, const call_args&);
  status (*ref)(qmode, const call_args&);
  fill_fn fill_t, fill_w;
};

template <bool Fused, bool Layer, class P, class T, class W, class Q>
case_ops ops_for() {
  return {Fused,
          Layer,
          std::is_same<Q, std::int8_t>::value,
          P::name,
          type_name<T>(),
          type_name<W>(),
          q_name<Q>(),
          sizeof(T),
          sizeof(W),
          &invoke<false, Fused, Layer, P, T, W, Q>,
          &invoke<true, Fused, Layer, P, T, W, Q>,
          &fill_erased<T>,
          &fill_erased<W>};
}

// The twelve instantiations (compile time: each is one composite op on every ISA). Every kind
// has each Q type; the int8 ones also carry Q8_0 (plain RMS, plain Layer, and both fused norms
// under stored residual and fp32 sums). flashinfer with f32 Res normalizes the stored residual
// (an fp32 sum is the residual itself).
case_ops pick_case(unsigned k) {
  using normkit::flashinfer;
  using normkit::gemma;
  using normkit::llama;
  using normkit::pytorch;
  using bf = normkit::bf16;
  using i8 = std::int8_t;
  switch (k % 12) {
    case 0:
      return ops_for<false, false, llama, bf, bf, e4m3>();
    case 1:
      return ops_for<false, false, gemma, float, bf, i8>();
    case 2:
      return ops_for<false, true, pytorch, bf, bf, i8>();
    case 3:
      return ops_for<false, true, llama, float, float, e5m2>();
    case 4:
      return ops_for<true, false, llama, bf, bf, i8>();
    case 5:
      return ops_for<true, false, llama, float, float, e5m2>();
    case 6:
      return ops_for<true, false, flashinfer, bf, bf, e4m3>();
    case 7:
      return ops_for<true, false, flashinfer, bf, bf, i8>();
    case 8:
      return ops_for<true, true, pytorch, bf, bf, e4m3>();
    case 9:
      return ops_for<true, true, llama, float, bf, i8>();
    case 10:
      return ops_for<true, true, flashinfer, bf, float, i8>();
    default:
      return ops_for<true, false, flashinfer, float, float, e5m2>();
  }
}

const char* op_name(const case_ops& op, qmode m) {
  static const char* const names[2][2][3] = {
      {{"rms_norm_quant", "rms_norm_dynamic_quant", "rms_norm_q8_0"},
       {"layer_norm_quant", "layer_norm_dynamic_quant", "layer_norm_q8_0"}},
      {{"add_rms_norm_quant", "add_rms_norm_dynamic_quant", "add_rms_norm_q8_0"},
       {"add_layer_norm_quant", "add_layer_norm_dynamic_quant", "add_layer_norm_q8_0"}}};
  return names[op.fused][op.layer][static_cast<unsigned>(m)];
}

std::uint32_t pattern(FuzzedDataProvider& in, const std::uint32_t* table, std::size_t n) {
  const std::size_t k = in.ConsumeIntegralInRange<std::size_t>(0, n);
  return k < n ? table[k] : in.ConsumeIntegral<std::uint32_t>();
}

void run_case(FuzzedDataProvider& in, const case_ops& op) {
  const unsigned mode_pick = in.ConsumeIntegralInRange<unsigned>(0, op.int8 ? 2 : 1);
  const qmode m = static_cast<qmode>(mode_pick);
  const bool q8 = m == qmode::q8_0, dyn = m == qmode::dynamic_row, stat = m == qmode::static_scale;
  const sizes z{op.st, op.sw, q8 ? sizeof(block_q8_0) : 1, q8 ? alignof(block_q8_0) : 1};
  const std::size_t rows = in.ConsumeIntegralInRange<std::size_t>(0, 8);
  // Q8_0 rows mostly whole blocks (cols % 32 == 0), else invalid_block.
  std::size_t cols = pick_cols(in);
  if (q8 && in.ConsumeIntegralInRange<int>(0, 3) != 0)
    cols = cols / 32 * 32;
  const std::size_t qcols = q8 ? cols / 32 : cols;
  auto gap = [&](std::size_t max) {
    return in.ConsumeBool() ? in.ConsumeIntegralInRange<std::size_t>(1, max) : 0;
  };
  const std::size_t x_stride = cols + gap(40), r_stride = cols + gap(40), q_stride = qcols + gap(q8 ? 3 : 40);
  const bool anchor_end = in.ConsumeIntegralInRange<int>(0, 3) != 0;
  const std::size_t lead = in.ConsumeIntegralInRange<std::size_t>(0, 15);
  const float eps = f32(eps_patterns[in.ConsumeIntegralInRange<std::size_t>(0, std::size(eps_patterns) - 1)]);
  const float scale = f32(stat ? pattern(in, scale_patterns, std::size(scale_patterns))
                               : pattern(in, scale_ub_patterns, std::size(scale_ub_patterns)));
  const bool has_gamma = in.ConsumeIntegralInRange<int>(0, 7) != 0;
  const bool has_beta = op.layer && in.ConsumeIntegralInRange<int>(0, 7) != 0;
  const bool has_amax = stat && in.ConsumeIntegralInRange<int>(0, 3) != 0;
  const unsigned mp = in.ConsumeIntegralInRange<unsigned>(0, 2 * static_cast<unsigned>(malform::count));
  const malform mode = mp < static_cast<unsigned>(malform::count) ? static_cast<malform>(mp) : malform::none;
  const std::size_t pick = in.ConsumeIntegral<std::size_t>(), which = in.ConsumeIntegral<std::uint8_t>();
  prng g(in.ConsumeIntegral<std::uint64_t>());

  const std::size_t st = op.st, sw = op.sw;
  std::vector<std::uint8_t> xv(rows * cols * st), rv(rows * cols * st), gv(cols * sw), bv(cols * sw);
  op.fill_t(xv.data(), rows * cols, in.ConsumeIntegralInRange<unsigned>(0, 6), g, in);
  op.fill_t(rv.data(), rows * cols, in.ConsumeIntegralInRange<unsigned>(0, 6), g, in);
  op.fill_w(gv.data(), cols, in.ConsumeBool() ? 1u : 0u, g, in);
  op.fill_w(bv.data(), cols, in.ConsumeBool() ? 1u : 0u, g, in);

  tensor tx(rows, cols, x_stride, st, anchor_end, lead * st);
  tensor tr(op.fused ? rows : 0, cols, r_stride, st, !anchor_end, lead * st);
  tensor tq(rows, qcols, q_stride, z.sq, anchor_end, lead * z.aq);
  tensor ts(dyn ? 1 : 0, rows, rows, 4, !anchor_end, 0);
  tensor ta(has_amax ? 1 : 0, 1, 1, 4, anchor_end, 0);
  tensor tg(has_gamma ? 1 : 0, cols, cols, sw, anchor_end, 0);
  tensor tb(has_beta ? 1 : 0, cols, cols, sw, !anchor_end, 0);
  if (has_gamma)
    tg.set_rows(gv.data());
  if (has_beta)
    tb.set_rows(bv.data());
  auto addr = [](const tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data()); };
  call_args a{addr(tx),
              op.fused ? addr(tr) : 0,
              has_gamma ? addr(tg) : 0,
              has_beta ? addr(tb) : 0,
              addr(tq),
              dyn ? addr(ts) : 0,
              has_amax ? addr(ta) : 0,
              rows,
              cols,
              x_stride,
              r_stride,
              q_stride,
              eps,
              scale};
  const call_args own = a;

  // The outputs and inputs a malformation can move or host: address, extent in bytes, alignment.
  struct slot {
    std::uintptr_t* p;
    std::size_t bytes, align;
  };
  std::vector<slot> outs, ins;
  if (op.fused)
    outs.push_back({&a.residual, extent_bytes(rows, cols, r_stride, st), st});
  outs.push_back({&a.q, extent_bytes(rows, qcols, q_stride, z.sq), z.aq});
  if (dyn)
    outs.push_back({&a.scales, rows * 4, 4});
  if (has_amax)
    outs.push_back({&a.amax, 4, 4});
  ins.push_back({&a.x, extent_bytes(rows, cols, x_stride, st), st});
  if (has_gamma)
    ins.push_back({&a.gamma, cols * sw, sw});
  if (has_beta)
    ins.push_back({&a.beta, cols * sw, sw});
  // Moves *s.p to an aligned address inside host's extent (if there is one).
  auto place_inside = [&](const slot& s, const slot& host) {
    if (host.bytes == 0)
      return;
    const std::uintptr_t b = *host.p, at = (b + pick % host.bytes + s.align - 1) / s.align * s.align;
    if (at < b + host.bytes)
      *s.p = at;
  };
  switch (mode) {
    case malform::null_pointer: {
      std::uintptr_t* const cand[] = {&a.x, &a.residual, &a.q, &a.scales};
      std::uintptr_t* p = cand[which % 4];
      *(p == &a.residual && !op.fused ? &a.q : p == &a.scales && !dyn ? &a.q : p) = 0;
      break;
    }
    case malform::short_stride: {
      std::size_t* const cand[] = {&a.x_stride, &a.r_stride, &a.q_stride};
      const std::size_t k = which % 3, full = k == 2 ? qcols : cols;
      if (full > 0 && (k != 1 || op.fused))
        *cand[k] = pick % full;
      break;
    }
    case malform::misaligned: {
      std::uintptr_t* const cand[] = {&a.x, &a.residual, &a.gamma, &a.q, &a.scales, &a.amax};
      const std::size_t align[] = {st, st, sw, z.aq, 4, 4};
      const std::size_t k = which % 6;
      if (*cand[k] && align[k] > 1)
        *cand[k] += 1;
      break;
    }
    case malform::output_in_input:
      place_inside(outs[which % outs.size()], ins[pick % ins.size()]);
      break;
    case malform::output_in_output:
      if (outs.size() > 1) {
        const std::size_t i = which % outs.size(), j = (i + 1 + pick % (outs.size() - 1)) % outs.size();
        place_inside(outs[i], outs[j]);
      }
      break;
    case malform::input_in_output:
      if (ins.size() > 1)
        place_inside(ins[1 + which % (ins.size() - 1)], outs[pick % outs.size()]);
      break;
    default:
      break;
  }
  const bool empty = rows == 0 || cols == 0;
  // An empty valid call checks no buffer but amax's alignment and still sets *amax = 0
  // (quant.hpp): an aligned amax moved into gamma would be written there by design, so moves are
  // not generated and amax stays the harness's own on empty calls (test_quant checks the
  // misaligned one).
  if (empty)
    a.amax = own.amax;
  const status want = expected_status(a, op.fused, m, z);
  const bool accepted = want == status::ok && !empty;
  if (want == status::ok)  // the harness only ever accepts its own buffers (amax is written even when empty)
    FUZZ_CHECK(empty ? a.amax == own.amax
                     : a.x == own.x && a.residual == own.residual && a.gamma == own.gamma &&
                           a.beta == own.beta && a.q == own.q && a.scales == own.scales && a.amax == own.amax,
               "harness: accepted call with foreign buffers");
  const char* name = op_name(op, m);
  if (verbose())
    std::fprintf(
        stderr, "%s<%s> %s/%s/%s rows=%zu cols=%zu strides=%zu,%zu,%zu scale=0x%08x amax:%d mode=%u -> %s\n",
        name, op.policy, op.t_name, op.w_name, q8 ? "q8_0" : op.q_name, rows, cols, a.x_stride, a.r_stride,
        a.q_stride, bits(scale), has_amax, static_cast<unsigned>(mode), normkit::to_string(want));

  // The reference on contiguous copies; its outputs start as patterns it must overwrite.
  const std::size_t q_bytes = rows * qcols * z.sq;
  std::vector<std::uint8_t> want_r = rv, want_q(q_bytes, 0xA5);
  std::vector<float> want_s(rows, f32(0x7fa5a5a5u));
  float want_amax = f32(0x7fa5a5a5u);
  if (accepted) {
    const call_args c{reinterpret_cast<std::uintptr_t>(xv.data()),
                      op.fused ? reinterpret_cast<std::uintptr_t>(want_r.data()) : 0,
                      has_gamma ? reinterpret_cast<std::uintptr_t>(gv.data()) : 0,
                      has_beta ? reinterpret_cast<std::uintptr_t>(bv.data()) : 0,
                      reinterpret_cast<std::uintptr_t>(want_q.data()),
                      dyn ? reinterpret_cast<std::uintptr_t>(want_s.data()) : 0,
                      has_amax ? reinterpret_cast<std::uintptr_t>(&want_amax) : 0,
                      rows,
                      cols,
                      cols,
                      cols,
                      qcols,
                      eps,
                      scale};
    const status s = op.ref(m, c);
    FUZZ_CHECK(s == status::ok, "reference rejected a valid call: %s", normkit::to_string(s));
  } else if (want == status::ok && has_amax) {
    want_amax = 0.0f;  // an empty valid call: amax is the max over no value
  }

  std::vector<std::uint8_t> q_fill(q_bytes, 0x5a), got(std::max(rows * cols * st, q_bytes));
  const isa before = normkit::active_isa();
  for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::neon}) {
    if (!normkit::isa_available(i))
      continue;
    const status selected = normkit::set_isa(i);
    if (selected == status::isa_above_ceiling)
      continue;
    FUZZ_CHECK(selected == status::ok, "set_isa(%s)", normkit::to_string(i));
    tx.set_rows(xv.data());
    tr.set_rows(rv.data());
    tq.set_rows(q_fill.data());
    ts.set_rows(std::vector<float>(rows, f32(0x7f8a5a5au)).data());
    const float amax_fill = f32(0x7f8a5a5au);
    ta.set_rows(&amax_fill);
    tensor* const all[] = {&tx, &tr, &tq, &ts, &ta, &tg, &tb};
    std::vector<std::vector<std::uint8_t>> snap;
    for (tensor* t : all)
      snap.push_back(t->snapshot());
    for (tensor* t : all)
      t->arm();
    const status s = op.api(m, a);
    for (tensor* t : all)
      t->disarm();
    const char* isa_name = normkit::to_string(i);
    FUZZ_CHECK(s == want, "%s %s<%s> %s/%s/%s: status %s, want %s", isa_name, name, op.policy, op.t_name,
               op.w_name, op.q_name, normkit::to_string(s), normkit::to_string(want));
    FUZZ_CHECK(tx.same_as(snap[0]) && tg.same_as(snap[5]) && tb.same_as(snap[6]),
               "%s: x, gamma or beta changed", isa_name);
    if (!accepted) {
      FUZZ_CHECK(tr.same_as(snap[1]) && tq.same_as(snap[2]) && ts.same_as(snap[3]),
                 "%s %s: a rejected or empty call wrote memory", isa_name, name);
      if (want == status::ok && has_amax)  // empty and valid: amax = 0, nothing else
        FUZZ_CHECK(ta.outside_rows_changed() < 0 && bits_at(ta.data(), 0, 4) == 0u,
                   "%s %s: empty call: amax 0x%08x, want 0", isa_name, name, bits_at(ta.data(), 0, 4));
      else
        FUZZ_CHECK(ta.same_as(snap[4]), "%s %s: a rejected call wrote amax", isa_name, name);
      continue;
    }
    for (const tensor* t : {&tr, &tq, &ts, &ta})
      FUZZ_CHECK(t->outside_rows_changed() < 0, "%s %s: an output was written outside its rows", isa_name,
                 name);
    if (op.fused) {
      tr.get_rows(got.data());
      for (std::size_t k = 0; k < rows * cols; ++k)
        FUZZ_CHECK(bits_at(got.data(), k, st) == bits_at(want_r.data(), k, st),
                   "%s %s<%s> %s rows=%zu cols=%zu: residual row %zu col %zu: 0x%08x, reference 0x%08x",
                   isa_name, name, op.policy, op.t_name, rows, cols, k / cols, k % cols,
                   bits_at(got.data(), k, st), bits_at(want_r.data(), k, st));
    }
    tq.get_rows(got.data());
    for (std::size_t k = 0; k < q_bytes; ++k)
      FUZZ_CHECK(got[k] == want_q[k],
                 "%s %s<%s> %s/%s/%s rows=%zu cols=%zu scale=0x%08x: q byte %zu (row %zu): 0x%02x, reference "
                 "0x%02x",
                 isa_name, name, op.policy, op.t_name, op.w_name, op.q_name, rows, cols, bits(scale), k,
                 k / (qcols * z.sq), got[k], want_q[k]);
    if (dyn)
      for (std::size_t r = 0; r < rows; ++r)
        FUZZ_CHECK(bits_at(ts.data(), r, 4) == bits(want_s[r]),
                   "%s %s<%s> rows=%zu cols=%zu: row scale %zu: 0x%08x, reference 0x%08x", isa_name, name,
                   op.policy, rows, cols, r, bits_at(ts.data(), r, 4), bits(want_s[r]));
    if (has_amax)
      FUZZ_CHECK(bits_at(ta.data(), 0, 4) == bits(want_amax),
                 "%s %s<%s> rows=%zu cols=%zu: amax 0x%08x, reference 0x%08x", isa_name, name, op.policy,
                 rows, cols, bits_at(ta.data(), 0, 4), bits(want_amax));
  }
  (void)normkit::set_isa(before);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  run_case(in, pick_case(in.ConsumeIntegral<std::uint8_t>()));
  return 0;
}
