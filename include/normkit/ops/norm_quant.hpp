// SPDX-License-Identifier: MIT
// normkit: the quantized norms as composite ops (core/op.hpp) -- norm_quant_op<Norm> (the norm,
// then the quantize op) and add_norm_quant_op<Norm> (the residual add, the norm, then the
// quantize op). Per chunk of rows (dispatch/compose.hpp):
//   norm_quant       the norm with Out = float writes v, the fp32 value the policy would
//                    otherwise have rounded to its output type, into the scratch; the quantize
//                    op (ops/quantize.hpp) turns v into 8-bit outputs and scales
//   add_norm_quant   residual_add first (ops/residual_add.hpp: residual = Res(f(x) + f(residual)),
//                    and the fp32 sums into the scratch when the policy normalizes them), then the
//                    norm of what the policy reads (ops/add_norm.hpp, reads_sum) into the scratch,
//                    then the quantize op
// With a static scale both run the norm and the quantization as one kernel op instead, when the
// build holds its kernel (run.has_kernel): norm_static_quant_op (ops/norm_static_quant.hpp), whose
// output pass quantizes in registers -- for norm_quant the whole call, for add_norm_quant each
// chunk after its add. Its reference is the two stages' arithmetic, value for value.
// On inputs beyond L2 each quantize stage prefetches the next chunk's input rows (stage): the
// stages are compute-bound, and without it the next chunk's statistics waited on DRAM.
// So the bits are, by construction, those of the component references in sequence: the quantized
// norm (quant.hpp) of the stored residual, or of the fp32 sums under residual_norm::fp32_sum.
// The quantization has one output across rows, the static mode's amax: `begin` sets it to 0
// once per call (after the scratch is obtained), and each chunk's quantize stage accumulates its
// max into it; so these ops have no slice (no thread-pool entry point).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uintptr_t
#include <type_traits>  // std::is_same

#include "../core/abi.hpp"
#include "../core/ahead.hpp"
#include "../core/fp8.hpp"
#include "../core/op.hpp"
#include "../core/policy.hpp"
#include "../core/status.hpp"
#include "../core/tuning.hpp"
#include "../core/validate.hpp"
#include "add_norm.hpp"
#include "layer_norm.hpp"
#include "norm_static_quant.hpp"
#include "quantize.hpp"
#include "residual_add.hpp"
#include "rms_norm.hpp"

