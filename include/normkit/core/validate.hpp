// SPDX-License-Identifier: MIT
// normkit: the argument checks every op is built from. Nothing on a bad argument is undefined:
// each case returns its own status (core/status.hpp) before any memory is touched. An op's
// validate (ops/<op>.hpp) checks its scalars first (eps, strides), then its buffers with
// check_operands, which always tests in this order: null pointers, misalignment, extents that
// overflow the address space, overlaps.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uintptr_t, std::uint32_t, PTRDIFF_MAX
#include <type_traits>  // std::remove_const_t

#include "abi.hpp"
#include "status.hpp"
#include "storage.hpp"  // detail::float_bits

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
// Per-configuration internals (ABI-tagged by the inline namespace, see core/abi.hpp).
namespace impl {
using namespace ::normkit::detail;

// One identity per element type, so that "the same type" can be asked of type-erased operands.
template <class T>
struct type_key {
  static constexpr char key = 0;
};

// One tensor argument: rows x cols elements, rows `stride` elements apart -- or a head view,
// rows x heads rows of cols elements, row (t, h) at t * stride + h * head_stride. Gaps between
// rows are never read or written.
//
// Validation runs on every call, decode rows included, so it divides by nothing at run time (a
// 64-bit division costs tens of cycles): the element limit is a constant of the type, alignments
// are powers of two, and products are checked by product_exceeds.
struct operand {
  std::uintptr_t address;
  std::size_t elem_size, align, max_elems, rows, cols, stride;
  const void* type;
  bool optional;  // may be null (a gain or bias that is not given)
  std::size_t heads = 1, head_stride = 0;
};

// T may be const (inputs) or not (outputs): an output is never passed as a pointer to const, which
// g++ 12 would take for a read of memory the caller has not written yet (-Wmaybe-uninitialized).
template <class T>
operand operand_of(T* p, std::size_t rows, std::size_t cols, std::size_t stride, bool optional = false) {
  using E = std::remove_const_t<T>;
  return {reinterpret_cast<std::uintptr_t>(p),
          sizeof(E),
          alignof(E),
          static_cast<std::size_t>(PTRDIFF_MAX) / sizeof(E),
          rows,
          cols,
          stride,
          &type_key<E>::key,
          optional};
}

template <class T>
operand operand_of(T* p, std::size_t rows, std::size_t heads, std::size_t cols, std::size_t stride,
                   std::size_t head_stride, bool optional = false) {
  operand o = operand_of(p, rows, cols, stride, optional);
  o.heads = heads;
  o.head_stride = head_stride;
  return o;
}

// Byte range [begin, end) of an operand; ok == false when it cannot be addressed.
struct extent {
  std::uintptr_t begin = 0, end = 0;
  bool ok = true;
};

// Whether a * b > limit, without overflow; a division only when a factor is 2^32 or more.
inline bool product_exceeds(std::size_t a, std::size_t b, std::size_t limit) {
  constexpr std::size_t half = std::size_t(1) << (sizeof(std::size_t) * 4);
  if (a < half && b < half)
    return a * b > limit;
  return a != 0 && b > limit / a;
}

inline extent extent_of(const operand& o) {
  extent r;
  r.begin = o.address;
  const std::size_t max_elems = o.max_elems;
  // elems = (rows - 1) * stride + (heads - 1) * head_stride + cols, computed without wrapping.
  if (o.cols > max_elems || (o.rows > 1 && product_exceeds(o.rows - 1, o.stride, max_elems - o.cols))) {
    r.ok = false;
    return r;
  }
  const std::size_t row_elems = (o.rows - 1) * o.stride + o.cols;
  if (o.heads > 1 && product_exceeds(o.heads - 1, o.head_stride, max_elems - row_elems)) {
    r.ok = false;
    return r;
  }
  const std::size_t bytes = (row_elems + (o.heads - 1) * o.head_stride) * o.elem_size;
  r.end = r.begin + bytes;
  r.ok = r.end >= r.begin;
  return r;
}

inline bool overlaps(const extent& a, const extent& b) {
  return a.begin < b.end && b.begin < a.end;
}

// contract (docs/contract.md, eps): eps must be finite and >= 0. On the bits, not with
// ordered compares: `eps >= 0` raises FE_INVALID for a NaN (a SIGFPE when the caller enabled
// that trap). Valid: +0 ... FLT_MAX (0x7f7fffff) and -0.
inline status check_eps(float eps) {
  const std::uint32_t eps_bits = float_bits(eps);
  return eps_bits > 0x7f7fffffu && eps_bits != 0x80000000u ? status::invalid_eps : status::ok;
}

// What the normalizing ops check before their buffers, in this order: eps, then the row strides
// (at least cols elements apart).
inline status check_norm_scalars(float eps, std::size_t cols, std::size_t x_stride, std::size_t y_stride) {
  if (const status st = check_eps(eps); st != status::ok)
    return st;
  return x_stride < cols || y_stride < cols ? status::invalid_stride : status::ok;
}

// Whether a head view (rows x heads rows of cols, strides stride / head_stride) has no element in
// two rows: each stride at least cols, and the larger one clears every row of the smaller.
inline bool view_is_disjoint(std::size_t rows, std::size_t heads, std::size_t cols, std::size_t stride,
                             std::size_t head_stride) {
  if (stride < cols || (heads > 1 && head_stride < cols))
    return false;
  if (rows <= 1 || heads <= 1)
    return true;
  const bool heads_inner = head_stride <= stride;
  const std::size_t n_in = heads_inner ? heads : rows, s_in = heads_inner ? head_stride : stride,
                    s_out = heads_inner ? stride : head_stride;
  // s_out >= (n_in - 1) * s_in + cols, without wrapping
  return s_out >= cols && !product_exceeds(n_in - 1, s_in, s_out - cols);
}

// What the normalizing ops check before their buffers, head views included: eps, then every
// view's strides (invalid_stride when a view would overlap itself, or the gains' head stride is
// neither 0 nor >= cols).
inline status check_norm_view(float eps, std::size_t rows, std::size_t heads, std::size_t cols,
                              std::size_t x_stride, std::size_t x_head_stride, std::size_t y_stride,
                              std::size_t y_head_stride, std::size_t gain_head_stride) {
  if (const status st = check_eps(eps); st != status::ok)
    return st;
  if (!view_is_disjoint(rows, heads, cols, x_stride, x_head_stride) ||
      !view_is_disjoint(rows, heads, cols, y_stride, y_head_stride) ||
      (gain_head_stride != 0 && gain_head_stride < cols))
    return status::invalid_stride;
  return status::ok;
}

// Exactly in place: the output is the input itself, same element type, same rows.
inline bool same_tensor(const operand& in, const operand& out) {
  return in.type == out.type && in.address == out.address && (out.rows == 1 || in.stride == out.stride) &&
         in.heads == out.heads && (out.heads == 1 || in.head_stride == out.head_stride);
}

// The buffer checks, for calls with non-zero sizes. in_place_of[o] names the input that output o
// may be exactly (-1: none); any other overlap of an output with an input or another output is
// overlapping_output (an interleaved output counts as overlapping: conservative). Inlined: as a
// call, its operand arrays went through the stack (dispatch/run.hpp, call).
template <std::size_t NI, std::size_t NO>
NORMKIT_ALWAYS_INLINE status check_operands(const operand (&in)[NI], const operand (&out)[NO],
                                            const int (&in_place_of)[NO]) {
  for (const operand& o : in)
    if (o.address == 0 && !o.optional)
      return status::null_pointer;
  for (const operand& o : out)
    if (o.address == 0 && !o.optional)
      return status::null_pointer;
  for (const operand& o : in)
    if (o.address & (o.align - 1))
      return status::misaligned_pointer;
  for (const operand& o : out)
    if (o.address & (o.align - 1))
      return status::misaligned_pointer;
  extent ein[NI], eout[NO];
  for (std::size_t i = 0; i < NI; ++i)
    if (in[i].address != 0 && !(ein[i] = extent_of(in[i])).ok)
      return status::size_overflow;
  for (std::size_t k = 0; k < NO; ++k)
    if (out[k].address != 0 && !(eout[k] = extent_of(out[k])).ok)
      return status::size_overflow;
  for (std::size_t k = 0; k < NO; ++k) {
    if (out[k].address == 0)
      continue;
    for (std::size_t i = 0; i < NI; ++i) {
      if (in[i].address == 0)
        continue;
      const bool in_place = in_place_of[k] == static_cast<int>(i) && same_tensor(in[i], out[k]);
      if (!in_place && overlaps(ein[i], eout[k]))
        return status::overlapping_output;
    }
    for (std::size_t j = 0; j < k; ++j)
      if (out[j].address != 0 && overlaps(eout[j], eout[k]))
        return status::overlapping_output;
  }
  return status::ok;
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
