// SPDX-License-Identifier: MIT
// normkit: bulk conversion between storage types, with exactly the bits of types.hpp on every
// ISA (round to nearest even, subnormals kept, NaN quieted with its payload kept).
#pragma once

#include "detail/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "detail/run.hpp"
#include "detail/validate.hpp"
#include "status.hpp"
#include "types.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

// dst[i] = Dst(float(src[i])) for i < n. Touching nothing, returns null_pointer (null src or dst
// with n > 0), misaligned_pointer, size_overflow (n elements beyond PTRDIFF_MAX bytes) or
// overlapping_output (dst partially overlapping src; dst == src with Src == Dst is allowed).
template <class Src, class Dst>
[[nodiscard]] status convert(const Src* src, Dst* dst, std::size_t n) {
  static_assert(is_storage_type<Src>::value && is_storage_type<Dst>::value,
                "normkit: Src and Dst must each be float, normkit::bf16 or normkit::fp16");
  // The norm validator's buffer checks on one row of n elements, without gains.
  const status st = impl::validate_buffers(src, static_cast<const Src*>(nullptr),
                                           static_cast<const Src*>(nullptr), dst, 1, n, n, n);
  if (st != status::ok || n == 0)
    return st;
  impl::run_convert(src, dst, n);
  return status::ok;
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "detail/fp_precise_end.hpp"
