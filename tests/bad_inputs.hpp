// SPDX-License-Identifier: MIT
// The bad-input catalogue, in one place: every way to get a call's arguments wrong, what is wrong,
// and the status the documented rules give (README, status table; docs/contract.md). Used by
// test_api (each case on every ISA, with "nothing was touched") and by the fuzz harnesses (their
// expected status for any generated call).
//
// Two independent statements of the rules live here, and test_api checks that they agree on
// every case: the catalogue (each case with its status, written by hand) and expected_status (the
// rules as arithmetic on addresses). Neither calls the library's own checks (core/validate.hpp):
// the expectations must not come from the code under test. No gtest: the libFuzzer harnesses
// include this header.
#pragma once

#include <normkit/normkit.hpp>

#include "common.hpp"  // from_bits

#include <cmath>        // std::fabs
#include <cstddef>      // std::size_t, std::ptrdiff_t
#include <cstdint>      // std::uintptr_t, std::uint64_t, PTRDIFF_MAX, SIZE_MAX, UINTPTR_MAX
#include <cstring>      // std::memcmp
#include <functional>   // std::function
#include <limits>       // std::numeric_limits
#include <string>       // std::string
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

namespace normkit_test {
namespace bad_inputs {

using normkit::status;

// The documented order of the checks: the first rule a call breaks gives its status. eps and the
// strides are checked before anything else, also when a size is 0 (then the call is a no-op);
// the buffers after: null, alignment, extent, overlap (README, status table).
inline constexpr status check_order[] = {status::invalid_eps,   status::invalid_stride,
                                         status::null_pointer,  status::misaligned_pointer,
                                         status::size_overflow, status::overlapping_output};

// ---- The rules as arithmetic on addresses.

// One tensor argument: rows x cols elements of `elem` bytes, rows `stride` elements apart.
struct tensor {
  std::uintptr_t address;
  std::size_t rows, cols, stride, elem;
  bool optional;  // may be null: a gain or bias that is not given
};

// A call: its eps and strides (the norms), the tensors it reads (x first) and the one it writes.
struct call {
  bool has_eps_and_strides;
  float eps;
  std::vector<tensor> inputs;
  tensor output;
  bool same_type;  // the output's type is the first input's: y == x can be in place
};

__extension__ typedef unsigned __int128 u128;

struct extent {
  u128 begin, end;  // bytes [begin, end)
  bool ok;          // no more than PTRDIFF_MAX bytes, and not past the top of the address space
};

inline extent extent_of(const tensor& t) {
  const u128 bytes = (static_cast<u128>(t.rows - 1) * t.stride + t.cols) * t.elem;
  const u128 end = static_cast<u128>(t.address) + bytes;
  return {t.address, end, bytes <= static_cast<u128>(PTRDIFF_MAX) && end <= static_cast<u128>(UINTPTR_MAX)};
}

// The status the documented rules give.
inline status expected_status(const call& c) {
  const tensor& x = c.inputs.front();
  const tensor& y = c.output;
  if (c.has_eps_and_strides) {
    // contract: eps finite and >= 0 (-0 compares equal to 0; NaN fails both comparisons).
    if (!(c.eps >= 0.0f && c.eps <= std::numeric_limits<float>::max()))
      return status::invalid_eps;
    if (x.stride < x.cols || y.stride < y.cols)
      return status::invalid_stride;
  }
  if (y.rows == 0 || y.cols == 0)
    return status::ok;
  for (const tensor& t : c.inputs)
    if (t.address == 0 && !t.optional)
      return status::null_pointer;
  if (y.address == 0)
    return status::null_pointer;
  for (const tensor& t : c.inputs)
    if (t.address % t.elem != 0)
      return status::misaligned_pointer;
  if (y.address % y.elem != 0)
    return status::misaligned_pointer;
  for (const tensor& t : c.inputs)
    if (t.address != 0 && !extent_of(t).ok)
      return status::size_overflow;
  const extent ey = extent_of(y);
  if (!ey.ok)
    return status::size_overflow;
  // contract: y == x with the same type and the same stride (or a single row) is in place.
  const bool in_place = c.same_type && y.address == x.address && (y.rows == 1 || y.stride == x.stride);
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].address == 0 || (i == 0 && in_place))
      continue;
    const extent e = extent_of(c.inputs[i]);
    if (e.begin < ey.end && ey.begin < e.end)
      return status::overlapping_output;
  }
  return status::ok;
}

