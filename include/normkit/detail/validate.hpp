// SPDX-License-Identifier: MIT
// normkit: argument checks shared by the entry points (convert uses the buffer checks). Nothing on a bad
// argument is undefined: each case below returns its own status (status.hpp) before any memory is touched.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uintptr_t, std::uint32_t, PTRDIFF_MAX
#include <type_traits>  // std::is_same

#include "../status.hpp"
#include "../types.hpp"  // detail::float_bits
#include "abi.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
// Per-configuration internals (ABI-tagged by the inline namespace, see detail/abi.hpp).
namespace impl {
using namespace ::normkit::detail;

// Byte range [begin, end) of a strided 2-D tensor; ok == false when it cannot be addressed.
struct extent {
  std::uintptr_t begin = 0, end = 0;
  bool ok = true;
};

template <class T>
extent extent_of(const T* p, std::size_t rows, std::size_t cols, std::size_t stride) {
  extent r;
  r.begin = reinterpret_cast<std::uintptr_t>(p);
  const std::size_t max_elems = static_cast<std::size_t>(PTRDIFF_MAX) / sizeof(T);
  // elems = (rows - 1) * stride + cols, computed without wrapping.
  if (cols > max_elems || (rows > 1 && (max_elems - cols) / stride < rows - 1)) {
    r.ok = false;
    return r;
  }
  const std::size_t bytes = ((rows - 1) * stride + cols) * sizeof(T);
  r.end = r.begin + bytes;
  r.ok = r.end >= r.begin;
  return r;
}

inline bool overlaps(const extent& a, const extent& b) {
  return a.begin < b.end && b.begin < a.end;
}

template <class T>
bool misaligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0;
}

// contract (docs/contract.md; README, status table): invalid are a null x or y with non-zero sizes, a stride
// smaller than cols, eps negative / NaN / Inf, a pointer misaligned for its element type, a
// tensor whose extent overflows the address space, and y overlapping x, gamma or beta unless y
// is x itself with the same element type and stride (in place). Gaps between strided rows are
// never read or written, but an interleaved y still counts as overlapping (conservative).
template <class In, class W, class Out>
status validate_buffers(const In* x, const W* gamma, const W* beta, const Out* y, std::size_t rows,
                        std::size_t cols, std::size_t x_stride, std::size_t y_stride);

template <class In, class W, class Out>
status validate(const In* x, const W* gamma, const W* beta, const Out* y, std::size_t rows, std::size_t cols,
                float eps, std::size_t x_stride, std::size_t y_stride) {
  // On the bits, not with ordered compares: `eps >= 0` raises FE_INVALID for a NaN (a SIGFPE
  // when the caller enabled that trap). Valid: +0 ... FLT_MAX (0x7f7fffff) and -0.
  const std::uint32_t eps_bits = detail::float_bits(eps);
  if (eps_bits > 0x7f7fffffu && eps_bits != 0x80000000u)
    return status::invalid_eps;
  if (x_stride < cols || y_stride < cols)
    return status::invalid_stride;
  return validate_buffers(x, gamma, beta, y, rows, cols, x_stride, y_stride);
}

// The checks on the buffers themselves (convert uses them alone: it has no eps, stride or gain).
template <class In, class W, class Out>
status validate_buffers(const In* x, const W* gamma, const W* beta, const Out* y, std::size_t rows,
                        std::size_t cols, std::size_t x_stride, std::size_t y_stride) {
  if (rows == 0 || cols == 0)
    return status::ok;
  if (x == nullptr || y == nullptr)
    return status::null_pointer;
  if (misaligned(x) || misaligned(y) || (gamma && misaligned(gamma)) || (beta && misaligned(beta)))
    return status::misaligned_pointer;
  const extent ex = extent_of(x, rows, cols, x_stride);
  const extent ey = extent_of(y, rows, cols, y_stride);
  const extent eg = gamma ? extent_of(gamma, 1, cols, cols) : extent{};
  const extent eb = beta ? extent_of(beta, 1, cols, cols) : extent{};
  if (!ex.ok || !ey.ok || !eg.ok || !eb.ok)
    return status::size_overflow;
  const bool in_place =
      std::is_same<In, Out>::value && ex.begin == ey.begin && (rows == 1 || x_stride == y_stride);
  if (!in_place && overlaps(ex, ey))
    return status::overlapping_output;
  if (gamma && overlaps(eg, ey))
    return status::overlapping_output;
  if (beta && overlaps(eb, ey))
    return status::overlapping_output;
  return status::ok;
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
