// SPDX-License-Identifier: MIT
// Differential fuzzing of the forward ops (rms_norm, layer_norm) through the public API.
//
// One input picks: op, In/W/Out storage types, policy, rows 0-8, cols 0-4096 (biased to vector
// widths +-1), extra row strides, placement (tensor ends at a guard page, or starts right after
// one at an element offset), eps from a table (valid and invalid), gamma/beta present or null,
// in-place, values (raw bits or a row class plus specials), and one malformation (null pointer,
// short stride, partial overlap, misaligned pointer, size overflow, address wrap) or none.
// Invariants (any violation aborts):
//   - the status is the one the documented rules give (expected_status below);
//   - a rejected call changes no byte of any tensor's mapping;
//   - an accepted call writes exactly the rows: every other byte keeps its canary, inputs stay
//     unchanged, and no byte outside the rows is read (guard pages; ASan-poisoned gaps);
//   - every available ISA path gives the bits of normkit::reference; in place gives the bits
//     of out of place.
#include <normkit/normkit.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uintptr_t, PTRDIFF_MAX, SIZE_MAX
#include <cstdio>       // std::fprintf
#include <cstring>      // std::memcmp
#include <iterator>     // std::size
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

#include "../bad_inputs.hpp"
#include "guarded.hpp"
#include "values.hpp"

// Every op of the library's op list (include/normkit/ops/list.hpp) has a fuzz harness: rms_norm
// and layer_norm here, convert in fuzz_convert.cpp, residual_add (with the fused ops it starts)
// in fuzz_add_norm.cpp, the backward ops and the statistics op of the forward variants in
// fuzz_backward.cpp, the statically quantized norms' kernel op in fuzz_quant.cpp (the static calls
// of rms_norm_quant / layer_norm_quant and their fused add forms run it). An op added to the list fails this
// build until a harness covers it and it is named here.
namespace fuzz_coverage {
namespace nd = normkit::detail;
// quantize has no libFuzzer harness yet: it is named separately so that the gap stays visible
// (test_quant.cpp covers it on crafted and random bit patterns per ISA).
template <class Op>
constexpr bool not_fuzzed_yet = std::is_same<Op, nd::quantize_op>::value;
template <class Op>
constexpr bool fuzzed =
    std::is_same<Op, nd::rms_norm_op>::value || std::is_same<Op, nd::layer_norm_op>::value ||
    std::is_same<Op, nd::convert_op>::value || std::is_same<Op, nd::residual_add_op>::value ||
    std::is_same<Op, nd::norm_stats_op>::value || std::is_same<Op, nd::rms_norm_backward_op>::value ||
    std::is_same<Op, nd::layer_norm_backward_op>::value ||
    std::is_same<Op, nd::rms_norm_static_quant_op>::value ||
    std::is_same<Op, nd::layer_norm_static_quant_op>::value || not_fuzzed_yet<Op>;
template <class... Ops>
constexpr bool all_fuzzed(nd::type_list<Ops...>) {
  return (fuzzed<Ops> && ...);
}
static_assert(all_fuzzed(nd::ops{}), "an op of ops/list.hpp has no fuzz harness in tests/fuzz");
}  // namespace fuzz_coverage