// ---- The catalogue. Tensors are placed at byte offsets in one buffer (so that they can be made to
// overlap, be misaligned or be adjacent); null_offset stands for a null pointer.
constexpr std::ptrdiff_t null_offset = -1;

inline std::uintptr_t address_at(std::uintptr_t base, std::ptrdiff_t off) {
  return off == null_offset ? 0 : base + static_cast<std::uintptr_t>(off);
}

inline std::ptrdiff_t round_up(std::size_t bytes, std::size_t align) {
  return static_cast<std::ptrdiff_t>((bytes + align - 1) / align * align);
}

// A norm call (rms_norm, layer_norm): where x, gamma, beta and y are, the sizes, eps.
struct norm_placement {
  std::ptrdiff_t x = 4096, g = 8192, b = 12288, y = 16384;  // byte offsets, or null_offset
  std::size_t rows = 3, cols = 37, xs = 37, ys = 37;
  float eps = 1e-5f;
};
// The buffer the placements fit in (the largest offset plus the largest tensor).
constexpr std::size_t placement_bytes = 24576;

// The storage types of a norm call: sizes and alignments of In, W and Out.
struct norm_types {
  std::size_t in_size, w_size, out_size, in_align, w_align, out_align;
  bool same_type;  // In == Out
  bool has_beta;   // layer_norm
};

inline call norm_call(const norm_types& t, std::uintptr_t base, const norm_placement& p) {
  call c{true, p.eps, {}, {}, t.same_type};
  c.inputs.push_back({address_at(base, p.x), p.rows, p.cols, p.xs, t.in_size, false});
  c.inputs.push_back({address_at(base, p.g), 1, p.cols, p.cols, t.w_size, true});
  if (t.has_beta)
    c.inputs.push_back({address_at(base, p.b), 1, p.cols, p.cols, t.w_size, true});
  c.output = {address_at(base, p.y), p.rows, p.cols, p.ys, t.out_size, false};
  return c;
}

struct norm_case {
  std::string why;
  std::function<void(norm_placement&)> edit;  // applied to a valid norm_placement{}
  status want;
};