namespace normkit {

// The argument bundles (their namespace: ops/rms_norm.hpp). x (and the residual): rows x cols
// with their own row strides; gamma, beta: cols values or null (the RMSNorm ops have no beta);
// quant: the quantization's outputs and parameters (q / blocks / scales / amax, q_stride, scale,
// mode; its v, rows, cols and v_stride are each stage's, set per chunk).
namespace NORMKIT_TABLE_NAMESPACE {
template <class In, class W, class Q>
struct norm_quant_args {
  const In* x;
  const W* gamma;
  const W* beta;
  std::size_t rows, cols;
  float eps;
  std::size_t x_stride;
  quantize_args<Q> quant;
};
template <class Res, class W, class Q>
struct add_norm_quant_args {
  const Res* x;
  Res* residual;
  const W* gamma;
  const W* beta;
  std::size_t rows, cols;
  float eps;
  std::size_t x_stride, residual_stride;
  quantize_args<Q> quant;
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// What both quantized composites share: the quantization's checks, outputs, start and stage.
struct quant_outputs {
  // The columns of a quantized row: elements, or Q8_0 blocks.
  template <class Q>
  static std::size_t out_cols(const NORMKIT_TABLE_NAMESPACE::quantize_args<Q>& q, std::size_t cols) {
    return q.mode == quant_mode::q8_0 ? cols / block_q8_0::size : cols;
  }
  // The output operands: q or the blocks, the row scales (dynamic), amax (static, optional).
  template <class Q>
  static void operands(const NORMKIT_TABLE_NAMESPACE::quantize_args<Q>& q, std::size_t rows, std::size_t cols,
                       impl::operand* out) {
    const bool dynamic = q.mode == quant_mode::dynamic_row, stat = q.mode == quant_mode::static_scale;
    out[0] = q.mode == quant_mode::q8_0 ? impl::operand_of(q.blocks, rows, out_cols(q, cols), q.q_stride)
                                        : impl::operand_of(q.q, rows, cols, q.q_stride);
    out[1] = impl::operand_of(dynamic ? q.scales : static_cast<float*>(nullptr), rows, 1, 1, !dynamic);
    out[2] = impl::operand_of(stat ? q.amax : static_cast<float*>(nullptr), 1, 1, 1, true);
  }
  // The checks of both quantized composites, in quant.hpp's order: invalid_eps; invalid_stride
  // (x_stride or residual_stride < cols, q_stride < the quantized columns); invalid_scale,
  // invalid_block (check_quant_scalars); then the buffers: x, gamma, beta inputs; the residual
  // (the fused op's, read and written; an absent optional operand otherwise) and the quantized
  // outputs, each disjoint from every input and every other output.
  template <class A>
  static status check(const A& a, std::size_t residual_stride, const impl::operand& residual) {
    if (const status st = impl::check_eps(a.eps); st != status::ok)
      return st;
    if (a.x_stride < a.cols || residual_stride < a.cols || a.quant.q_stride < out_cols(a.quant, a.cols))
      return status::invalid_stride;
    if (const status st = check_quant_scalars(a.quant.mode, a.quant.scale, a.cols); st != status::ok)
      return st;
    if (a.rows == 0 || a.cols == 0)
      return check_empty(a.quant);
    const impl::operand in[] = {impl::operand_of(a.x, a.rows, a.cols, a.x_stride),
                                impl::operand_of(a.gamma, 1, a.cols, a.cols, true),
                                impl::operand_of(a.beta, 1, a.cols, a.cols, true)};
    impl::operand out[4];
    out[0] = residual;
    operands(a.quant, a.rows, a.cols, out + 1);
    return impl::check_operands(in, out, {-1, -1, -1, -1});
  }
  // An empty call checks none of its buffers (nothing is read) but still writes amax (begin): that
  // one float must be aligned. It may lie anywhere else: no other operand is touched.
  template <class Q>
  static status check_empty(const NORMKIT_TABLE_NAMESPACE::quantize_args<Q>& q) {
    if (q.mode == quant_mode::static_scale && q.amax &&
        reinterpret_cast<std::uintptr_t>(q.amax) % alignof(float) != 0)
      return status::misaligned_pointer;
    return status::ok;
  }
  // Once per valid call, empty or not: the static amax starts as the max over no value.
  template <class Q>
  static void begin(const NORMKIT_TABLE_NAMESPACE::quantize_args<Q>& q) {
    if (q.mode == quant_mode::static_scale && q.amax)
      *q.amax = 0.0f;
  }
  // The bytes of a whole call's q: the statically quantized kernel streams them when the call is
  // big enough (run.streams), chunk by chunk in add_norm_quant. Nothing else a quantized norm
  // writes streams (output_bytes): its scratch is reread at once, its residual by the next layer.
  template <class A>
  static std::size_t q_bytes(const A& a) {
    return a.rows * a.cols * sizeof(*a.quant.q);
  }
  // The statically quantized norm (one kernel op) of rows [r0, r0 + n) of x, rows x_stride apart.
  template <class In, class W, class Q>
  static NORMKIT_TABLE_NAMESPACE::norm_static_quant_args<In, W, Q> direct(
      const NORMKIT_TABLE_NAMESPACE::quantize_args<Q>& q, const In* x, const W* gamma, const W* beta,
      std::size_t r0, std::size_t n, std::size_t cols, float eps, std::size_t x_stride) {
    return {x, gamma, beta, q.q + r0 * q.q_stride, q.amax, n, cols, eps, x_stride, q.q_stride, q.scale};
  }
  // The quantize stage of rows [r0, r0 + n) of a call of `rows`, whose v are n rows of cols floats
  // at v. When the call's inputs are far (core/tuning.hpp, prefetches), the stage prefetches the
  // next chunk's rows of x (and of the residual: null when none) as it goes, so that the next
  // chunk's first stage finds them in L2 instead of waiting on memory after a compute-bound stage.
  template <class Q, class In>
  static NORMKIT_TABLE_NAMESPACE::quantize_args<Q> stage(const NORMKIT_TABLE_NAMESPACE::quantize_args<Q>& q,
                                                         std::size_t r0, std::size_t n, std::size_t rows,
                                                         std::size_t cols, const float* v, const In* x,
                                                         std::size_t x_stride, const In* residual = nullptr,
                                                         std::size_t residual_stride = 0) {
    NORMKIT_TABLE_NAMESPACE::quantize_args<Q> s = q;
    s.ahead = next_chunk_ahead(r0, n, rows, cols, x, x_stride, residual, residual_stride);
    s.v = v;
    s.rows = n;
    s.cols = cols;
    s.v_stride = cols;
    if (q.q)
      s.q = q.q + r0 * q.q_stride;
    if (q.blocks)
      s.blocks = q.blocks + r0 * q.q_stride;
    if (q.scales)
      s.scales = q.scales + r0;
    return s;
  }
};

// The quantized norm: Norm (rms_norm_op or layer_norm_op) with Out = float, then quantize_op.
template <class Norm>
struct norm_quant_op {
  static constexpr bool composite = true;
  static constexpr bool has_beta = std::is_same<Norm, layer_norm_op>::value;
  static constexpr const char* name = has_beta ? "layer_norm_quant" : "rms_norm_quant";
  template <class In, class W, class Q>
  using args = NORMKIT_TABLE_NAMESPACE::norm_quant_args<In, W, Q>;

