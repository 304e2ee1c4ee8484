// SPDX-License-Identifier: MIT
// Differential fuzzing of the fused residual add (add_rms_norm, add_layer_norm; their first stage
// is the residual_add kernel) through the public API.
//
// One input picks the op, the policy (stored residual or fp32 sum), Res/W/Out, rows in [0, 8],
// cols in [0, 4096] (biased to vector widths +-1), row strides with gaps, y over x, placement
// against guard pages, value classes for x and the residual (raw bits, overflow, subnormal, ...),
// eps (valid and invalid) and one malformation or none. Invariants (any violation aborts): the
// status follows the documented rules (written out below); a rejected call changes no byte; an
// accepted call writes exactly the residual's and y's rows, with the bits of the scalar reference
// on contiguous copies, on every available ISA.
#include <normkit/normkit.hpp>

#include <algorithm>  // std::max
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint8_t, std::uintptr_t
#include <cstdio>     // std::fprintf
#include <cstring>    // std::memcpy
#include <iterator>   // std::size
#include <vector>     // std::vector

#include "guarded.hpp"
#include "values.hpp"

namespace {

using namespace normkit_fuzz;
using normkit::isa;
using normkit::status;

constexpr std::uint32_t eps_patterns[] = {0x358637bdu, 0x00000000u, 0x80000000u, 0x00000001u,
                                          0x7f7fffffu, 0xb58637bdu, 0x7fc00000u, 0x7f800000u};

template <class F>
void with_policy(unsigned p, F&& f) {
  switch (p % 6) {
    case 0:
      return f(tag<normkit::llama>{});
    case 1:
      return f(tag<normkit::gemma>{});
    case 2:
      return f(tag<normkit::pytorch>{});
    case 3:
      return f(tag<normkit::flashinfer>{});
    case 4:
      return f(tag<normkit::flashinfer_gemma>{});
    default:
      return f(tag<normkit::fp32_sum_residual<normkit::t5>>{});
  }
}

enum class malform : unsigned {
  none,
  null_residual,
  short_residual_stride,
  y_over_residual,    // y == residual (same type and stride when possible)
  residual_in_x,      // the residual starts inside x's extent
  gamma_in_residual,  // gamma starts inside the residual
  count
};

struct call_args {
  std::uintptr_t x, residual, gamma, beta, y;
  std::size_t rows, cols, x_stride, r_stride, y_stride;
  float eps;
};

// The documented rules (add_norm.hpp, docs/contract.md): eps, strides, then the buffers; null,
// misaligned (none generated here), extents, overlaps -- the residual is an output, y may be x
// exactly, nothing else may overlap an output.
status expected_status(const call_args& a, std::size_t sr, std::size_t sw, std::size_t so, bool same_type) {
  const std::uint32_t eb = bits(a.eps);
  if (eb > 0x7f7fffffu && eb != 0x80000000u)
    return status::invalid_eps;
  if (a.x_stride < a.cols || a.r_stride < a.cols || a.y_stride < a.cols)
    return status::invalid_stride;
  if (a.rows == 0 || a.cols == 0)
    return status::ok;
  if (!a.x || !a.residual || !a.y)
    return status::null_pointer;
  if (a.x % sr || a.residual % sr || a.gamma % sw || a.beta % sw || a.y % so)  // y over a narrower residual
    return status::misaligned_pointer;
  struct range {
    std::uintptr_t b, e;
  };
  auto span_of_rows = [&](std::uintptr_t p, std::size_t stride, std::size_t elem) {
    return range{p, p + ((a.rows - 1) * stride + a.cols) * elem};
  };
  auto overlap = [](range u, range v) { return u.b < v.e && v.b < u.e; };
  const range x = span_of_rows(a.x, a.x_stride, sr), r = span_of_rows(a.residual, a.r_stride, sr),
              y = span_of_rows(a.y, a.y_stride, so), g{a.gamma, a.gamma + a.cols * sw},
              b{a.beta, a.beta + a.cols * sw};
  const bool y_is_x = same_type && a.y == a.x && (a.rows == 1 || a.y_stride == a.x_stride);
  if (overlap(r, x) || (a.gamma && overlap(r, g)) || (a.beta && overlap(r, b)))
    return status::overlapping_output;
  if ((!y_is_x && overlap(y, x)) || (a.gamma && overlap(y, g)) || (a.beta && overlap(y, b)))
    return status::overlapping_output;
  if (overlap(y, r))
    return status::overlapping_output;
  return status::ok;
}

struct case_ops {
  std::size_t sr, sw, so;
  bool same_type;
  const char *r_name, *w_name, *o_name;
  status (*api)(bool layer, const call_args& a);
  status (*ref)(bool layer, const void* x, void* r, const void* g, const void* b, void* y, std::size_t rows,
                std::size_t cols, float eps);
  fill_fn fill_r, fill_w;
  std::uint32_t out_fill;
};

template <class Policy, class Res, class W, class Out>
status call_api(bool layer, const call_args& a) {
  const Res* x = reinterpret_cast<const Res*>(a.x);
  Res* r = reinterpret_cast<Res*>(a.residual);
  const W* g = reinterpret_cast<const W*>(a.gamma);
  Out* y = reinterpret_cast<Out*>(a.y);
  return layer ? normkit::add_layer_norm<Policy>(x, r, g, reinterpret_cast<const W*>(a.beta), y, a.rows,
                                                 a.cols, a.eps, a.x_stride, a.r_stride, a.y_stride)
               : normkit::add_rms_norm<Policy>(x, r, g, y, a.rows, a.cols, a.eps, a.x_stride, a.r_stride,
                                               a.y_stride);
}

template <class Policy, class Res, class W, class Out>
status call_ref(bool layer, const void* x, void* r, const void* g, const void* b, void* y, std::size_t rows,
                std::size_t cols, float eps) {
  const Res* xp = static_cast<const Res*>(x);
  Res* rp = static_cast<Res*>(r);
  const W* gp = static_cast<const W*>(g);
  Out* yp = static_cast<Out*>(y);
  return layer ? normkit::reference::add_layer_norm<Policy>(xp, rp, gp, static_cast<const W*>(b), yp, rows,
                                                            cols, eps)
               : normkit::reference::add_rms_norm<Policy>(xp, rp, gp, yp, rows, cols, eps);
}

template <class Policy, class Res, class W, class Out>
case_ops ops_for() {
  return {sizeof(Res),
          sizeof(W),
          sizeof(Out),
          std::is_same<Res, Out>::value,
          type_name<Res>(),
          type_name<W>(),
          type_name<Out>(),
          &call_api<Policy, Res, W, Out>,
          &call_ref<Policy, Res, W, Out>,
          &fill_erased<Res>,
          &fill_erased<W>,
          std::uint32_t{normkit_test::bits_type<Out>(0x5a5a5a5au)}};
}

void run_case(FuzzedDataProvider& in, bool layer, const char* policy, const case_ops& op) {
  const std::size_t sr = op.sr, sw = op.sw, so = op.so;
  const std::size_t rows = in.ConsumeIntegralInRange<std::size_t>(0, 8);
  const std::size_t cols = pick_cols(in);
  std::size_t x_stride = cols + (in.ConsumeBool() ? in.ConsumeIntegralInRange<std::size_t>(1, 40) : 0);
  const std::size_t r_stride = cols + (in.ConsumeBool() ? in.ConsumeIntegralInRange<std::size_t>(1, 40) : 0);
  std::size_t y_stride = cols + (in.ConsumeBool() ? in.ConsumeIntegralInRange<std::size_t>(1, 40) : 0);
  const bool anchor_end = in.ConsumeIntegralInRange<int>(0, 3) != 0;
  const std::size_t lead = in.ConsumeIntegralInRange<std::size_t>(0, 15);
  const float eps = f32(eps_patterns[in.ConsumeIntegralInRange<std::size_t>(0, std::size(eps_patterns) - 1)]);
  const bool has_gamma = in.ConsumeIntegralInRange<int>(0, 7) != 0;
  const bool has_beta = layer && in.ConsumeIntegralInRange<int>(0, 7) != 0;
  const bool in_place = op.same_type && in.ConsumeIntegralInRange<int>(0, 3) == 0;
  const unsigned m = in.ConsumeIntegralInRange<unsigned>(0, 2 * static_cast<unsigned>(malform::count));
  const malform mode = m < static_cast<unsigned>(malform::count) ? static_cast<malform>(m) : malform::none;
  const std::size_t pick = in.ConsumeIntegral<std::size_t>();
  prng g(in.ConsumeIntegral<std::uint64_t>());
  if (in_place)
    y_stride = x_stride;

  std::vector<std::uint8_t> xv(rows * cols * sr), rv(rows * cols * sr), gv(cols * sw), bv(cols * sw);
  op.fill_r(xv.data(), rows * cols, in.ConsumeIntegralInRange<unsigned>(0, 6), g, in);
  op.fill_r(rv.data(), rows * cols, in.ConsumeIntegralInRange<unsigned>(0, 6), g, in);
  op.fill_w(gv.data(), cols, in.ConsumeBool() ? 1u : 0u, g, in);
  op.fill_w(bv.data(), cols, in.ConsumeBool() ? 1u : 0u, g, in);

  tensor tx(rows, cols, x_stride, sr, anchor_end, lead * sr);
  tensor tr(rows, cols, r_stride, sr, !anchor_end, lead * sr);
  tensor ty(rows, cols, y_stride, so, anchor_end, lead * so);
  tensor tg(has_gamma ? 1 : 0, cols, cols, sw, anchor_end, 0);
  tensor tb(has_beta ? 1 : 0, cols, cols, sw, !anchor_end, 0);
  if (has_gamma)
    tg.set_rows(gv.data());
  if (has_beta)
    tb.set_rows(bv.data());
  call_args a{
      reinterpret_cast<std::uintptr_t>(tx.data()),
      reinterpret_cast<std::uintptr_t>(tr.data()),
      has_gamma ? reinterpret_cast<std::uintptr_t>(tg.data()) : 0,
      has_beta ? reinterpret_cast<std::uintptr_t>(tb.data()) : 0,
      in_place ? reinterpret_cast<std::uintptr_t>(tx.data()) : reinterpret_cast<std::uintptr_t>(ty.data()),
      rows,
      cols,
      x_stride,
      r_stride,
      y_stride,
      eps};
  auto aligned_inside = [&](const tensor& t, std::size_t bytes, std::size_t elem) {
    return (reinterpret_cast<std::uintptr_t>(t.data()) + (bytes ? pick % bytes : 0)) / elem * elem;
  };
  switch (mode) {
    case malform::null_residual:
      a.residual = 0;
      break;
    case malform::short_residual_stride:
      a.r_stride = cols ? pick % cols : 0;
      break;
    case malform::y_over_residual:
      a.y = a.residual;
      a.y_stride = a.r_stride;
      break;
    case malform::residual_in_x:
      a.residual = aligned_inside(tx, extent_bytes(rows, cols, x_stride, sr), sr);
      break;
    case malform::gamma_in_residual:
      if (has_gamma)
        a.gamma = aligned_inside(tr, extent_bytes(rows, cols, r_stride, sr), sw);
      break;
    default:
      break;
  }
  const status want = expected_status(a, sr, sw, so, op.same_type);
  const bool accepted = want == status::ok && rows > 0 && cols > 0;
  if (accepted)  // the harness only ever accepts its own buffers
    FUZZ_CHECK(a.residual == reinterpret_cast<std::uintptr_t>(tr.data()) &&
                   (a.y == a.x || a.y == reinterpret_cast<std::uintptr_t>(ty.data())),
               "harness: accepted call with foreign buffers");
  const bool writes_x = accepted && a.y == a.x;
  if (verbose())
    std::fprintf(stderr, "%s<%s> %s/%s/%s rows=%zu cols=%zu strides=%zu,%zu,%zu y=x:%d mode=%u -> %s\n",
                 layer ? "add_layer_norm" : "add_rms_norm", policy, op.r_name, op.w_name, op.o_name, rows,
                 cols, a.x_stride, a.r_stride, a.y_stride, writes_x, static_cast<unsigned>(mode),
                 normkit::to_string(want));

  // The reference on contiguous copies.
  std::vector<std::uint8_t> want_r = rv, want_y(rows * cols * so);
  if (accepted) {
    const status s = op.ref(layer, xv.data(), want_r.data(), has_gamma ? gv.data() : nullptr,
                            has_beta ? bv.data() : nullptr, want_y.data(), rows, cols, eps);
    FUZZ_CHECK(s == status::ok, "reference rejected a valid call: %s", normkit::to_string(s));
  }

  std::vector<std::uint8_t> y_fill(rows * cols * so), got(rows * cols * std::max(sr, so));
  for (std::size_t k = 0; k < rows * cols; ++k)
    std::memcpy(&y_fill[k * so], &op.out_fill, so);
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
    ty.set_rows(y_fill.data());
    const auto sx = tx.snapshot(), s_r = tr.snapshot(), sy = ty.snapshot(), sg = tg.snapshot(),
               sb = tb.snapshot();
    tx.arm(), tr.arm(), ty.arm(), tg.arm(), tb.arm();
    const status s = op.api(layer, a);
    tx.disarm(), tr.disarm(), ty.disarm(), tg.disarm(), tb.disarm();
    const char* isa_name = normkit::to_string(i);
    FUZZ_CHECK(s == want, "%s %s<%s>: status %s, want %s", isa_name,
               layer ? "add_layer_norm" : "add_rms_norm", policy, normkit::to_string(s),
               normkit::to_string(want));
    FUZZ_CHECK(tg.same_as(sg) && tb.same_as(sb), "%s: gamma or beta changed", isa_name);
    if (!accepted) {
      FUZZ_CHECK(tx.same_as(sx) && tr.same_as(s_r) && ty.same_as(sy),
                 "%s: a rejected or empty call wrote memory", isa_name);
      continue;
    }
    FUZZ_CHECK(writes_x || tx.same_as(sx), "%s: x changed by an out-of-place call", isa_name);
    FUZZ_CHECK(tr.outside_rows_changed() < 0, "%s: the residual was written outside its rows", isa_name);
    const tensor& out = writes_x ? tx : ty;
    FUZZ_CHECK(out.outside_rows_changed() < 0, "%s: y was written outside its rows", isa_name);
    tr.get_rows(got.data());
    for (std::size_t k = 0; k < rows * cols; ++k)
      FUZZ_CHECK(bits_at(got.data(), k, sr) == bits_at(want_r.data(), k, sr),
                 "%s %s<%s> %s rows=%zu cols=%zu: residual row %zu col %zu: 0x%08x, reference 0x%08x",
                 isa_name, layer ? "add_layer_norm" : "add_rms_norm", policy, op.r_name, rows, cols, k / cols,
                 k % cols, bits_at(got.data(), k, sr), bits_at(want_r.data(), k, sr));
    out.get_rows(got.data());
    for (std::size_t k = 0; k < rows * cols; ++k)
      FUZZ_CHECK(bits_at(got.data(), k, so) == bits_at(want_y.data(), k, so),
                 "%s %s<%s> %s/%s/%s rows=%zu cols=%zu: y row %zu col %zu: 0x%08x, reference 0x%08x",
                 isa_name, layer ? "add_layer_norm" : "add_rms_norm", policy, op.r_name, op.w_name, op.o_name,
                 rows, cols, k / cols, k % cols, bits_at(got.data(), k, so), bits_at(want_y.data(), k, so));
  }
  (void)normkit::set_isa(before);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const bool layer = in.ConsumeBool();
  const unsigned policy = in.ConsumeIntegral<std::uint8_t>();
  const unsigned tr = in.ConsumeIntegral<std::uint8_t>(), tw = in.ConsumeIntegral<std::uint8_t>(),
                 to = in.ConsumeIntegral<std::uint8_t>();
  case_ops op{};
  const char* name = nullptr;
  with_policy(policy, [&](auto p) {
    using P = typename decltype(p)::type;
    name = P::name;
    with_storage_type(tr, [&](auto r) {
      with_storage_type(tw, [&](auto w) {
        with_storage_type(to, [&](auto o) {
          op = ops_for<P, typename decltype(r)::type, typename decltype(w)::type,
                       typename decltype(o)::type>();
        });
      });
    });
  });
  run_case(in, layer, name, op);
  return 0;
}