// Every bad (and every tricky but valid) norm call, from the valid placement norm_placement{}.
inline std::vector<norm_case> norm_cases(const norm_types& t) {
  using P = norm_placement&;
  const norm_placement base;
  const auto ix = [](std::size_t bytes) { return static_cast<std::ptrdiff_t>(bytes); };
  const std::size_t xb = ((base.rows - 1) * base.xs + base.cols) * t.in_size;
  const std::size_t yb = ((base.rows - 1) * base.ys + base.cols) * t.out_size;
  const std::size_t gb = base.cols * t.w_size;
  const std::ptrdiff_t a_in = ix(t.in_align), a_w = ix(t.w_align), a_out = ix(t.out_align);
  const status ok = status::ok, null = status::null_pointer, stride = status::invalid_stride,
               bad_eps = status::invalid_eps, overlap = status::overlapping_output,
               overflow = status::size_overflow, misaligned = status::misaligned_pointer;
  std::vector<norm_case> cases = {
      // contract: a null pointer with non-zero sizes (null gamma / beta mean no gain / no bias).
      {"null x", [](P p) { p.x = null_offset; }, null},
      {"null y", [](P p) { p.y = null_offset; }, null},
      {"null gamma", [](P p) { p.g = null_offset; }, ok},
      {"null beta", [](P p) { p.b = null_offset; }, ok},
      // contract: a stride smaller than cols (or negative: a size_t that wraps).
      {"x_stride < cols", [](P p) { p.xs = p.cols - 1; }, stride},
      {"y_stride < cols", [](P p) { p.ys = p.cols - 1; }, stride},
      {"x_stride 0", [](P p) { p.xs = 0; }, stride},
      {"x_stride < cols, one row", [](P p) { p.xs = p.cols - 1, p.rows = 1; }, stride},
      {"y_stride 0", [](P p) { p.ys = 0; }, stride},
      {"x_stride -1 as size_t", [](P p) { p.xs = SIZE_MAX; }, overflow},
      {"y_stride -1 as size_t", [](P p) { p.ys = SIZE_MAX; }, overflow},
      // contract: eps negative / NaN / Inf. Zero (either sign) and the largest finite float are fine.
      {"eps -1e-6", [](P p) { p.eps = -1e-6f; }, bad_eps},
      {"eps -denorm_min", [](P p) { p.eps = -std::numeric_limits<float>::denorm_min(); }, bad_eps},
      {"eps NaN", [](P p) { p.eps = std::numeric_limits<float>::quiet_NaN(); }, bad_eps},
      {"eps -NaN", [](P p) { p.eps = -std::numeric_limits<float>::quiet_NaN(); }, bad_eps},
      {"eps +Inf", [](P p) { p.eps = std::numeric_limits<float>::infinity(); }, bad_eps},
      {"eps -Inf", [](P p) { p.eps = -std::numeric_limits<float>::infinity(); }, bad_eps},
      {"eps -FLT_MAX", [](P p) { p.eps = -std::numeric_limits<float>::max(); }, bad_eps},
      {"eps -NaN with payload", [](P p) { p.eps = from_bits<float>(0xffc00001u); }, bad_eps},
      {"eps signalling NaN", [](P p) { p.eps = from_bits<float>(0x7f800001u); }, bad_eps},
      {"eps 0", [](P p) { p.eps = 0.0f; }, ok},
      {"eps -0", [](P p) { p.eps = -0.0f; }, ok},
      {"eps FLT_MAX", [](P p) { p.eps = std::numeric_limits<float>::max(); }, ok},
      // contract: pointers aligned to their element type; any element offset works.
      {"element offsets, no vector alignment",
       [=](P p) { p.x += a_in, p.y += a_out, p.g += a_w, p.b += 3 * a_w; }, ok},
      // contract: outputs that partially overlap inputs or gains.
      {"y starts inside x", [](P p) { p.y = p.x + 4; }, overlap},
      {"y ends inside x", [=](P p) { p.y = p.x - ix(yb) + 4; }, overlap},
      {"x starts inside y", [](P p) { p.x = p.y + 4; }, overlap},
      {"y right after x", [=](P p) { p.y = p.x + round_up(xb, t.out_align); }, ok},
      {"x right after y", [=](P p) { p.x = p.y + round_up(yb, t.in_align); }, ok},
      {"gamma at y", [](P p) { p.g = p.y; }, overlap},
      {"gamma inside y", [](P p) { p.g = p.y + 4; }, overlap},
      {"y's last element overlaps gamma[0]", [=](P p) { p.y = p.g - ix(yb) + a_out; }, overlap},
      {"gamma right after y", [=](P p) { p.g = p.y + round_up(yb, t.w_align); }, ok},
      {"y right after gamma", [=](P p) { p.y = p.g + round_up(gb, t.out_align); }, ok},
      {"gamma aliasing x (both only read)", [](P p) { p.g = p.x; }, ok},
      // contract: y at x's address with a different element type or stride; the same type and
      // stride is in place.
      {"y == x", [](P p) { p.y = p.x; }, t.same_type ? ok : overlap},
      {"y == x, y_stride > x_stride", [](P p) { p.y = p.x, p.ys = p.cols + 1; }, overlap},
      {"y == x, x_stride > y_stride", [](P p) { p.y = p.x, p.xs = p.cols + 1; }, overlap},
      // contract: y inside x's extent is an overlap even where it only meets the row gaps
      // (conservative: the check compares extents).
      {"y interleaved in x's row gaps",
       [=](P p) { p.xs = p.ys = 2 * p.cols, p.y = p.x + round_up(p.cols * t.in_size, t.out_align); },
       overlap},
      // Size overflow: (rows - 1) * stride + cols does not fit (a wrapped value would look tiny).
      {"(rows-1)*stride wraps to 0",
       [](P p) { p.rows = (std::size_t{1} << 32) + 1, p.xs = p.ys = std::size_t{1} << 32, p.cols = 1; },
       overflow},
      {"(rows-1)*x_stride + cols wraps", [](P p) { p.rows = 2, p.cols = 5, p.xs = SIZE_MAX - 1; }, overflow},
      {"(rows-1)*y_stride + cols wraps", [](P p) { p.rows = 2, p.cols = 5, p.ys = SIZE_MAX - 1; }, overflow},
      {"rows SIZE_MAX", [](P p) { p.rows = SIZE_MAX; }, overflow},
      {"cols * sizeof wraps", [](P p) { p.rows = 1, p.cols = p.xs = p.ys = SIZE_MAX / 2 + 2; }, overflow},
      // contract: the check order (check_order): with two faults, the earlier check's status.
      {"eps NaN, rows 0 (eps is checked also when a size is 0)",
       [](P p) { p.eps = std::numeric_limits<float>::quiet_NaN(), p.rows = 0; }, bad_eps},
      {"eps -1 and x null", [](P p) { p.eps = -1.0f, p.x = null_offset; }, bad_eps},
      {"eps +Inf and x_stride < cols", [](P p) { p.eps = std::numeric_limits<float>::infinity(), p.xs = 1; },
       bad_eps},
      {"x_stride < cols, rows 0", [](P p) { p.xs = p.cols - 1, p.rows = 0; }, stride},
      {"y_stride < cols and y null", [](P p) { p.ys = 0, p.y = null_offset; }, stride},
      {"rows 0 and x, y null", [](P p) { p.rows = 0, p.x = p.y = null_offset; }, ok},
      {"cols 0 and x, y null", [](P p) { p.cols = 0, p.x = p.y = null_offset; }, ok},
      {"y null and x misaligned", [=](P p) { p.y = null_offset, p.x += a_in > 1 ? 1 : 0; }, null},
      {"x misaligned by a byte and y starts inside x", [](P p) { p.x += 1, p.y = p.x + 3; },
       t.in_align > 1 ? misaligned : overlap},
      {"y misaligned and x_stride -1 as size_t", [=](P p) { p.y += a_out > 1 ? 1 : 0, p.xs = SIZE_MAX; },
       t.out_align > 1 ? misaligned : overflow},
      {"x_stride -1 as size_t and y starts inside x", [](P p) { p.xs = SIZE_MAX, p.y = p.x + 4; }, overflow},
  };
  for (std::ptrdiff_t off = 1; off < a_in; ++off)
    cases.push_back({"x misaligned by " + std::to_string(off), [=](P p) { p.x += off; }, misaligned});
  for (std::ptrdiff_t off = 1; off < a_out; ++off)
    cases.push_back({"y misaligned by " + std::to_string(off), [=](P p) { p.y += off; }, misaligned});
  for (std::ptrdiff_t off = 1; off < a_w; ++off)
    cases.push_back({"gamma misaligned by " + std::to_string(off), [=](P p) { p.g += off; }, misaligned});
  if (t.has_beta) {
    for (std::ptrdiff_t off = 1; off < a_w; ++off)
      cases.push_back({"beta misaligned by " + std::to_string(off), [=](P p) { p.b += off; }, misaligned});
    cases.push_back({"beta at y", [](P p) { p.b = p.y; }, overlap});
    cases.push_back({"beta inside y", [](P p) { p.b = p.y + 4; }, overlap});
    cases.push_back({"y's last element overlaps beta[0]", [=](P p) { p.y = p.b - ix(yb) + a_out; }, overlap});
    cases.push_back({"beta right after y", [=](P p) { p.b = p.y + round_up(yb, t.w_align); }, ok});
    cases.push_back({"beta aliasing gamma", [](P p) { p.b = p.g; }, ok});
  }
  return cases;
}

