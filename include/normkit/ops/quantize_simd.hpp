// SPDX-License-Identifier: MIT
// normkit: the quantize op's SIMD rows -- the reference's arithmetic (ops/quantize.hpp) one
// register at a time. The per-row and per-block scales are computed by the reference's own
// scalar functions (dynamic_scale, q8_0_scale_of) from max |v| bits found in registers; the
// conversions are integer operations on the bits, or roundings whose mode is in the instruction,
// so neither the FP environment nor a NaN operand order can change a bit, and no conversion
// raises a flag the reference does not (no NaN reaches a float -> int conversion or an ordered
// compare, and no out-of-range value a conversion that would flag it: int8_saturable).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int8_t, std::int32_t, std::uint8_t, std::uint32_t
#include <type_traits>  // std::is_same, std::conditional_t

#include "../core/abi.hpp"
#include "../core/fp8.hpp"
#include "../core/math.hpp"
#include "../core/op.hpp"
#include "../simd/chunk.hpp"
#include "../simd/diagnostics.hpp"
#include "../simd/io.hpp"
#include "../simd/rows.hpp"
#include "../simd/xsimd_compat.hpp"
#include "quantize.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// bits' tables (AVX-512: simd/arch_x86.hpp, lane_tables), one entry per binade 2^E of the fp8
// format F, from its smallest normal's (E = 1 - bias: subnormal results too) to its largest, at
// index (E + 127) mod entries (the lookups read the index's low bits). magic(E) = 2^(E + 23 - m):
// a float of that size has a unit in the last place of 2^(E - m), F's spacing in the binade, so
// c + magic (c < 2^(E + 1), rounded to nearest even) is magic plus the units RNE(c / 2^(E - m)),
// in its low bits -- the formula's r, carry into the next binade included. offset(E) = magic's
// bits minus the pattern of the binade's first value ((E - 1 + bias) << m), so the sum's bits
// minus offset(E) are the result's pattern.
template <class F>
struct binade_tables {
  static constexpr int m = static_cast<int>(F::man_bits), e_min = 1 - static_cast<int>(F::bias),
                       e_max = static_cast<int>((F::max_float_bits >> 23) - 127u);
  static constexpr std::size_t entries = e_max - e_min < 16 ? 16 : 32;
  static_assert(e_max - e_min < 32, "one lookup of 32 lanes at most");
  struct table {
    alignas(64) std::int32_t v[entries];
  };
  static constexpr table make(bool magic_bits) {
    table t{};
    for (int e = e_min; e <= e_max; ++e) {
      const std::int32_t big = (e + 127 + 23 - m) << 23;
      t.v[static_cast<std::size_t>(e + 127) % entries] = magic_bits ? big : big - ((e - e_min) << m);
    }
    return t;
  }
  static constexpr table magic = make(true), offset = make(false);
};

template <class Arch, class Q>
struct quant_simd {
  using B = xsimd::batch<float, Arch>;
  using I = xsimd::batch<std::int32_t, Arch>;
  using U = xsimd::batch<std::uint32_t, Arch>;
  static constexpr std::size_t W = B::size;

  // |v| bits (magnitude_bits): signed compares suffice, they are below 2^31.
  static U magnitude(B v) { return bitwise_as<U>(v) & U(0x7fffffffu); }

  // int8_from_float(p) for p without NaN, as int32 lanes for a saturating narrowing (store,
  // arch_impl::zip2_s8): RNE of p clamped to [-128, 127] (the bounds are integers, so clamping
  // before rounding gives the same value). The narrowing does the lower clamp unless the
  // conversion would raise the invalid flag below -2^31.
  static I int8_saturable(B p) {
    p = xsimd::min(p, B(127.0f));  // 2^31 and above would convert to INT_MIN
    if constexpr (!arch_impl::int_even_quiet<Arch>)
      p = xsimd::max(p, B(-128.0f));
    return arch_impl::int_even<Arch>(p);
  }

