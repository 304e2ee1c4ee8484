// SPDX-License-Identifier: MIT
// normkit: bulk conversion between storage types, with exactly the bits of types.hpp on every
// ISA (round to nearest even, subnormals kept, NaN quieted with its payload kept).
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "core/policy.hpp"
#include "core/status.hpp"
#include "core/storage.hpp"
#include "dispatch/run.hpp"
#include "ops/convert.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

// dst[i] = Dst(float(src[i])) for i < n. Touching nothing, returns null_pointer (null src or dst
// with n > 0), misaligned_pointer, size_overflow (n elements beyond PTRDIFF_MAX bytes) or
// overlapping_output (dst partially overlapping src; dst == src with Src == Dst is allowed).
template <class Src, class Dst>
[[nodiscard]] status convert(const Src* src, Dst* dst, std::size_t n) {
  static_assert(is_storage_type<Src>::value && is_storage_type<Dst>::value,
                "normkit: Src and Dst must each be float, normkit::bf16 or normkit::fp16");
  return impl::call<detail::convert_op, round_once, Src, Dst>({src, dst, n});
}

// On the caller's thread pool (see rms_norm.hpp): the elements split into tasks of whole cache
// lines, about a megabyte each; calls under half a megabyte run on the calling thread.
template <class Src, class Dst, class ParallelFor, impl::if_parallel_for<ParallelFor> = 0>
[[nodiscard]] status convert(ParallelFor&& parallel_for, const Src* src, Dst* dst, std::size_t n) {
  static_assert(is_storage_type<Src>::value && is_storage_type<Dst>::value,
                "normkit: Src and Dst must each be float, normkit::bf16 or normkit::fp16");
  return impl::call_parallel<detail::convert_op, round_once, Src, Dst>(parallel_for, {src, dst, n});
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