// A convert call: where src and dst are, and n.
struct convert_placement {
  std::ptrdiff_t src = 4096, dst = 8192;  // byte offsets, or null_offset
  std::size_t n = 45;
};

struct convert_types {
  std::size_t src_size, dst_size, src_align, dst_align;
  bool same_type;
};

inline call convert_call(const convert_types& t, std::uintptr_t base, const convert_placement& p) {
  call c{false, 0.0f, {}, {}, t.same_type};
  c.inputs.push_back({address_at(base, p.src), 1, p.n, p.n, t.src_size, false});
  c.output = {address_at(base, p.dst), 1, p.n, p.n, t.dst_size, false};
  return c;
}

struct convert_case {
  std::string why;
  std::function<void(convert_placement&)> edit;  // applied to a valid convert_placement{}
  status want;
};

// Every bad (and every tricky but valid) convert call: the norms' buffer rules on one row of n.
inline std::vector<convert_case> convert_cases(const convert_types& t) {
  using P = convert_placement&;
  const convert_placement base;
  const std::ptrdiff_t sb = static_cast<std::ptrdiff_t>(base.n * t.src_size),
                       db = static_cast<std::ptrdiff_t>(base.n * t.dst_size);
  const std::ptrdiff_t a_src = static_cast<std::ptrdiff_t>(t.src_align),
                       a_dst = static_cast<std::ptrdiff_t>(t.dst_align);
  std::vector<convert_case> cases = {
      {"valid", [](P) {}, status::ok},
      {"null src", [](P p) { p.src = null_offset; }, status::null_pointer},
      {"null dst", [](P p) { p.dst = null_offset; }, status::null_pointer},
      {"n = 0 with nulls", [](P p) { p.src = p.dst = null_offset, p.n = 0; }, status::ok},
      {"n = 0", [](P p) { p.n = 0; }, status::ok},
      {"dst starts inside src", [](P p) { p.dst = p.src + 4; }, status::overlapping_output},
      {"src starts inside dst", [](P p) { p.src = 4096 + 4, p.dst = 4096; }, status::overlapping_output},
      {"dst's last element overlaps src[0]", [=](P p) { p.dst = p.src - db + a_dst; },
       status::overlapping_output},
      {"dst right after src",
       [=](P p) { p.dst = p.src + round_up(static_cast<std::size_t>(sb), t.dst_align); }, status::ok},
      {"src right after dst",
       [=](P p) { p.dst = 4096, p.src = 4096 + round_up(static_cast<std::size_t>(db), t.src_align); },
       status::ok},
      {"dst == src (in place only for equal types)", [](P p) { p.dst = p.src; },
       t.same_type ? status::ok : status::overlapping_output},
      {"n * sizeof wraps", [](P p) { p.n = SIZE_MAX / 2 + 2; }, status::size_overflow},
      // contract: the check order: null before alignment before extent before overlap.
      {"null src and dst misaligned", [](P p) { p.src = null_offset, p.dst += 1; }, status::null_pointer},
      {"src misaligned by a byte and n * sizeof wraps", [](P p) { p.src += 1, p.n = SIZE_MAX / 2 + 2; },
       t.src_align > 1 ? status::misaligned_pointer : status::size_overflow},
      {"n * sizeof wraps and dst == src", [](P p) { p.dst = p.src, p.n = SIZE_MAX / 2 + 2; },
       status::size_overflow},
  };
  for (std::ptrdiff_t off = 1; off < a_src; ++off)
    cases.push_back(
        {"src misaligned by " + std::to_string(off), [=](P p) { p.src += off; }, status::misaligned_pointer});
  for (std::ptrdiff_t off = 1; off < a_dst; ++off)
    cases.push_back(
        {"dst misaligned by " + std::to_string(off), [=](P p) { p.dst += off; }, status::misaligned_pointer});
  return cases;
}