  // quantized_bits<Q>(p) for store: fp8 patterns in the low byte of each lane (U), int8 int32
  // lanes that saturate to it (I). Finite: p holds no NaN (the norms' clean rows, simd/rows.hpp),
  // so no NaN select.
  template <bool Finite = false>
  static auto bits(B p) {
    if constexpr (std::is_same<Q, std::int8_t>::value) {
      if constexpr (Finite)
        return int8_saturable(p);
      else  // int8_from_float: NaN -> 0
        return int8_saturable(xsimd::select(xsimd::isnan(p), B(0.0f), p));
    } else {
      using F = std::conditional_t<std::is_same<Q, e4m3>::value, e4m3_format, e5m2_format>;
      constexpr int m = static_cast<int>(F::man_bits);
      constexpr std::int32_t max_bits = static_cast<std::int32_t>(F::max_float_bits),
                             min_normal = static_cast<std::int32_t>(F::min_normal_float_bits);
      // The magnitude's pattern: NaN lanes hold anything (selected below).
      auto magnitude_bits = [&]() -> I {
        if constexpr (arch_impl::lane_tables<Arch>::available) {
          // By table (binade_tables): c = min(|p|, max), e its exponent field (the smallest
          // normal's at least), then c + magic(e) rounded once on the result's grid.
          using T = arch_impl::lane_tables<Arch>;
          using tables = binade_tables<F>;
          const B c = T::min_magnitude(p, bitwise_as<B>(I(max_bits)));
          const I e = xsimd::max(bitwise_as<I>(c), I(min_normal)) >> 23;
          const I magic = T::lookup(tables::magic.v, e), offset = T::lookup(tables::offset.v, e);
          return bitwise_as<I>(T::add_even(c, bitwise_as<B>(magic))) - offset;
        } else {
          // Saturation first: max is representable, so |p| >= max (Inf, and NaN) rounds to it.
          const I c = xsimd::min(bitwise_as<I>(p) & I(0x7fffffff), I(max_bits));
          // One path for normal and subnormal results (fp8_round_magnitude's two): with E the
          // exponent of the result's binade, at least the smallest normal's (1 - bias), the result
          // is r units of 2^(E - m), r = RNE(|p| * 2^(m - E)) in [0, 2^(m+1)] (2^(m+1): a carry
          // into the next binade), and its pattern is ((E - 1 + bias) << m) + r. t holds E + 127
          // in the exponent field, 2^(m - E) is (254 + m) << 23 minus t, the product is exact (a
          // power of two, the result normal or zero), and the rounding mode is the instruction's,
          // not MXCSR's.
          const I t = xsimd::max(c & I(0x7f800000), I(min_normal));
          const B units = bitwise_as<B>(c) * bitwise_as<B>(I((254 + m) << 23) - t);
          return ((t - I(min_normal)) >> (23 - m)) + arch_impl::int_even<Arch>(units);
        }
      };
      const I signed_bits = magnitude_bits() | ((bitwise_as<I>(p) >> 24) & I(0x80));
      if constexpr (Finite)
        return bitwise_as<U>(signed_bits);
      return bitwise_as<U>(xsimd::select(xsimd::isnan(p), bitwise_as<B>(I(storage_traits<Q>::canonical_nan)),
                                         bitwise_as<B>(signed_bits)));
    }
  }

  // int8_round_away_bits(p) as int32 lanes for the saturating narrowing (store), as bits' int8.
  static I round_away(B p) {
    const I u = bitwise_as<I>(p);
    // |p| capped at 256 on the bits (NaN included: replaced below), so |r| <= 257 converts exactly
    // and the narrowing does both clamps.
    const B a = bitwise_as<B>(xsimd::min(u & I(0x7fffffff), I(0x43800000)));
    const B t = arch_impl::round_zero<Arch>(a);
    const B frac = a - t;  // exact
    B r = t + xsimd::select(frac >= B(0.5f), B(1.0f), B(0.0f));
    r = bitwise_as<B>(bitwise_as<I>(r) | (u & I(static_cast<std::int32_t>(0x80000000u))));
    return xsimd::to_int(xsimd::select(xsimd::isnan(p), B(0.0f), r));  // integral: truncation exact
  }

  // One byte per lane: U lanes hold it in their low byte, I lanes saturate to it (bits).
  template <class T>
  static void store(T* p, U b) {
    arch_impl::pack_u8<Arch>(reinterpret_cast<std::uint8_t*>(p), b);
  }
  template <class T>
  static void store(T* p, I b) {
    arch_impl::pack_s8<Arch>(reinterpret_cast<std::int8_t*>(p), b);
  }
  template <class T, class L>
  static void store_partial(T* p, L b, std::size_t n) {
    T buf[W];
    store(buf, b);
    copy_short<W>(reinterpret_cast<std::uint8_t*>(p), reinterpret_cast<const std::uint8_t*>(buf), n);
  }

  static std::uint32_t lanes_max(U m) { return arch_impl::hmax_u32<Arch>(m); }

