// SPDX-License-Identifier: MIT
// normkit: the residual add op -- `residual += x` in the storage type, the first stage of the
// fused add + norm (add_norm.hpp). Per element (docs/contract.md, fused residual add):
//   s = f(x_i) + f(residual_i)            one fp32 add, in the current rounding mode
//   residual_i = Res(s)                   round to nearest even; a NaN sum is stored as Res's
//                                         canonical NaN (a NaN in x reaches the residual stream)
//   sum_i = s                             only when asked: the fp32 sum the fp32_sum mode normalizes
// The SIMD rows are in residual_add_simd.hpp.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/op.hpp"
#include "../core/scalar_rows.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/validate.hpp"

namespace normkit {

// The argument bundle (its namespace: ops/rms_norm.hpp). x, residual: rows x cols, strided; sum:
// null, or rows x cols contiguous fp32.
namespace NORMKIT_TABLE_NAMESPACE {
template <class Res>
struct residual_add_args {
  const Res* x;
  Res* residual;
  float* sum;
  std::size_t rows, cols, x_stride, residual_stride;
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace reference {

template <class Res>
void residual_add_row(const Res* x, Res* residual, float* sum, std::size_t cols) {
  for (std::size_t i = 0; i < cols; ++i) {
    const float s = to_float(x[i]) + to_float(residual[i]);
    residual[i] = from_float<Res>(impl::canonical(s));
    if (sum)
      sum[i] = s;
  }
}

}  // namespace reference

namespace detail {

struct residual_add_op {
  static constexpr const char* name = "residual_add";
  using slots = type_list<input_types>;  // Res: x and residual
  using knobs = no_knobs;
  template <class Res>
  using args = NORMKIT_TABLE_NAMESPACE::residual_add_args<Res>;
  template <class Knobs, class Res>
  using canonical = Knobs;
  template <class Knobs, class Res>
  using narrows = type_list<Res>;

  // invalid_stride, then the buffers: x, residual and sum pairwise disjoint.
  template <class Res>
  static status validate(const args<Res>& a) {
    if (a.x_stride < a.cols || a.residual_stride < a.cols)
      return status::invalid_stride;
    if (empty(a))
      return status::ok;
    const impl::operand in[] = {impl::operand_of(a.x, a.rows, a.cols, a.x_stride)};
    const impl::operand out[] = {impl::operand_of(a.residual, a.rows, a.cols, a.residual_stride),
                                 impl::operand_of(a.sum, a.rows, a.cols, a.cols, true)};
    return impl::check_operands(in, out, {-1, -1});
  }
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }

  template <class Policy, class Res>
  static void reference(const args<Res>& a) {
    for (std::size_t r = 0; r < a.rows; ++r)
      normkit::reference::residual_add_row(a.x + r * a.x_stride, a.residual + r * a.residual_stride,
                                           a.sum ? a.sum + r * a.cols : nullptr, a.cols);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