  // quant.hpp's checks (quant_outputs::check), without a residual.
  template <class In, class W, class Q>
  static status validate(const args<In, W, Q>& a) {
    return quant_outputs::check(a, a.cols, impl::operand_of(static_cast<const In*>(nullptr), 0, 0, 0, true));
  }
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }
  template <class A>
  static void begin(const A& a) {
    quant_outputs::begin(a.quant);
  }
  // A static scale with the kernel in the build: the whole call as norm_static_quant_op.
  template <class Policy, class In, class W, class Q, class Run>
  static bool run_direct(const args<In, W, Q>& a, Run& run) {
    if (a.quant.mode != quant_mode::static_scale)
      return false;
    auto d = quant_outputs::direct(a.quant, a.x, a.gamma, a.beta, 0, a.rows, a.cols, a.eps, a.x_stride);
    d.stream = run.streams(quant_outputs::q_bytes(a));
    if (!run.has_kernel(norm_static_quant_op<Norm>{}, Policy{}, d))
      return false;
    begin(a);
    run(norm_static_quant_op<Norm>{}, Policy{}, d);
    return true;
  }
  // No stage output is streamed: the norm writes the cache-resident scratch, and the quantize
  // op stores plainly.
  template <class A>
  static std::size_t output_bytes(const A&) {
    return 0;
  }

  // Composite interface: the fp32 v of a chunk between the stages.
  template <class A>
  static std::size_t row_bytes(const A& a) {
    return a.cols * sizeof(float);
  }
  template <class Policy, class A>
  static std::size_t scratch_floats(const A& a, std::size_t chunk_rows) {
    return chunk_rows * a.cols;
  }
  template <class Policy, class In, class W, class Q, class Run>
  static void run_rows(const args<In, W, Q>& a, std::size_t r0, std::size_t n, float* v, Run&& run) {
    run(Norm{}, Policy{},
        norm_args_of(Norm{}, a.x + r0 * a.x_stride, a.gamma, a.beta, v, n, a.cols, a.eps, a.x_stride,
                     a.cols));
    run(quantize_op{}, round_once{},
        quant_outputs::stage(a.quant, r0, n, a.rows, a.cols, v, a.x, a.x_stride));
  }

