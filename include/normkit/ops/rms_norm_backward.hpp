// SPDX-License-Identifier: MIT
// normkit: the RMSNorm backward op -- dx of a block of rows and their dgamma block partials
// (docs/contract.md, "Backward"): its arguments, its validation rule, its type slots and its
// scalar reference (core/backward.hpp). The SIMD rows are in rms_norm_backward_simd.hpp; the
// public entry points (rms_norm_backward.hpp) fold the partials (core/backward.hpp, grad_tree).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/backward.hpp"
#include "../core/op.hpp"
#include "../core/policy.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/validate.hpp"

namespace normkit {

// The argument bundle (its namespace: ops/rms_norm.hpp). dy, x, dx: rows x cols with their row
// strides; gain: cols fp32 values g_i (gamma widened, the policy's offset added) or null (g = 1); rstd: rows
// floats; dgamma: grad_blocks(rows) x cols floats, the block partials (block k = rows [64k, 64k + 64) of this
// call), or null.
namespace NORMKIT_TABLE_NAMESPACE {
template <class T>
struct rms_norm_backward_args {
  const T* dy;
  const T* x;
  const float* gain;
  const float* rstd;
  T* dx;
  float* dgamma;
  std::size_t rows, cols;
  std::size_t dy_stride, x_stride, dx_stride;
  bool stream;                 // a hint: dx is large enough for streaming stores (no effect on the bits)
  float* work = nullptr;       // grad_work_floats<T>(cols) floats (core/backward.hpp)
  std::size_t group_rows = 2;  // a hint: rows per output-pass group, 2 or 4 (no effect on the bits)
  bool far_inputs = false;     // a hint: the whole call's dy and x are far (core/tuning.hpp, prefetches)
  std::size_t rows_after = 0;  // rows of the caller's dy and x after these, which prefetches may reach
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace impl {
// What the backward ops check before their buffers: the row strides (at least cols apart).
inline status check_grad_strides(std::size_t cols, std::size_t dy_stride, std::size_t x_stride,
                                 std::size_t dx_stride) {
  return dy_stride < cols || x_stride < cols || dx_stride < cols ? status::invalid_stride : status::ok;
}
}  // namespace impl

namespace detail {

// One type T for dy, x and dx, and no knobs: the public entry points turn gamma (any storage type)
// and the policy's gain offset into the fp32 gain row the kernel reads (dispatch/backward_call.hpp),
// so a kernel exists per T only (3 per op and ISA).
struct rms_norm_backward_op {
  static constexpr const char* name = "rms_norm_backward";
  using slots = type_list<input_types>;  // T
  using knobs = no_knobs;
  static constexpr bool centered = false;
  template <class T>
  using args = NORMKIT_TABLE_NAMESPACE::rms_norm_backward_args<T>;
  template <class Knobs, class T>
  using canonical = Knobs;
  template <class Knobs, class T>
  using narrows = type_list<T>;

  // invalid_stride, then the buffers (core/validate.hpp); dx may be dy exactly. The parameter
  // gradients hold grad_rows x cols floats: the block partials here, 1 row for the folded call.
  template <class T>
  static status validate(const args<T>& a) {
    return check(a, grad_blocks(a.rows), impl::operand_of(a.gain, 1, a.cols, a.cols, true));
  }
  // gain: the operand the caller gave as gamma (its own storage type).
  template <class T>
  static status check(const args<T>& a, std::size_t grad_rows, const impl::operand& gain) {
    if (const status st = impl::check_grad_strides(a.cols, a.dy_stride, a.x_stride, a.dx_stride);
        st != status::ok)
      return st;
    if (empty(a))
      return status::ok;
    const impl::operand in[] = {impl::operand_of(a.dy, a.rows, a.cols, a.dy_stride),
                                impl::operand_of(a.x, a.rows, a.cols, a.x_stride), gain,
                                impl::operand_of(a.rstd, 1, a.rows, a.rows)};
    const impl::operand out[] = {impl::operand_of(a.dx, a.rows, a.cols, a.dx_stride),
                                 impl::operand_of(a.dgamma, grad_rows, a.cols, a.cols, true)};
    return impl::check_operands(in, out, {0, -1});
  }
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }

  // The gain row already holds the policy's offset: the plain knob set.
  template <class Policy, class T>
  static void reference(const args<T>& a) {
    normkit::reference::backward_rows<policy<rounding::once>, rms_norm_backward_op>(
        a.dy, a.x, a.gain, a.rstd, static_cast<const float*>(nullptr), a.dx, a.dgamma,
        static_cast<float*>(nullptr), a.rows, a.cols, a.dy_stride, a.x_stride, a.dx_stride);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