namespace {

using namespace normkit_fuzz;
using normkit::isa;
using normkit::status;

// eps: valid (0, -0, tiny, ordinary, huge) and invalid (negative, NaN, Inf) values.
constexpr std::uint32_t eps_patterns[] = {
    0x358637bdu,  // 1e-6
    0x3727c5acu,  // 1e-5
    0x00000000u,  // 0: allowed
    0x80000000u,  // -0: compares equal to 0, allowed
    0x00000001u,  // smallest subnormal
    0x00800000u,  // FLT_MIN
    0x3f800000u,  // 1
    0x7f7fffffu,  // FLT_MAX
    0xb58637bdu,  // -1e-6: invalid
    0x80000001u,  // -smallest subnormal: invalid
    0x7fc00000u,  // NaN: invalid
    0xffc00000u,  // -NaN: invalid
    0x7f800000u,  // +Inf: invalid
    0xff800000u,  // -Inf: invalid
};

// The policies: every knob value appears (once/twice, input/gain intermediate, plain/+1 gain,
// multiply/divide).
using all_knobs = normkit::policy<normkit::rounding::twice, normkit::gain_mode::plus_one,
                                  normkit::normalize::divide, normkit::mid_type::gain>;
template <class F>
void with_policy(unsigned p, F&& f) {
  switch (p % 6) {
    case 0:
      return f(tag<normkit::pytorch>{});
    case 1:
      return f(tag<normkit::llama>{});
    case 2:
      return f(tag<normkit::gemma>{});
    case 3:
      return f(tag<normkit::gemma3n>{});
    case 4:
      return f(tag<normkit::t5>{});
    default:
      return f(tag<all_knobs>{});
  }
}

enum class malform : unsigned {
  none,
  null_x,
  null_y,
  short_x_stride,
  short_y_stride,
  y_overlaps_x,      // y starts inside x's extent (not exactly in place)
  y_overlaps_gamma,  // y starts inside gamma
  y_overlaps_beta,   // y starts inside beta
  y_at_x_mismatch,   // y == x with another stride
  misaligned,        // a pointer one byte off its element alignment
  size_overflow,     // rows/stride/cols whose extent exceeds PTRDIFF_MAX
  address_wrap,      // a pointer whose extent wraps past the top of the address space
  count
};

// A call's arguments as raw addresses and sizes.
struct call_args {
  std::uintptr_t x, gamma, beta, y;
  std::size_t rows, cols, x_stride, y_stride;
  float eps;
};

// The documented rules (README status table), written out independently of core/validate.hpp
// in the bad-input catalogue (tests/bad_inputs.hpp): what the call must return.
status expected_status(const call_args& a, bool layer, std::size_t in_size, std::size_t w_size,
                       std::size_t out_size, bool same_type) {
  namespace bad = normkit_test::bad_inputs;
  bad::call c{true, a.eps, {}, {}, same_type};
  c.inputs.push_back({a.x, a.rows, a.cols, a.x_stride, in_size, false});
  c.inputs.push_back({a.gamma, 1, a.cols, a.cols, w_size, true});
  if (layer)
    c.inputs.push_back({a.beta, 1, a.cols, a.cols, w_size, true});
  c.output = {a.y, a.rows, a.cols, a.y_stride, out_size, false};
  return bad::expected_status(c);
}

// What run_case needs from one (Policy, In, W, Out): sizes, names, and type-erased calls, so
// the checking code below exists once (the harness compiles in a fraction of the time).
struct case_ops {
  std::size_t si, sw, so;
  bool same_type;
  const char *in_name, *w_name, *out_name;
  status (*api)(bool layer, const call_args& a, bool contiguous_overload);
  status (*ref)(bool layer, const void* x, const void* g, const void* b, void* y, std::size_t rows,
                std::size_t cols, float eps);
  fill_fn fill_in, fill_w;
  std::uint32_t out_fill;  // a storage pattern of Out that no kernel output is likely to equal
};

template <class Policy, class In, class W, class Out>
status call_api(bool layer, const call_args& a, bool contiguous_overload) {
  const In* x = reinterpret_cast<const In*>(a.x);
  const W* g = reinterpret_cast<const W*>(a.gamma);
  const W* b = reinterpret_cast<const W*>(a.beta);
  Out* y = reinterpret_cast<Out*>(a.y);
  if (contiguous_overload && a.x_stride == a.cols && a.y_stride == a.cols)
    return layer ? normkit::layer_norm<Policy>(x, g, b, y, a.rows, a.cols, a.eps)
                 : normkit::rms_norm<Policy>(x, g, y, a.rows, a.cols, a.eps);
  return layer ? normkit::layer_norm<Policy>(x, g, b, y, a.rows, a.cols, a.eps, a.x_stride, a.y_stride)
               : normkit::rms_norm<Policy>(x, g, y, a.rows, a.cols, a.eps, a.x_stride, a.y_stride);
}

template <class Policy, class In, class W, class Out>
status call_ref(bool layer, const void* x, const void* g, const void* b, void* y, std::size_t rows,
                std::size_t cols, float eps) {
  const In* xp = static_cast<const In*>(x);
  const W* gp = static_cast<const W*>(g);
  Out* yp = static_cast<Out*>(y);
  return layer ? normkit::reference::layer_norm<Policy>(xp, gp, static_cast<const W*>(b), yp, rows, cols, eps)
               : normkit::reference::rms_norm<Policy>(xp, gp, yp, rows, cols, eps);
}

template <class Policy, class In, class W, class Out>
case_ops ops_for() {
  return {sizeof(In),
          sizeof(W),
          sizeof(Out),
          std::is_same<In, Out>::value,
          type_name<In>(),
          type_name<W>(),
          type_name<Out>(),
          &call_api<Policy, In, W, Out>,
          &call_ref<Policy, In, W, Out>,
          &fill_erased<In>,
          &fill_erased<W>,
          std::uint32_t{normkit_test::bits_type<Out>(0x5a5a5a5au)}};
}

void run_case(FuzzedDataProvider& in, bool layer, const case_ops& op) {
  const std::size_t si = op.si, sw = op.sw, so = op.so;
  const bool same_type = op.same_type;

  // ---- Shape and placement.
  const std::size_t rows = in.ConsumeIntegralInRange<std::size_t>(0, 8);
  const std::size_t cols = pick_cols(in);
  const bool gap_x = in.ConsumeBool(), gap_y = in.ConsumeBool();
  std::size_t x_stride = cols + (gap_x ? in.ConsumeIntegralInRange<std::size_t>(1, 70) : 0);
  std::size_t y_stride = cols + (gap_y ? in.ConsumeIntegralInRange<std::size_t>(1, 70) : 0);
  const bool anchor_end = in.ConsumeIntegralInRange<int>(0, 3) != 0;  // mostly: end at the guard
  const std::size_t lead_x = in.ConsumeIntegralInRange<std::size_t>(0, 15) * si;
  const std::size_t lead_y = in.ConsumeIntegralInRange<std::size_t>(0, 15) * so;
  const std::size_t lead_g = in.ConsumeIntegralInRange<std::size_t>(0, 15) * sw;
  const float eps = f32(eps_patterns[in.ConsumeIntegralInRange<std::size_t>(0, std::size(eps_patterns) - 1)]);
  const bool has_gamma = in.ConsumeIntegralInRange<int>(0, 7) != 0;
  const bool has_beta = layer && in.ConsumeIntegralInRange<int>(0, 7) != 0;
  const bool in_place = same_type && in.ConsumeIntegralInRange<int>(0, 3) == 0;
  const bool contiguous_overload = in.ConsumeBool();
  const unsigned m = in.ConsumeIntegralInRange<unsigned>(0, 2 * static_cast<unsigned>(malform::count));
  const malform mode = m < static_cast<unsigned>(malform::count) ? static_cast<malform>(m) : malform::none;
  const std::uint64_t seed = in.ConsumeIntegral<std::uint64_t>();
  if (in_place)
    y_stride = x_stride;

  // ---- Values (contiguous rows x cols; the reference reads these, never the guarded layout).
  prng g(seed);
  std::vector<std::uint8_t> xv(rows * cols * si), gv(cols * sw), bv(cols * sw);
  op.fill_in(xv.data(), rows * cols, in.ConsumeIntegralInRange<unsigned>(0, 6), g, in);
  op.fill_w(gv.data(), cols, in.ConsumeBool() ? 1u : 0u, g, in);  // ordinary or raw
  op.fill_w(bv.data(), cols, in.ConsumeBool() ? 1u : 0u, g, in);

  tensor tx(rows, cols, x_stride, si, anchor_end, lead_x);
  tensor ty(rows, cols, y_stride, so, anchor_end, lead_y);
  tensor tg(has_gamma ? 1 : 0, cols, cols, sw, anchor_end, lead_g);
  tensor tb(has_beta ? 1 : 0, cols, cols, sw, !anchor_end, lead_g);
  if (has_gamma)
    tg.set_rows(gv.data());
  if (has_beta)
    tb.set_rows(bv.data());

  call_args a{
      reinterpret_cast<std::uintptr_t>(tx.data()),
      has_gamma ? reinterpret_cast<std::uintptr_t>(tg.data()) : 0,
      has_beta ? reinterpret_cast<std::uintptr_t>(tb.data()) : 0,
      in_place ? reinterpret_cast<std::uintptr_t>(tx.data()) : reinterpret_cast<std::uintptr_t>(ty.data()),
      rows,
      cols,
      x_stride,
      y_stride,
      eps};

  // ---- One malformation (each must be rejected, or be harmless, per expected_status).
  const std::size_t pick = in.ConsumeIntegral<std::size_t>();
  auto inside = [&](const tensor& t,
                    std::size_t bytes) {  // an Out-aligned address in [data - so, data + bytes)
    const std::uintptr_t p = reinterpret_cast<std::uintptr_t>(t.data()) + (bytes ? pick % bytes : 0);
    return p / so * so;
  };
  switch (mode) {
    case malform::none:
      break;
    case malform::null_x:
      a.x = 0;
      break;
    case malform::null_y:
      a.y = 0;
      break;
    case malform::short_x_stride:
      a.x_stride = cols ? pick % cols : 0;
      break;
    case malform::short_y_stride:
      a.y_stride = cols ? pick % cols : 0;
      break;
    case malform::y_overlaps_x:
      a.y = inside(tx, extent_bytes(rows, cols, x_stride, si));
      break;
    case malform::y_overlaps_gamma:
      if (has_gamma)
        a.y = inside(tg, cols * sw);
      break;
    case malform::y_overlaps_beta:
      if (has_beta)
        a.y = inside(tb, cols * sw);
      break;
    case malform::y_at_x_mismatch:
      a.y = a.x;
      a.y_stride = a.x_stride + 1 + pick % 3;
      break;
    case malform::misaligned: {
      std::uintptr_t* targets[] = {&a.x, &a.y, &a.gamma, &a.beta};
      std::uintptr_t& t = *targets[pick % 4];
      if (t)
        t += 1;
      break;
    }
    case malform::size_overflow:
      switch (pick % 4) {
        case 0:
          a.x_stride = static_cast<std::size_t>(PTRDIFF_MAX) / si + 1 + pick % 7,
          a.rows = rows < 2 ? 2 : rows;
          break;
        case 1:
          a.y_stride = static_cast<std::size_t>(PTRDIFF_MAX) / so + 1 + pick % 7,
          a.rows = rows < 2 ? 2 : rows;
          break;
        case 2:
          a.rows = SIZE_MAX - pick % 5;
          break;
        default:
          a.cols = a.x_stride = a.y_stride = SIZE_MAX / 2 + pick % 9;
          break;
      }
      break;
    case malform::address_wrap: {
      // A start address whose extent reaches or passes 2^64: top >= 2^64 - bytes, aligned.
      const bool on_x = pick & 1;
      const std::size_t elem = on_x ? si : so;
      const std::size_t bytes = extent_bytes(rows, cols, on_x ? x_stride : y_stride, elem);
      const std::uintptr_t top =
          bytes ? (std::uintptr_t{0} - bytes + (pick >> 1) % bytes) / elem * elem : UINTPTR_MAX / elem * elem;
      (on_x ? a.x : a.y) = top;
      break;
    }
    case malform::count:
      break;
  }
  const status want = expected_status(a, layer, si, sw, so, same_type);
  // Which tensor an accepted call writes: y, or x when exactly in place. Anything else would be
  // a harness bug (the malformations above always overlap or break a rule).
  const bool writes_x = same_type && a.x == reinterpret_cast<std::uintptr_t>(tx.data()) && a.y == a.x;
  if (want == status::ok && a.rows > 0 && a.cols > 0)
    FUZZ_CHECK(writes_x || a.y == reinterpret_cast<std::uintptr_t>(ty.data()),
               "harness: accepted call with a foreign y");
  const char* op_name = layer ? "layer_norm" : "rms_norm";
  if (verbose())
    std::fprintf(stderr,
                 "%s<%s,%s,%s> rows=%zu cols=%zu strides=%zu,%zu eps=0x%08x gamma=%d beta=%d in_place=%d "
                 "mode=%u -> %s\n",
                 op_name, op.in_name, op.w_name, op.out_name, a.rows, a.cols, a.x_stride, a.y_stride,
                 bits(eps), has_gamma, has_beta, writes_x, static_cast<unsigned>(mode),
                 normkit::to_string(want));

  // ---- The reference bits, from the contiguous copies.
  std::vector<std::uint8_t> want_y(rows * cols * so);
  if (want == status::ok && rows > 0 && cols > 0) {
    const status r = op.ref(layer, xv.data(), has_gamma ? gv.data() : nullptr, has_beta ? bv.data() : nullptr,
                            want_y.data(), rows, cols, eps);
    FUZZ_CHECK(r == status::ok, "reference rejected a valid call: %s", normkit::to_string(r));
  }

  // ---- Every available ISA: same status, same bits, nothing outside the rows touched.
  std::vector<std::uint8_t> y_fill(rows * cols * so), got(rows * cols * so);
  for (std::size_t k = 0; k < rows * cols; ++k)
    std::memcpy(&y_fill[k * so], &op.out_fill, so);
  const isa before = normkit::active_isa();
  for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::neon}) {
    if (!normkit::isa_available(i))
      continue;
    const status selected = normkit::set_isa(i);
    if (selected == status::isa_above_ceiling)  // NORMKIT_ISA caps this process below i
      continue;
    FUZZ_CHECK(selected == status::ok, "set_isa(%s)", normkit::to_string(i));
    tx.set_rows(xv.data());
    ty.set_rows(y_fill.data());
    const auto sx = tx.snapshot(), sy = ty.snapshot(), sg = tg.snapshot(), sb = tb.snapshot();
    tx.arm(), ty.arm(), tg.arm(), tb.arm();
    const status s = op.api(layer, a, contiguous_overload);
    tx.disarm(), ty.disarm(), tg.disarm(), tb.disarm();
    const char* isa_name = normkit::to_string(i);
    FUZZ_CHECK(s == want,
               "%s %s<%s,%s,%s> rows=%zu cols=%zu strides=%zu,%zu eps=0x%08x mode=%u: status %s, want %s",
               isa_name, op_name, op.in_name, op.w_name, op.out_name, a.rows, a.cols, a.x_stride, a.y_stride,
               bits(eps), static_cast<unsigned>(mode), normkit::to_string(s), normkit::to_string(want));
    FUZZ_CHECK(tg.same_as(sg) && tb.same_as(sb), "%s: gamma or beta changed", isa_name);
    if (s != status::ok || a.rows == 0 || a.cols == 0) {
      FUZZ_CHECK(tx.same_as(sx) && ty.same_as(sy), "%s: a rejected or empty call wrote memory", isa_name);
      continue;
    }
    const tensor& out = writes_x ? tx : ty;
    FUZZ_CHECK(writes_x || tx.same_as(sx), "%s: x changed by an out-of-place call", isa_name);
    const long bad = out.outside_rows_changed();
    FUZZ_CHECK(bad < 0, "%s: byte %ld of the output span, outside the rows, was written", isa_name, bad);
    out.get_rows(got.data());
    for (std::size_t k = 0; k < rows * cols; ++k)
      FUZZ_CHECK(bits_at(got.data(), k, so) == bits_at(want_y.data(), k, so),
                 "%s %s<%s,%s,%s> %s rows=%zu cols=%zu strides=%zu,%zu eps=0x%08x: row %zu col %zu: 0x%08x, "
                 "reference 0x%08x (x = 0x%08x)",
                 isa_name, op_name, op.in_name, op.w_name, op.out_name,
                 writes_x ? "in place" : "out of place", rows, cols, a.x_stride, a.y_stride, bits(eps),
                 k / cols, k % cols, bits_at(got.data(), k, so), bits_at(want_y.data(), k, so),
                 bits_at(xv.data(), k, si));
  }
  (void)normkit::set_isa(before);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const bool layer = in.ConsumeBool();
  const unsigned policy = in.ConsumeIntegral<std::uint8_t>();
  const unsigned ti = in.ConsumeIntegral<std::uint8_t>(), tw = in.ConsumeIntegral<std::uint8_t>(),
                 to = in.ConsumeIntegral<std::uint8_t>();
  case_ops op{};
  with_policy(policy, [&](auto p) {
    with_storage_type(ti, [&](auto i) {
      with_storage_type(tw, [&](auto w) {
        with_storage_type(to, [&](auto o) {
          op = ops_for<typename decltype(p)::type, typename decltype(i)::type, typename decltype(w)::type,
                       typename decltype(o)::type>();
        });
      });
    });
  });
  run_case(in, layer, op);
  return 0;
}
