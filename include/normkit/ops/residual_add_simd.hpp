// SPDX-License-Identifier: MIT
// normkit: the residual add op's SIMD rows (the contract is in residual_add.hpp).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_same

#include "../core/abi.hpp"
#include "../core/op.hpp"
#include "../simd/chunk.hpp"
#include "../simd/diagnostics.hpp"
#include "../simd/rows.hpp"
#include "residual_add.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <>
struct simd_rows<residual_add_op> {
  // Two registers per step; the tail through zero-padded copies (no access leaves the row). The
  // stores canonicalize NaN sums, as the reference's Res(canonical(s)) does. The add is element-wise,
  // so without the fp32 sums bf16 rows use the interleaved chunk layout (simd/chunk.hpp: no
  // cross-lane packing); the sums must be stored in element order, so with them the split layout.
  template <class Arch, class Knobs, class Res>
  static void rows(const residual_add_op::args<Res>& a) {
    if (a.sum)
      return add_rows<Arch, Res, false>(a);
    add_rows<Arch, Res, std::is_same<Res, bf16>::value>(a);
  }

  template <class Arch, class Res, bool Interleaved>
  static void add_rows(const residual_add_op::args<Res>& a) {
    using B = typename shape<Arch>::batch;
    using io2 = chunk_io<Res, Arch, Interleaved>;
    constexpr std::size_t Wd = shape<Arch>::width, W2 = 2 * Wd;
    for (std::size_t r = 0; r < a.rows; ++r) {
      const Res* const x = a.x + r * a.x_stride;
      Res* const res = a.residual + r * a.residual_stride;
      float* const sum = a.sum ? a.sum + r * a.cols : nullptr;
      const std::size_t n = a.cols;
      std::size_t i = 0;
      for (; i + W2 <= n; i += W2) {
        B xa, xb, ra, rb;
        io2::load(x + i, xa, xb);
        io2::load(res + i, ra, rb);
        const B sa = xa + ra, sb = xb + rb;
        io2::template store<false, false>(res + i, sa, sb);
        if (!Interleaved && sum) {
          sa.store_unaligned(sum + i);
          sb.store_unaligned(sum + i + Wd);
        }
      }
      if (i < n) {
        B xa, xb, ra, rb;
        load_chunk_partial<Arch, Interleaved>(x + i, n - i, xa, xb);
        load_chunk_partial<Arch, Interleaved>(res + i, n - i, ra, rb);
        const B sa = xa + ra, sb = xb + rb;
        Res buf[W2];
        io2::template store<false, false>(buf, sa, sb);
        copy_short<W2>(res + i, buf, n - i);
        if (!Interleaved && sum) {
          alignas(64) float fbuf[W2];
          sa.store_aligned(fbuf);
          sb.store_aligned(fbuf + Wd);
          copy_short<W2>(sum + i, fbuf, n - i);
        }
      }
    }
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
