// SPDX-License-Identifier: MIT
// normkit: the convert op's SIMD rows: one register at a time, the tail through a zero-padded
// copy, with the bits of core/storage.hpp (NaN payloads kept, not canonicalized).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint16_t
#include <type_traits>  // std::is_same

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
    if constexpr (std::is_same<Src, fp16>::value && std::is_same<Dst, fp16>::value) {
      // contract: Dst(float(src)) -- for fp16 to fp16, the value itself with a signalling NaN
      // quieted (core/storage.hpp). On integers: g++ may treat a widening and narrowing pair as
      // the identity (it assumes no signalling NaNs), and on AArch64 it did, keeping sNaNs.
      for (; i < n; ++i) {
        const std::uint16_t h = src[i].bits;
        dst[i].bits =
            static_cast<std::uint16_t>((h & 0x7fffu) > storage_traits<fp16>::exponent_mask ? h | 0x0200u : h);
      }
      return;
    }
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