// ---- The quantized norms (normkit/quant.hpp): a norm call whose output is 8-bit values (or Q8_0
// blocks) plus, by mode, the row scales (dynamic, required) or amax (static, optional). Checks in
// this order: eps, the strides (q_stride counts blocks for Q8_0), the scale (static: finite and
// > 0; dynamic: scale_ub not NaN or Inf), the block size (Q8_0: cols % 32 == 0), then the
// buffers as for the norms -- with every output checked against every input and the others, and
// no in-place form.
enum class quant_format { static_scale, dynamic_row, q8_0 };

struct quant_placement {
  quant_format format = quant_format::static_scale;
  std::ptrdiff_t x = 4096, g = 8192, b = 12288, q = 16384, scales = 20480, amax = 20736;  // or null_offset
  std::size_t rows = 3, cols = 64, xs = 64, qs = 64;  // qs: elements, or blocks for Q8_0
  float eps = 1e-5f, scale = 0.5f;                    // scale: static scale, or scale_ub
};

struct quant_types {
  std::size_t in_size, w_size, in_align, w_align;  // x; gamma and beta
  std::size_t out_size, out_align;                 // one quantized element, or one block (Q8_0)
  bool has_beta;
};

// The status the documented rules give, from addresses and sizes only.
inline status expected_quant_status(const quant_types& t, std::uintptr_t base, const quant_placement& p) {
  if (!(p.eps >= 0.0f && p.eps <= std::numeric_limits<float>::max()))
    return status::invalid_eps;
  const bool blocks = p.format == quant_format::q8_0;
  const std::size_t out_cols = blocks ? p.cols / 32 : p.cols;
  if (p.xs < p.cols || p.qs < out_cols)
    return status::invalid_stride;
  if (p.format == quant_format::static_scale &&
      !(p.scale > 0.0f && p.scale <= std::numeric_limits<float>::max()))
    return status::invalid_scale;
  if (p.format == quant_format::dynamic_row && !(std::fabs(p.scale) <= std::numeric_limits<float>::max()))
    return status::invalid_scale;
  if (blocks && p.cols % 32 != 0)
    return status::invalid_block;
  if (p.rows == 0 || p.cols == 0)
    return status::ok;
  std::vector<tensor> in = {{address_at(base, p.x), p.rows, p.cols, p.xs, t.in_size, false},
                            {address_at(base, p.g), 1, p.cols, p.cols, t.w_size, true}};
  if (t.has_beta)
    in.push_back({address_at(base, p.b), 1, p.cols, p.cols, t.w_size, true});
  std::vector<tensor> out = {{address_at(base, p.q), p.rows, out_cols, p.qs, t.out_size, false}};
  if (p.format == quant_format::dynamic_row)
    out.push_back({address_at(base, p.scales), p.rows, 1, 1, sizeof(float), false});
  if (p.format == quant_format::static_scale)
    out.push_back({address_at(base, p.amax), 1, 1, 1, sizeof(float), true});
  const std::size_t aligns[] = {t.in_align, t.w_align, t.w_align};
  for (const std::vector<tensor>* v : {&in, &out})
    for (const tensor& e : *v)
      if (e.address == 0 && !e.optional)
        return status::null_pointer;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i].address % aligns[i] != 0)
      return status::misaligned_pointer;
  for (std::size_t k = 0; k < out.size(); ++k)
    if (out[k].address % (k == 0 ? t.out_align : alignof(float)) != 0)
      return status::misaligned_pointer;
  for (const std::vector<tensor>* v : {&in, &out})
    for (const tensor& e : *v)
      if (e.address != 0 && !extent_of(e).ok)
        return status::size_overflow;
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (out[k].address == 0)
      continue;
    const extent eo = extent_of(out[k]);
    for (const std::vector<tensor>* v : {&in, &out})
      for (std::size_t i = 0; i < v->size(); ++i) {
        const tensor& e = (*v)[i];
        if (e.address == 0 || (v == &out && i == k))
          continue;
        const extent ee = extent_of(e);
        if (ee.begin < eo.end && eo.begin < ee.end)
          return status::overlapping_output;
      }
  }
  return status::ok;
}

