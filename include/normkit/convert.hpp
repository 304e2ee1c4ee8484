// SPDX-License-Identifier: MIT
// normkit: bulk conversion between storage types, with exactly the bits of types.hpp on every
// ISA (round to nearest even, subnormals kept, NaN quieted with its payload kept).
#pragma once

#include "detail/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_same

#include "detail/run.hpp"
#include "detail/validate.hpp"
#include "status.hpp"
#include "types.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

namespace impl {
// The norm validator's checks that apply to a 1-D copy (there is no eps, stride or gain here):
// null_pointer, misaligned_pointer, size_overflow, overlapping_output.
template <class Src, class Dst>
status validate_convert(const Src* src, const Dst* dst, std::size_t n) {
  if (n == 0)
    return status::ok;
  if (src == nullptr || dst == nullptr)
    return status::null_pointer;
  if (misaligned(src) || misaligned(dst))
    return status::misaligned_pointer;
  const extent es = extent_of(src, 1, n, n);
  const extent ed = extent_of(dst, 1, n, n);
  if (!es.ok || !ed.ok)
    return status::size_overflow;
  const bool in_place = std::is_same<Src, Dst>::value && es.begin == ed.begin;
  if (!in_place && overlaps(es, ed))
    return status::overlapping_output;
  return status::ok;
}
}  // namespace impl

// dst[i] = Dst(float(src[i])) for i < n. Touching nothing, returns null_pointer (null src or dst
// with n > 0), misaligned_pointer, size_overflow (n elements beyond PTRDIFF_MAX bytes) or
// overlapping_output (dst partially overlapping src; dst == src with Src == Dst is allowed).
template <class Src, class Dst>
[[nodiscard]] status convert(const Src* src, Dst* dst, std::size_t n) {
  static_assert(is_storage_type<Src>::value && is_storage_type<Dst>::value,
                "normkit: Src and Dst must each be float, normkit::bf16 or normkit::fp16");
  const status st = impl::validate_convert(src, dst, n);
  if (st != status::ok || n == 0)
    return st;
  impl::run_convert(src, dst, n);
  return status::ok;
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "detail/fp_precise_end.hpp"