  // The bits: the same stages on the component references, one row at a time.
  template <class Policy, class In, class W, class Q>
  static status reference(const args<In, W, Q>& a) {
    return composite_reference<norm_quant_op, Policy>(a);
  }
};

// The fused residual add + quantized norm: residual_add, Norm (Out = float) over the stored
// residual or the fp32 sums (add_norm_op's reads_sum), then quantize_op.
template <class Norm>
struct add_norm_quant_op {
  static constexpr bool composite = true;
  static constexpr bool has_beta = std::is_same<Norm, layer_norm_op>::value;
  static constexpr const char* name = has_beta ? "add_layer_norm_quant" : "add_rms_norm_quant";
  template <class Res, class W, class Q>
  using args = NORMKIT_TABLE_NAMESPACE::add_norm_quant_args<Res, W, Q>;
  template <class Policy, class Res>
  static constexpr bool reads_sum = add_norm_op<Norm>::template reads_sum<Policy, Res>;

  // Both parents' checks (quant_outputs::check), the residual read and written.
  template <class Res, class W, class Q>
  static status validate(const args<Res, W, Q>& a) {
    return quant_outputs::check(a, a.residual_stride,
                                impl::operand_of(a.residual, a.rows, a.cols, a.residual_stride));
  }
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }
  template <class A>
  static void begin(const A& a) {
    quant_outputs::begin(a.quant);
  }
  // Nothing streamed (norm_quant_op): the residual is re-read by the next layer, v is scratch.
  template <class A>
  static std::size_t output_bytes(const A&) {
    return 0;
  }

  // Composite interface: per row of a chunk, the residual the add writes and the fp32 v (plus
  // the fp32 sums under fp32_sum: scratch_floats counts them).
  template <class Res, class W, class Q>
  static std::size_t row_bytes(const args<Res, W, Q>& a) {
    return a.cols * (sizeof(Res) + sizeof(float));
  }
  template <class Policy, class Res, class W, class Q>
  static std::size_t scratch_floats(const args<Res, W, Q>& a, std::size_t chunk_rows) {
    return (reads_sum<Policy, Res> ? 2 : 1) * chunk_rows * a.cols;
  }
  template <class Policy, class Res, class W, class Q, class Run>
  static void run_rows(const args<Res, W, Q>& a, std::size_t r0, std::size_t n, float* scratch, Run&& run) {
    const Res* const x = a.x + r0 * a.x_stride;
    Res* const res = a.residual + r0 * a.residual_stride;
    float* const v = scratch;
    float* const sum = reads_sum<Policy, Res> ? scratch + n * a.cols : nullptr;
    run(residual_add_op{}, Policy{},
        NORMKIT_TABLE_NAMESPACE::residual_add_args<Res>{x, res, sum, n, a.cols, a.x_stride,
                                                        a.residual_stride});
    const auto norm_in = [&] {
      if constexpr (reads_sum<Policy, Res>)
        return static_cast<const float*>(sum);
      else
        return static_cast<const Res*>(res);
    }();
    const std::size_t in_stride = reads_sum<Policy, Res> ? a.cols : a.residual_stride;
    if (a.quant.mode == quant_mode::static_scale) {
      auto d = quant_outputs::direct(a.quant, norm_in, a.gamma, a.beta, r0, n, a.cols, a.eps, in_stride);
      d.stream = run.streams(quant_outputs::q_bytes(a));
      d.ahead = next_chunk_ahead(r0, n, a.rows, a.cols, a.x, a.x_stride, a.residual, a.residual_stride);
      if (run.has_kernel(norm_static_quant_op<Norm>{}, Policy{}, d))
        return run(norm_static_quant_op<Norm>{}, Policy{}, d);
    }
    run(Norm{}, Policy{},
        norm_args_of(Norm{}, norm_in, a.gamma, a.beta, v, n, a.cols, a.eps, in_stride, a.cols));
    run(quantize_op{}, round_once{},
        quant_outputs::stage(a.quant, r0, n, a.rows, a.cols, v, a.x, a.x_stride, a.residual,
                             a.residual_stride));
  }

  template <class Policy, class Res, class W, class Q>
  static status reference(const args<Res, W, Q>& a) {
    return composite_reference<add_norm_quant_op, Policy>(a);
  }
};

using rms_norm_quant_op = norm_quant_op<rms_norm_op>;
using layer_norm_quant_op = norm_quant_op<layer_norm_op>;
using add_rms_norm_quant_op = add_norm_quant_op<rms_norm_op>;
using add_layer_norm_quant_op = add_norm_quant_op<layer_norm_op>;

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