struct quant_case {
  std::string why;
  std::function<void(quant_placement&)> edit;  // applied to quant_placement{} of the format
  status want;
};

// Every bad (and every tricky but valid) quantized-norm call of one format.
inline std::vector<quant_case> quant_cases(const quant_types& t, quant_format f) {
  using P = quant_placement&;
  const bool stat = f == quant_format::static_scale, dyn = f == quant_format::dynamic_row,
             blocks = f == quant_format::q8_0;
  const status ok = status::ok, null = status::null_pointer, stride = status::invalid_stride,
               scale = status::invalid_scale, block = status::invalid_block, eps = status::invalid_eps,
               overlap = status::overlapping_output, misaligned = status::misaligned_pointer,
               overflow = status::size_overflow;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::ptrdiff_t qb = static_cast<std::ptrdiff_t>(3 * (blocks ? 2 : 64) * t.out_size);
  std::vector<quant_case> cases = {
      {"valid", [](P) {}, ok},
      {"null x", [](P p) { p.x = null_offset; }, null},
      {"null q", [](P p) { p.q = null_offset; }, null},
      {"null gamma and beta", [](P p) { p.g = p.b = null_offset; }, ok},
      {"null row_scales", [](P p) { p.scales = null_offset; }, dyn ? null : ok},
      {"null amax", [](P p) { p.amax = null_offset; }, ok},
      {"x_stride < cols", [](P p) { p.xs = p.cols - 1; }, stride},
      {"q_stride < cols", [=](P p) { p.qs = blocks ? 1 : p.cols - 1; }, stride},
      {"eps NaN", [=](P p) { p.eps = nan; }, eps},
      // contract: the scale -- static: finite and > 0; dynamic: scale_ub <= 0 is "no cap".
      {"scale 0", [](P p) { p.scale = 0.0f; }, stat ? scale : ok},
      {"scale -0", [](P p) { p.scale = -0.0f; }, stat ? scale : ok},
      {"scale -1", [](P p) { p.scale = -1.0f; }, stat ? scale : ok},
      {"scale NaN", [=](P p) { p.scale = nan; }, blocks ? ok : scale},
      {"scale -NaN", [=](P p) { p.scale = -nan; }, blocks ? ok : scale},
      {"scale +Inf", [=](P p) { p.scale = inf; }, blocks ? ok : scale},
      {"scale -Inf", [=](P p) { p.scale = -inf; }, blocks ? ok : scale},
      {"scale denorm_min", [](P p) { p.scale = std::numeric_limits<float>::denorm_min(); }, ok},
      {"scale FLT_MAX", [](P p) { p.scale = std::numeric_limits<float>::max(); }, ok},
      // contract: Q8_0 rows are whole blocks.
      {"cols 48", [=](P p) { p.cols = p.xs = 48, p.qs = blocks ? 1 : 48; }, blocks ? block : ok},
      {"cols 0 and q null", [](P p) { p.cols = 0, p.q = null_offset; }, ok},
      {"rows 0, amax and row_scales null", [](P p) { p.rows = 0, p.amax = p.scales = null_offset; }, ok},
      // contract: the check order.
      {"eps NaN and scale NaN", [=](P p) { p.eps = nan, p.scale = nan; }, eps},
      {"x_stride < cols and scale NaN", [=](P p) { p.xs = 1, p.scale = nan; }, stride},
      {"scale NaN and q null", [=](P p) { p.scale = nan, p.q = null_offset; }, blocks ? null : scale},
      {"cols 48 and q null", [=](P p) { p.cols = p.xs = 48, p.qs = blocks ? 2 : 48, p.q = null_offset; },
       blocks ? block : null},
      // contract: alignment of every output.
      {"row_scales misaligned by 2", [](P p) { p.scales += 2; }, dyn ? misaligned : ok},
      {"amax misaligned by 1", [](P p) { p.amax += 1; }, stat ? misaligned : ok},
      {"q misaligned by 1", [](P p) { p.q += 1; }, blocks ? misaligned : ok},
      {"x misaligned by 1", [](P p) { p.x += 1; }, misaligned},
      // contract: no output overlaps an input or another output (no in-place form).
      {"q == x", [](P p) { p.q = p.x; }, overlap},
      {"q starts inside x", [](P p) { p.q = p.x + 6; }, overlap},
      {"q right after x", [=](P p) { p.q = p.x + static_cast<std::ptrdiff_t>(3 * 64 * t.in_size); }, ok},
      {"gamma inside q", [](P p) { p.g = p.q + 2; }, overlap},
      {"row_scales inside q", [](P p) { p.scales = p.q + 4; }, dyn ? overlap : ok},
      {"row_scales right after q", [=](P p) { p.scales = p.q + qb + 4 - qb % 4; }, ok},
      {"row_scales inside x", [](P p) { p.scales = p.x + 8; }, dyn ? overlap : ok},
      {"amax inside x", [](P p) { p.amax = p.x + 8; }, stat ? overlap : ok},
      {"amax inside q", [](P p) { p.amax = p.q + 8; }, stat ? overlap : ok},
      {"amax == row_scales", [](P p) { p.amax = p.scales; }, ok},  // one of them is unused
      {"rows SIZE_MAX", [](P p) { p.rows = SIZE_MAX; }, overflow},
  };
  return cases;
}

