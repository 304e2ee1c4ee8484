// SPDX-License-Identifier: MIT
// normkit: the convert op's SIMD rows: one register at a time, the tail through a zero-padded
// copy, with the bits of core/storage.hpp (NaN payloads kept, not canonicalized).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/op.hpp"
#include "../simd/diagnostics.hpp"
#include "../simd/io.hpp"
#include "../simd/rows.hpp"
#include "convert.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <>
struct simd_rows<convert_op> {
  template <class Arch, class Knobs, class Src, class Dst>
  static void rows(const convert_op::args<Src, Dst>& a) {
    constexpr std::size_t Wd = shape<Arch>::width;
    const Src* const src = a.src;
    Dst* const dst = a.dst;
    const std::size_t n = a.n;
    std::size_t i = 0;
    for (; i + Wd <= n; i += Wd)
      io<Dst, Arch>::store(dst + i, io<Src, Arch>::load(src + i));
    if (i < n)
      store_partial<Arch>(dst + i, load_partial<Arch>(src + i, n - i), n - i);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
