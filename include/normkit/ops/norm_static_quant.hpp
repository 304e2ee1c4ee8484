// SPDX-License-Identifier: MIT
// normkit: the statically scaled quantized norm as one kernel op -- the norm whose output pass
// quantizes what it would have stored: q_i = Q(v_i * scale), and *amax = max(*amax, max |v_i|)
// (in/out, as quantize_op's), v_i the fp32 value the policy would otherwise have rounded to Out.
// The quantized norms (ops/norm_quant.hpp) run it in place of their two stages -- the norm into a
// scratch, then the quantize op -- when the build holds its kernel; without one they run those
// stages, so a call's bits never depend on which ran: the reference here is the norm's row
// reference with that quantization as its output (core/scalar_rows.hpp, put), which is the staged
// references' arithmetic value for value.
//
// Kernels (dispatch/selection.hpp, has_kernel): In == W and Q e4m3 or int8 (the activation
// formats: Transformer Engine's recipes quantize forward activations to E4M3 and keep E5M2 for
// gradients), under the knob sets of the named presets (core/policy.hpp) -- 26 per norm op instead
// of the 228 of every In, W, Q and canonical knob set. Each costs about as much to compile as a
// plain norm kernel (docs/performance.md); the other combinations run the staged path's kernels,
// same bits.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t
#include <type_traits>  // std::conditional_t, std::is_same

#include "../core/abi.hpp"
#include "../core/ahead.hpp"
#include "../core/fp8.hpp"
#include "../core/op.hpp"
#include "../core/policy.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/type_list.hpp"
#include "../core/validate.hpp"
#include "layer_norm.hpp"
#include "quantize.hpp"
#include "rms_norm.hpp"

namespace normkit {

// The argument bundle (its namespace: ops/rms_norm.hpp). x: rows x cols, rows x_stride apart;
// gamma, beta: cols values or null (beta null for RMSNorm); q: rows x cols, rows q_stride apart;
// amax: null, or in/out.
namespace NORMKIT_TABLE_NAMESPACE {
template <class In, class W, class Q>
struct norm_static_quant_args {
  const In* x;
  const W* gamma;
  const W* beta;
  Q* q;
  float* amax;
  std::size_t rows, cols;
  float eps;
  std::size_t x_stride, q_stride;
  float scale;
  bool stream = false;    // streaming stores (core/op.hpp), set by the quantized norms (norm_quant.hpp)
  rows_ahead ahead = {};  // the fused add's next chunk, prefetched (core/ahead.hpp)
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace reference {

// A reference row's output (core/scalar_rows.hpp, put): v quantized, max |v| kept.
template <class Q>
struct static_quant_row {
  Q* q;
  float scale;
  std::uint32_t* amax;
  void put(std::size_t i, float v) {
    detail::store_quantized(q + i, detail::quantized_bits<Q>(v * scale));
    *amax = detail::max_of(*amax, detail::magnitude_bits(v));
  }
};

}  // namespace reference

namespace detail {

template <class Norm>
struct norm_static_quant_op {
  static constexpr bool has_beta = std::is_same<Norm, layer_norm_op>::value;
  static constexpr const char* name = has_beta ? "layer_norm_static_quant" : "rms_norm_static_quant";
  using slots = type_list<input_types, input_types, quant_types>;  // In, W, Q
  using knobs = norm_knobs;
  template <class In, class W, class Q>
  using args = NORMKIT_TABLE_NAMESPACE::norm_static_quant_args<In, W, Q>;
  template <class Knobs, class In, class W, class Q>
  using canonical = canonical_knobs<Knobs, In, W>;
  template <class Knobs, class In, class W, class Q>
  using narrows =
      std::conditional_t<Knobs::round == rounding::twice, type_list<Q, mid_of<Knobs, In, W>>, type_list<Q>>;
  // The kernels a build compiles (see the header comment); selection.hpp adds "named knobs only".
  template <class In, class W, class Q>
  static constexpr bool has_kernel = std::is_same<In, W>::value && !std::is_same<Q, e5m2>::value;

  // The quantized norms' checks (quant.hpp's order): invalid_eps, invalid_stride, invalid_scale,
  // then x, gamma, beta as inputs and q, amax as outputs.
  template <class In, class W, class Q>
  static status validate(const args<In, W, Q>& a) {
    if (const status st = impl::check_eps(a.eps); st != status::ok)
      return st;
    if (a.x_stride < a.cols || a.q_stride < a.cols)
      return status::invalid_stride;
    if (const status st = check_quant_scalars(quant_mode::static_scale, a.scale, a.cols); st != status::ok)
      return st;
    if (empty(a))
      return status::ok;
    const impl::operand in[] = {impl::operand_of(a.x, a.rows, a.cols, a.x_stride),
                                impl::operand_of(a.gamma, 1, a.cols, a.cols, true),
                                impl::operand_of(a.beta, 1, a.cols, a.cols, true)};
    const impl::operand out[] = {impl::operand_of(a.q, a.rows, a.cols, a.q_stride),
                                 impl::operand_of(a.amax, 1, 1, 1, true)};
    return impl::check_operands(in, out, {-1, -1});
  }
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }

  template <class Policy, class In, class W, class Q>
  static void reference(const args<In, W, Q>& a) {
    std::uint32_t m = 0;
    for (std::size_t r = 0; r < a.rows; ++r) {
      const normkit::reference::static_quant_row<Q> out{a.q + r * a.q_stride, a.scale, &m};
      if constexpr (has_beta)
        normkit::reference::layer_norm_row<Policy>(a.x + r * a.x_stride, a.gamma, a.beta, out, a.cols, a.eps);
      else
        normkit::reference::rms_norm_row<Policy>(a.x + r * a.x_stride, a.gamma, out, a.cols, a.eps);
    }
    if (a.amax)
      quantize_op::accumulate_amax(a.amax, m);
  }
};

using rms_norm_static_quant_op = norm_static_quant_op<rms_norm_op>;
using layer_norm_static_quant_op = norm_static_quant_op<layer_norm_op>;

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