// ---- Running a case: the buffer the placements point into, and the public calls.

// Filled with 16-bit words 0x3cNN, NN varying: finite, non-constant values of every type (bf16
// ~0.01, fp16 ~1.1, float ~0.01), so a call that should not have run writes something else (a
// constant row would not do: LayerNorm would write beta's own bytes back). "Touches nothing"
// means the whole arena is byte-identical after the call.
class arena {
 public:
  arena() : store_(placement_bytes / 8) {
    for (std::size_t k = 0; k < store_.size(); ++k) {
      std::uint64_t w = 0;
      for (std::uint64_t h = 0; h < 4; ++h)
        w |= (0x3c00u | ((4 * k + h) * 37u % 251u)) << (16 * h);
      store_[k] = w;
    }
  }
  unsigned char* base() { return reinterpret_cast<unsigned char*>(store_.data()); }
  std::uintptr_t address() { return reinterpret_cast<std::uintptr_t>(base()); }
  template <class T>
  T* at(std::ptrdiff_t off) {
    return off == null_offset ? nullptr : reinterpret_cast<T*>(base() + off);
  }
  std::vector<std::uint64_t> snapshot() const { return store_; }
  bool same_as(const std::vector<std::uint64_t>& s) const {
    return std::memcmp(s.data(), store_.data(), store_.size() * sizeof(std::uint64_t)) == 0;
  }

