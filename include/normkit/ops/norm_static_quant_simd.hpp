// SPDX-License-Identifier: MIT
// normkit: the statically quantized norms' SIMD rows -- the plain norms' rows (simd/rows.hpp,
// norm_rows with each op's statistics) with a sink that quantizes each chunk of v in registers
// (quantize_simd.hpp's conversions) instead of storing it: no fp32 scratch written and read back.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int8_t, std::uint8_t, std::uint32_t
#include <type_traits>  // std::conditional_t, std::is_same

#include "../core/abi.hpp"
#include "../core/op.hpp"
#include "../core/scalar_rows.hpp"
#include "../simd/chunk.hpp"
#include "../simd/diagnostics.hpp"
#include "../simd/rows.hpp"
#include "layer_norm_simd.hpp"
#include "norm_static_quant.hpp"
#include "quantize_simd.hpp"
#include "rms_norm_simd.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// The sink (simd/rows.hpp): q_i = Q(v_i * scale) per chunk, max |v| bits kept lane-wise per row
// (m, when there is an amax) and across rows (merge), added to *amax once at the end of the call.
// A chunk's 2W outputs leave in one store (non-temporal when the call streams). In the interleaved
// layout (bf16 x and gains: simd/chunk.hpp) a holds the even elements and b the odd ones, so a
// 16-bit word of a's byte and b's byte above it is two outputs in order.
template <class Arch, bool Interleaved, class Q>
struct static_quant_sink {
  using S = quant_simd<Arch, Q>;
  using B = typename S::B;
  using U = typename S::U;
  using out_type = Q;
  // The output pass takes twice the plain one's, so the test per chunk is cheap and the next row's
  // statistics need not wait on memory (core/tuning.hpp, prefetches).
  static constexpr bool interleaved = Interleaved, can_stream = true, prefetches_far_rows = true;
  static constexpr std::size_t W = B::size;
  Q* q;
  float* amax;
  float scale;
  U m;

  static_quant_sink at(std::size_t offset) const { return {q + offset, amax, scale, U(0u)}; }
  const void* address(std::size_t i) const { return q + i; }
  template <bool Finite, bool Stream>
  NORMKIT_ALWAYS_INLINE void store(std::size_t i, B a, B b) {
    if constexpr (Finite)
      put<Stream>(reinterpret_cast<std::uint8_t*>(q + i), a, b);
    else
      put_general(i, 2 * W, a, b);
  }
  NORMKIT_ALWAYS_INLINE void store_partial(std::size_t i, std::size_t n, B a, B b) {
    put_general(i, n, a, b);
  }
  // Every v is the canonical NaN, as the reference's row writes it.
  void fill_nan(std::size_t cols) {
    std::uint32_t mag = 0;
    normkit::reference::static_quant_row<Q> out{q, scale, &mag};
    impl::fill_nan_row(out, cols);
    m = xsimd::max(m, U(mag));
  }
  void merge(const static_quant_sink& row) { m = xsimd::max(m, row.m); }
  void finish() {
    if (amax)
      quantize_op::accumulate_amax(amax, S::lanes_max(m));
  }

 private:
  // Clean rows (simd/rows.hpp, write_row's fast loop): no NaN in a or b.
  template <bool Stream>
  NORMKIT_ALWAYS_INLINE void put(std::uint8_t* p, B a, B b) {
    if (amax)
      m = xsimd::max(m, xsimd::max(S::magnitude(a), S::magnitude(b)));
    const B sc(scale);
    const auto qa = S::template bits<true>(a * sc), qb = S::template bits<true>(b * sc);
    if constexpr (std::is_same<Q, std::int8_t>::value) {  // saturating narrowings: no byte masks
      auto* out = reinterpret_cast<std::int8_t*>(p);
      if constexpr (Interleaved)
        arch_impl::zip2_s8<Arch, Stream>(out, qa, qb);
      else
        arch_impl::pack2_s8<Arch, Stream>(out, qa, qb);
    } else {
      if constexpr (Interleaved)  // fp8 bits fill no more than the low byte
        arch_impl::pack_u16<Arch, Stream>(reinterpret_cast<std::uint16_t*>(p), qa | (qb << 8));
      else
        arch_impl::pack2_u8<Arch, Stream>(p, qa, qb);
    }
  }
  // Every other row (NaN or Inf gains, an Inf factor, a rescaled row) and every row's tail: the
  // chunk's first n values in element order through the reference's output (static_quant_row).
  // These rows are rare, and a second vector conversion per kernel cost as much to compile as the
  // first.
  void put_general(std::size_t i, std::size_t n, B a, B b) {
    alignas(64) float v[2 * W];
    store_chunk<Arch, Interleaved>(v, a, b);
    std::uint32_t mag = 0;
    normkit::reference::static_quant_row<Q> out{q + i, scale, &mag};
    for (std::size_t k = 0; k < n; ++k)
      out.put(k, v[k]);
    m = xsimd::max(m, U(mag));
  }
};

template <class Norm>
struct simd_rows<norm_static_quant_op<Norm>> {
  using Row =
      std::conditional_t<norm_static_quant_op<Norm>::has_beta, layer_norm_simd_row, rms_norm_simd_row>;
  template <class Arch, class Knobs, class In, class W, class Q>
  static void rows(const typename norm_static_quant_op<Norm>::template args<In, W, Q>& a) {
    using Sink = static_quant_sink<Arch, interleaved_inputs<In, W>, Q>;
    norm_rows<Arch, Row, Knobs>(a.x, a.gamma, a.beta, Sink{a.q, a.amax, a.scale, typename Sink::U(0u)},
                                a.rows, a.cols, a.eps, row_layout{1, a.x_stride, 0, a.q_stride, 0, 0},
                                a.stream, a.ahead);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
