// SPDX-License-Identifier: MIT
// normkit: the LayerNorm op's SIMD rows -- its statistics; the output pass and the row groups are
// the shared machinery of simd/rows.hpp.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/epilogue.hpp"
#include "../core/op.hpp"
#include "../simd/diagnostics.hpp"
#include "../simd/rows.hpp"
#include "layer_norm.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// What a LayerNorm row is to the row machinery: centered values (c_i = d_i - m), and these
// statistics (shifted two-pass).
struct layer_norm_simd_row {
  static constexpr bool centered = true;

  // contract: m = csum(d_i) / float(d), d_i = fma(f(x_i), scale, -K) (f(x_i) - K at scale 1);
  // padding lanes add 0. The backward's replay takes its m here too (simd/backward_rows.hpp).
  template <class Arch, bool Interleaved, class Source>
  static float mean(const Source& x, std::size_t cols, float shift, float scale) {
    using B = typename shape<Arch>::batch;
    using M = xsimd::batch_bool<float, Arch>;
    const B neg_k(-shift), sc(scale);
    return canonical_sum<Arch, Interleaved>(x, cols,
                                            [&](B acc, B v, const M* keep) {
                                              const B di = arch_impl::fma<Arch>(v, sc, neg_k);
                                              return acc + (keep ? xsimd::select(*keep, di, B(0.0f)) : di);
                                            }) /
           static_cast<float>(cols);
  }

  // contract: K = f(x_0); d_i = f(x_i) - K; m = csum(d_i) / float(d); c_i = d_i - m;
  // S = csum(c_i^2); padding lanes add 0. Then, in this order: the rescale when S / d + eps is not
  // finite (statistics again from K = f(x_0) * 2^-e), and one refinement when
  // m * m > 16 * (S / d) (K = K + m, statistics once more, in the scaled domain if rescaled).
  // d_i is computed as fma(f(x_i), scale, -K), which is f(x_i) - K exactly when scale is 1 and the
  // overflow path's value otherwise.
  template <class Arch, bool Interleaved, class Source>
  static row_stats stats(const Source& x, std::size_t cols, float eps) {
    using B = typename shape<Arch>::batch;
    using M = xsimd::batch_bool<float, Arch>;
    const float d = static_cast<float>(cols);
    row_stats st{0.0f, x.first(), 0.0f, 1.0f, eps, false};
    // At most three passes (rare rows only), written as one loop so the canonical sums are inlined
    // once.
    bool refined = false;
    for (bool first = true;; first = false) {
      const B neg_k(-st.shift), sc(st.scale);
      st.mean = mean<Arch, Interleaved>(x, cols, st.shift, st.scale);
      const B mb(st.mean);
      st.sum = canonical_sum<Arch, Interleaved>(x, cols, [&](B acc, B v, const M* keep) {
        B c = arch_impl::fma<Arch>(v, sc, neg_k) - mb;
        if (keep)
          c = xsimd::select(*keep, c, B(0.0f));
        return arch_impl::fma<Arch>(c, c, acc);
      });
      // contract: the rescale is decided once, on the first statistics at scale 1.
      if (first && needs_rescale<Arch>(st.sum, d, eps)) {
        if (!x.all_finite(cols))
          return st.nan_row = true, st;
        const overflow_scale o = make_overflow_scale<Arch>(x.max_abs(cols), eps);
        st.scale = o.scale;
        st.eps = o.eps;
        st.shift = x.first() * o.scale;  // contract: K = f(x_0) * 2^-e
        continue;
      }
      // contract: refine once when m * m > 16 * (S / d): K = K + m (one fp32 add, scaled domain).
      if (refined || !shift_is_outlier<Arch>(st.mean, st.sum, d))
        return st;
      refined = true;
      st.shift = st.shift + st.mean;
    }
  }
};

template <>
struct simd_rows<layer_norm_op> {
  template <class Arch, class Knobs, class In, class W, class Out>
  static void rows(const layer_norm_op::args<In, W, Out>& a) {
    norm_rows<Arch, layer_norm_simd_row, Knobs>(
        a.x, a.gamma, a.beta, store_sink<Arch, interleaved_layout<In, W, Out>, Out>{a.y}, a.rows * a.heads,
        a.cols, a.eps, layout_of(a), a.stream, a.ahead);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
