// SPDX-License-Identifier: MIT
// normkit: the row-statistics op's SIMD rows: the forward ops' own statistics (rms_norm_simd_row,
// layer_norm_simd_row) and factor, so the saved rstd is the forward's factor bit for bit.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/epilogue.hpp"
#include "../core/op.hpp"
#include "../simd/diagnostics.hpp"
#include "../simd/rows.hpp"
#include "layer_norm_simd.hpp"
#include "norm_stats.hpp"
#include "rms_norm_simd.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <class Arch, class Row, class In>
void stats_rows(const norm_stats_op::args<In>& a) {
  using B = typename shape<Arch>::batch;
  using multiply = policy<rounding::once>;
  constexpr std::size_t width = shape<Arch>::width;
  row_stats st[width];
  alignas(64) float sums[width], epss[width], factors[width];
  for (std::size_t k = 0; k < width; ++k)
    sums[k] = 0.0f, epss[k] = 1.0f;  // lanes past the group's rows: a harmless factor
  // Rows in groups of one vector: one divide and square root give the group's factors, as in
  // norm_rows (IEEE per lane: the reference's bits).
  for (std::size_t r0 = 0; r0 < a.rows; r0 += width) {
    const std::size_t n = min_of(width, a.rows - r0);
    for (std::size_t k = 0; k < n; ++k) {
      const plain_source<Arch, false, In> src{a.x + (r0 + k) * a.x_stride, {}};
      st[k] = Row::template stats<Arch, false>(src, a.cols, a.eps);
      sums[k] = st[k].sum;
      epss[k] = st[k].eps;
    }
    // contract: inv = 1 / sqrt(S / float(d) + eps)
    row_factor<multiply, simd_ops<Arch>>(B::load_aligned(sums), B(static_cast<float>(a.cols)),
                                         B::load_aligned(epss))
        .store_aligned(factors);
    for (std::size_t k = 0; k < n; ++k)
      saved_stats<Arch>(factors[k], st[k].shift + st[k].mean, st[k].scale, st[k].nan_row, a.rstd + r0 + k,
                        a.mean ? a.mean + r0 + k : nullptr);
  }
}

template <>
struct simd_rows<norm_stats_op> {
  template <class Arch, class Knobs, class In>
  static void rows(const norm_stats_op::args<In>& a) {
    if (a.mean)
      stats_rows<Arch, layer_norm_simd_row>(a);
    else
      stats_rows<Arch, rms_norm_simd_row>(a);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
