// SPDX-License-Identifier: MIT
// normkit: the RMSNorm op's SIMD rows -- its statistics; the output pass and the row groups are
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
#include "rms_norm.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// What an RMSNorm row is to the row machinery: uncentered values (c_i = f(x_i)), and these
// statistics.
struct rms_norm_simd_row {
  static constexpr bool centered = false;

  // contract: s = csum(f(x_i)^2), fma into partials (zero padding adds 0); overflow: redo on
  // x * 2^-e. A call: inlined, it saved a 128-column row about 40 instructions (frame, return
  // value), but the AVX2 object compiled 30 % longer (g++ 12), and with the rare rows kept out of
  // line still 15 % (docs/performance.md).
  template <class Arch, bool Interleaved, class Source>
  static row_stats stats(const Source& x, std::size_t cols, float eps) {
    using B = typename shape<Arch>::batch;
    using M = xsimd::batch_bool<float, Arch>;
    row_stats st{0.0f, 0.0f, 0.0f, 1.0f, eps, false};
    st.sum = canonical_sum<Arch, Interleaved>(
        x, cols, [](B acc, B v, const M*) { return arch_impl::fma<Arch>(v, v, acc); });
    if (!needs_rescale<Arch>(st.sum, static_cast<float>(cols), eps))
      return st;
    // Rare rows: a NaN/Inf input gives NaNs; a finite row whose squares overflow (or whose
    // ms + eps does) is redone scaled.
    if (!x.all_finite(cols))
      return st.nan_row = true, st;
    const overflow_scale o = make_overflow_scale<Arch>(x.max_abs(cols), eps);
    const B sc(o.scale);
    st.scale = o.scale;
    st.eps = o.eps;
    st.sum = canonical_sum<Arch, Interleaved>(x, cols, [&](B acc, B v, const M*) {
      const B t = v * sc;
      return arch_impl::fma<Arch>(t, t, acc);
    });
    return st;
  }
};

template <>
struct simd_rows<rms_norm_op> {
  template <class Arch, class Knobs, class In, class W, class Out>
  static void rows(const rms_norm_op::args<In, W, Out>& a) {
    norm_rows<Arch, rms_norm_simd_row, Knobs>(a.x, a.gamma, static_cast<const W*>(nullptr),
                                              store_sink<Arch, interleaved_layout<In, W, Out>, Out>{a.y},
                                              a.rows * a.heads, a.cols, a.eps, layout_of(a), a.stream,
                                              a.ahead);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