 private:
  std::vector<std::uint64_t> store_;
};

template <class In, class W, class Out>
norm_types norm_types_of(bool layer) {
  return {
      sizeof(In), sizeof(W), sizeof(Out), alignof(In), alignof(W), alignof(Out), std::is_same<In, Out>::value,
      layer};
}

template <class Src, class Dst>
convert_types convert_types_of() {
  return {sizeof(Src), sizeof(Dst), alignof(Src), alignof(Dst), std::is_same<Src, Dst>::value};
}

// rms_norm<Policy> (layer == false) or layer_norm<Policy> on the placement, strided overloads.
template <class Policy, class In, class W, class Out>
status run_norm(bool layer, arena& a, const norm_placement& p) {
  const In* x = a.at<const In>(p.x);
  const W* g = a.at<const W>(p.g);
  Out* y = a.at<Out>(p.y);
  return layer ? normkit::layer_norm<Policy>(x, g, a.at<const W>(p.b), y, p.rows, p.cols, p.eps, p.xs, p.ys)
               : normkit::rms_norm<Policy>(x, g, y, p.rows, p.cols, p.eps, p.xs, p.ys);
}

template <class Src, class Dst>
status run_convert(arena& a, const convert_placement& p) {
  return normkit::convert(a.at<const Src>(p.src), a.at<Dst>(p.dst), p.n);
}

template <class In, class W, class Q>
quant_types quant_types_of(bool layer, quant_format f) {
  const bool blocks = f == quant_format::q8_0;
  return {sizeof(In),
          sizeof(W),
          alignof(In),
          alignof(W),
          blocks ? sizeof(normkit::block_q8_0) : sizeof(Q),
          blocks ? alignof(normkit::block_q8_0) : alignof(Q),
          layer};
}

// The quantized norm of the placement's format (rms_norm_* or layer_norm_*), strided overloads.
template <class Policy, class In, class W, class Q>
status run_quant(bool layer, arena& a, const quant_placement& p) {
  const In* x = a.at<const In>(p.x);
  const W* g = a.at<const W>(p.g);
  const W* b = a.at<const W>(p.b);
  float* s = a.at<float>(p.scales);
  float* m = a.at<float>(p.amax);
  switch (p.format) {
    case quant_format::static_scale:
      return layer ? normkit::layer_norm_quant<Policy>(x, g, b, a.at<Q>(p.q), p.rows, p.cols, p.eps, p.scale,
                                                       m, p.xs, p.qs)
                   : normkit::rms_norm_quant<Policy>(x, g, a.at<Q>(p.q), p.rows, p.cols, p.eps, p.scale, m,
                                                     p.xs, p.qs);
    case quant_format::dynamic_row:
      return layer ? normkit::layer_norm_dynamic_quant<Policy>(x, g, b, a.at<Q>(p.q), s, p.rows, p.cols,
                                                               p.eps, p.scale, p.xs, p.qs)
                   : normkit::rms_norm_dynamic_quant<Policy>(x, g, a.at<Q>(p.q), s, p.rows, p.cols, p.eps,
                                                             p.scale, p.xs, p.qs);
    case quant_format::q8_0:
      break;
  }
  auto* y = a.at<normkit::block_q8_0>(p.q);
  return layer ? normkit::layer_norm_q8_0<Policy>(x, g, b, y, p.rows, p.cols, p.eps, p.xs, p.qs)
               : normkit::rms_norm_q8_0<Policy>(x, g, y, p.rows, p.cols, p.eps, p.xs, p.qs);
}

}  // namespace bad_inputs
}  // namespace normkit_test
