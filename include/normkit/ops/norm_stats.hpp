// SPDX-License-Identifier: MIT
// normkit: the row-statistics op -- per row the forward's fp32 rstd (and LayerNorm's mean), by the
// forward's own steps, for the forward variants that save them (rms_norm_fwd, layer_norm_fwd in
// rms_norm_backward.hpp / layer_norm_backward.hpp, which run it and then the plain norm kernel).
// Its SIMD rows are in norm_stats_simd.hpp.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/epilogue.hpp"
#include "../core/op.hpp"
#include "../core/policy.hpp"
#include "../core/scalar_rows.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/validate.hpp"
#include "layer_norm.hpp"
#include "rms_norm.hpp"

namespace normkit {

// The argument bundle (its namespace: ops/rms_norm.hpp). x: rows x cols, rows x_stride apart;
// rstd: rows floats; mean: rows floats, or null for RMSNorm's statistics.
namespace NORMKIT_TABLE_NAMESPACE {
template <class In>
struct norm_stats_args {
  const In* x;
  float* rstd;
  float* mean;
  std::size_t rows, cols;
  float eps;
  std::size_t x_stride;
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// contract (saved statistics): rstd = (1 / sqrt(S / d + eps')) * scale; mean = (K + m) / scale;
// a non-finite row saves canonical NaNs. The same expression in the reference and the kernels.
template <class Tag>
void saved_stats(float factor, float sum_shift_mean, float scale, bool nan_row, float* rstd, float* mean) {
  const float nan = bits_float(storage_traits<float>::canonical_nan);
  *rstd = nan_row ? nan : factor * scale;
  if (mean)
    *mean = nan_row ? nan : sum_shift_mean / scale;
}

struct norm_stats_op {
  static constexpr const char* name = "norm_stats";
  using slots = type_list<input_types>;  // In
  using knobs = no_knobs;
  template <class In>
  using args = NORMKIT_TABLE_NAMESPACE::norm_stats_args<In>;
  template <class Knobs, class In>
  using canonical = Knobs;
  template <class Knobs, class In>
  using narrows = type_list<>;

  // invalid_eps, invalid_stride, then the buffers.
  template <class In>
  static status validate(const args<In>& a) {
    if (const status st = impl::check_norm_scalars(a.eps, a.cols, a.x_stride, a.x_stride); st != status::ok)
      return st;
    if (empty(a))
      return status::ok;
    const impl::operand in[] = {impl::operand_of(a.x, a.rows, a.cols, a.x_stride)};
    const impl::operand out[] = {impl::operand_of(a.rstd, 1, a.rows, a.rows),
                                 impl::operand_of(a.mean, 1, a.rows, a.rows, true)};
    return impl::check_operands(in, out, {-1, -1});
  }
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }

  template <class Policy, class In>
  static void reference(const args<In>& a) {
    using multiply = policy<rounding::once>;
    const float d = static_cast<float>(a.cols);
    for (std::size_t r = 0; r < a.rows; ++r) {
      const In* x = a.x + r * a.x_stride;
      const impl::row_moments st = a.mean ? normkit::reference::layer_norm_row_stats(x, a.cols, a.eps)
                                          : normkit::reference::rms_norm_row_stats(x, a.cols, a.eps);
      const float factor = row_factor<multiply, impl::scalar_ops>(st.sum, d, st.eps);
      saved_stats<scalar_tag>(factor, st.shift + st.mean, st.scale, st.nan_row, a.rstd + r,
                              a.mean ? a.mean + r : nullptr);
    }
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
