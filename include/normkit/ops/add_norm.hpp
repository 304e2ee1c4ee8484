// SPDX-License-Identifier: MIT
// normkit: the fused residual add + norm ops, add_rms_norm and add_layer_norm -- composite ops
// (core/op.hpp): per chunk of rows, the residual_add kernel, then the plain norm kernel over the
// rows it just wrote, while they are still in cache. Per row (docs/contract.md, fused residual add):
//   s_i = f(x_i) + f(residual_i); residual_i = Res(s_i)         (residual_add.hpp)
//   y = norm<Policy>(v) with v_i = f(Res(s_i))   residual_norm::stored_residual (every model preset)
//                            v_i = s_i           residual_norm::fp32_sum (flashinfer presets)
// So the stored-residual mode is, by construction, add then rms_norm / layer_norm over the
// residual (In = Res); the fp32-sum mode is rms_norm / layer_norm over the fp32 sums (In = float:
// the norm's input is fp32, so "round twice through the input type" rounds once).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <type_traits>  // std::conditional_t, std::is_same

#include "../core/abi.hpp"
#include "../core/ahead.hpp"
#include "../core/op.hpp"
#include "../core/policy.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/validate.hpp"
#include "layer_norm.hpp"
#include "residual_add.hpp"
#include "rms_norm.hpp"

namespace normkit {

// The argument bundle (its namespace: ops/rms_norm.hpp). x, residual, y: rows x cols with their
// own row strides; gamma, beta: cols values or null (add_rms_norm has no beta).
namespace NORMKIT_TABLE_NAMESPACE {
template <class Res, class W, class Out>
struct add_norm_args {
  const Res* x;
  Res* residual;
  const W* gamma;
  const W* beta;
  Out* y;
  std::size_t rows, cols;
  float eps;
  std::size_t x_stride, residual_stride, y_stride;
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// The plain norm's argument bundle over rows the residual add produced.
template <class In, class W, class Out>
NORMKIT_TABLE_NAMESPACE::rms_norm_args<In, W, Out> norm_args_of(rms_norm_op, const In* x, const W* gamma,
                                                                const W*, Out* y, std::size_t rows,
                                                                std::size_t cols, float eps,
                                                                std::size_t x_stride, std::size_t y_stride) {
  return {x, gamma, y, rows, cols, eps, x_stride, y_stride};
}
template <class In, class W, class Out>
NORMKIT_TABLE_NAMESPACE::layer_norm_args<In, W, Out> norm_args_of(layer_norm_op, const In* x, const W* gamma,
                                                                  const W* beta, Out* y, std::size_t rows,
                                                                  std::size_t cols, float eps,
                                                                  std::size_t x_stride,
                                                                  std::size_t y_stride) {
  return {x, gamma, beta, y, rows, cols, eps, x_stride, y_stride};
}

template <class Norm>
struct add_norm_op : norm_op {
  static constexpr bool composite = true;
  static constexpr bool has_beta = std::is_same<Norm, layer_norm_op>::value;
  static constexpr const char* name = has_beta ? "add_layer_norm" : "add_rms_norm";
  template <class Res, class W, class Out>
  using args = NORMKIT_TABLE_NAMESPACE::add_norm_args<Res, W, Out>;

  // What the norm reads: the stored residual (In = Res) or the fp32 sums (In = float).
  template <class Policy, class Res>
  static constexpr bool reads_sum =
      Policy::residual == residual_norm::fp32_sum && !std::is_same<Res, float>::value;

  // invalid_eps, invalid_stride, then the buffers: x, gamma and beta are inputs, residual and y
  // outputs (the residual is also read); y may be x exactly (FlashInfer writes the output over
  // the input), any other overlap -- y over the residual included -- is overlapping_output.
  template <class Res, class W, class Out>
  static status validate(const args<Res, W, Out>& a) {
    if (const status st = impl::check_norm_scalars(a.eps, a.cols, a.x_stride, a.y_stride); st != status::ok)
      return st;
    if (a.residual_stride < a.cols)
      return status::invalid_stride;
    if (empty(a))
      return status::ok;
    const impl::operand in[] = {impl::operand_of(a.x, a.rows, a.cols, a.x_stride),
                                impl::operand_of(a.gamma, 1, a.cols, a.cols, true),
                                impl::operand_of(a.beta, 1, a.cols, a.cols, true)};
    const impl::operand out[] = {impl::operand_of(a.residual, a.rows, a.cols, a.residual_stride),
                                 impl::operand_of(a.y, a.rows, a.cols, a.y_stride)};
    return impl::check_operands(in, out, {-1, 0});
  }

  // Composite interface (dispatch/run.hpp): the bytes of one row between the stages, the fp32
  // scratch a chunk needs, and the stages of rows [r0, r0 + n) -- run(op, policy, args) runs one
  // kernel op on its argument bundle.
  template <class Res, class W, class Out>
  static std::size_t row_bytes(const args<Res, W, Out>& a) {
    return a.cols * (sizeof(Res) + sizeof(float));
  }
  template <class Policy, class Res, class W, class Out>
  static std::size_t scratch_floats(const args<Res, W, Out>& a, std::size_t chunk_rows) {
    return reads_sum<Policy, Res> ? chunk_rows * a.cols : 0;
  }
  template <class Policy, class Res, class W, class Out, class Run>
  static void run_rows(const args<Res, W, Out>& a, std::size_t r0, std::size_t n, float* scratch, Run&& run) {
    const Res* const x = a.x + r0 * a.x_stride;
    Res* const res = a.residual + r0 * a.residual_stride;
    Out* const y = a.y + r0 * a.y_stride;
    float* const sum = reads_sum<Policy, Res> ? scratch : nullptr;
    run(residual_add_op{}, Policy{},
        NORMKIT_TABLE_NAMESPACE::residual_add_args<Res>{x, res, sum, n, a.cols, a.x_stride,
                                                        a.residual_stride});
    // The norm stage prefetches the next chunk's x and residual rows, which the next add reads.
    const rows_ahead ahead =
        next_chunk_ahead(r0, n, a.rows, a.cols, a.x, a.x_stride, a.residual, a.residual_stride);
    if constexpr (reads_sum<Policy, Res>) {
      auto na = norm_args_of(Norm{}, static_cast<const float*>(sum), a.gamma, a.beta, y, n, a.cols, a.eps,
                             a.cols, a.y_stride);
      na.ahead = ahead;
      run(Norm{}, Policy{}, na);
    } else {
      auto na = norm_args_of(Norm{}, static_cast<const Res*>(res), a.gamma, a.beta, y, n, a.cols, a.eps,
                             a.residual_stride, a.y_stride);
      na.ahead = ahead;
      run(Norm{}, Policy{}, na);
    }
  }

  // The bits: the same stages on the component references, one row at a time.
  template <class Policy, class Res, class W, class Out>
  static status reference(const args<Res, W, Out>& a) {
    return composite_reference<add_norm_op, Policy>(a);
  }
};

using add_rms_norm_op = add_norm_op<rms_norm_op>;
using add_layer_norm_op = add_norm_op<layer_norm_op>;

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