  // max |v| bits of a row (zero padding changes nothing).
  static std::uint32_t row_max(const float* v, std::size_t n) {
    U m0(0u), m1(0u);
    std::size_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
      m0 = xsimd::max(m0, magnitude(B::load_unaligned(v + i)));
      m1 = xsimd::max(m1, magnitude(B::load_unaligned(v + i + W)));
    }
    for (; i + W <= n; i += W)
      m0 = xsimd::max(m0, magnitude(B::load_unaligned(v + i)));
    if (i < n)
      m1 = xsimd::max(m1, magnitude(load_partial<Arch>(v + i, n - i)));
    return lanes_max(xsimd::max(m0, m1));
  }

  // q_i = quantized_bits(v_i op c), op = * or /; returns max |v| bits when Amax.
  template <bool Divide, bool Amax>
  static std::uint32_t scaled_row(const float* v, Q* q, std::size_t n, float c, ahead_row<Arch> next = {}) {
    const B cb(c);
    U m(0u);
    auto one = [&](B x) {
      if constexpr (Amax)
        m = xsimd::max(m, magnitude(x));
      return bits(Divide ? arch_impl::div<Arch>(x, cb) : x * cb);
    };
    std::size_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
      next.prefetch(i, 2 * W);
      store(q + i, one(B::load_unaligned(v + i)));
      store(q + i + W, one(B::load_unaligned(v + i + W)));
    }
    for (; i + W <= n; i += W)
      store(q + i, one(B::load_unaligned(v + i)));
    if (i < n)
      store_partial(q + i, one(load_partial<Arch>(v + i, n - i)), n - i);
    return Amax ? lanes_max(m) : 0u;
  }

  // Blocks in groups: the maxima, then the scales (W blocks per register), then the values, so
  // that the scale arithmetic (two divisions and the fp16 rounding per block) is not a scalar
  // chain between each block's loads and stores.
  static void q8_0_row(const float* v, block_q8_0* out, std::size_t n, ahead_row<Arch> next = {}) {
    constexpr std::size_t K = block_q8_0::size / W;  // registers per block
    static_assert(K * W == block_q8_0::size, "a block is whole registers");
    constexpr std::size_t G = 64;  // blocks per group
    const std::size_t blocks = n / block_q8_0::size;
    for (std::size_t b0 = 0; b0 < blocks; b0 += G) {
      const std::size_t nb = blocks - b0 < G ? blocks - b0 : G;
      alignas(64) std::uint32_t amax[G];
      alignas(64) float id[G];
      alignas(64) std::uint16_t d16[G];
      for (std::size_t b = 0; b < nb; ++b) {
        const float* x = v + (b0 + b) * block_q8_0::size;
        U m(0u);
        for (std::size_t k = 0; k < K; ++k)
          m = xsimd::max(m, magnitude(B::load_unaligned(x + k * W)));
        amax[b] = lanes_max(m);
      }
      // q8_0_scale_of, W blocks at a time: d = amax / 127, id = d != 0 ? 1 / d : 0, fp16(d) by
      // io<fp16> (equal to the scalar rounding for every non-NaN float: test_types). A NaN maximum
      // enters as 0 (id = 0, so every q is 0, as with the reference's NaN id) and its d is set to
      // the canonical NaN after. The last nb % W blocks take the scalar function itself.
      std::size_t j = 0;
      for (; j + W <= nb; j += W) {
        const I m = I::load_aligned(reinterpret_cast<const std::int32_t*>(amax + j));
        const B mf = bitwise_as<B>(m);  // a NaN maximum enters as 0 (float select: see bits)
        const B d = arch_impl::div<Arch>(xsimd::select(xsimd::isnan(mf), B(0.0f), mf), B(127.0f));
        xsimd::select(d != B(0.0f), arch_impl::div<Arch>(B(1.0f), d), B(0.0f)).store_aligned(id + j);
        io<fp16, Arch>::store(reinterpret_cast<fp16*>(d16 + j), d);
      }
      for (std::size_t k = 0; k < j; ++k)
        out[b0 + k].d.bits = amax[k] > f32_inf_bits ? storage_traits<fp16>::canonical_nan : d16[k];
      for (; j < nb; ++j) {
        const q8_0_scale sc = q8_0_scale_of(amax[j]);
        out[b0 + j].d.bits = sc.d;
        id[j] = sc.id;
      }
      for (std::size_t b = 0; b < nb; ++b) {
        const float* x = v + (b0 + b) * block_q8_0::size;
        next.prefetch((b0 + b) * block_q8_0::size, block_q8_0::size);
        const B ib(id[b]);
        for (std::size_t k = 0; k < K; ++k)
          store(out[b0 + b].qs + k * W, round_away(B::load_unaligned(x + k * W) * ib));
      }
    }
  }
};

template <>
struct simd_rows<quantize_op> {
  template <class Arch, class Knobs, class Q>
  static void rows(const quantize_op::args<Q>& a) {
    using S = quant_simd<Arch, Q>;
    std::uint32_t amax = 0;
    for (std::size_t r = 0; r < a.rows; ++r) {
      const float* v = a.v + r * a.v_stride;
      const auto next = ahead_row<Arch>::of(a.ahead, r);
      switch (a.mode) {
        case quant_mode::static_scale:
          if (a.amax)
            amax = max_of(
                amax, S::template scaled_row<false, true>(v, a.q + r * a.q_stride, a.cols, a.scale, next));
          else
            S::template scaled_row<false, false>(v, a.q + r * a.q_stride, a.cols, a.scale, next);
          break;
        case quant_mode::dynamic_row: {
          const float s = dynamic_scale<Q>(S::row_max(v, a.cols), a.scale);
          a.scales[r] = s;
          if constexpr (std::is_same<Q, std::int8_t>::value)
            S::template scaled_row<false, false>(v, a.q + r * a.q_stride, a.cols, 1.0f / s, next);
          else
            S::template scaled_row<true, false>(v, a.q + r * a.q_stride, a.cols, s, next);
          break;
        }
        case quant_mode::q8_0:
          if constexpr (std::is_same<Q, std::int8_t>::value)
            S::q8_0_row(v, a.blocks + r * a.q_stride, a.cols, next);
          break;
      }
    }
    if (a.mode == quant_mode::static_scale && a.amax)
      quantize_op::accumulate_amax(a.amax, amax);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
