// SPDX-License-Identifier: MIT
// normkit: SIMD loads, stores and round trips of each storage type, bit-equal to the scalar
// conversions in types.hpp (test_types checks every 16-bit pattern and, under the exhaustive
// label, every float pattern, per ISA).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstdint>  // std::uint16_t, std::uint32_t

#include "../core/abi.hpp"
#include "../core/storage.hpp"
#include "arch_neon.hpp"
#include "arch_x86.hpp"
#include "diagnostics.hpp"
#include "xsimd_compat.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <class T, class Arch>
struct io;

// contract: NaN outputs are the canonical quiet NaN of the output type (x86 and Arm differ
// otherwise); float's narrows to bf16's and fp16's (storage_traits).
template <class Arch>
xsimd::batch<float, Arch> canonical_nan(xsimd::batch<float, Arch> v) {
  using batch = xsimd::batch<float, Arch>;
  return xsimd::select(
      xsimd::isnan(v),
      bitwise_as<batch>(xsimd::batch<std::uint32_t, Arch>(storage_traits<float>::canonical_nan)), v);
}

template <class Arch>
struct io<float, Arch> {
  using batch = xsimd::batch<float, Arch>;
  static batch load(const float* p) { return batch::load_unaligned(p); }
  static void store(float* p, batch v) { v.store_unaligned(p); }
  static batch round_through(batch v) { return v; }
  template <bool Stream = false>
  static void store2_canonical(float* p, batch a, batch b) {
    store2_finite<Stream>(p, canonical_nan<Arch>(a), canonical_nan<Arch>(b));
  }
  // For values known not to be NaN (the kernels' fast loop): no canonicalizing select. Stream:
  // non-temporal, p 64-byte aligned.
  static batch round_through_finite(batch v) { return v; }
  template <bool Stream>
  static void store2_finite(float* p, batch a, batch b) {
    if constexpr (Stream) {
      arch_impl::stream_f32<Arch>(p, a);
      arch_impl::stream_f32<Arch>(p + batch::size, b);
    } else {
      store(p, a);
      store(p + batch::size, b);
    }
  }
};

template <class Arch>
struct io<bf16, Arch> {
  using batch = xsimd::batch<float, Arch>;
  using ubatch = xsimd::batch<std::uint32_t, Arch>;

  // contract: to float is exact -- the bits move up 16 places.
  static batch load(const bf16* p) {
    return bitwise_as<batch>(arch_impl::widen_u16<Arch>(reinterpret_cast<const std::uint16_t*>(p)) << 16);
  }
  // Same integer RNE as bf16_from_float_bits: (u + 0x7fff + lsb) >> 16. Right for every
  // non-NaN input (Inf stays Inf, overflow rounds to Inf); NaN needs one of the selects below.
  static ubatch rne_bits(batch v) { return arch_impl::bf16_rne_carry<Arch>(bitwise_as<ubatch>(v)) >> 16; }
  // NaN -> (u >> 16) | 0x40, as the scalar conversion. NaN is tested in the float domain
  // (xsimd 8.1 emulates unsigned compares on AVX2).
  static ubatch bits(batch v) {
    const ubatch qnan = (bitwise_as<ubatch>(v) >> 16) | ubatch(0x40u);
    return bitwise_as<ubatch>(
        xsimd::select(xsimd::isnan(v), bitwise_as<batch>(qnan), bitwise_as<batch>(rne_bits(v))));
  }
  static void store(bf16* p, batch v) {
#if defined(NORMKIT_HW_BF16)
    if (arch_impl::bf16_hw_exact<Arch>(v))
      return arch_impl::bf16_hw_store<Arch>(reinterpret_cast<std::uint16_t*>(p), v);
#endif
    arch_impl::pack_u16<Arch>(reinterpret_cast<std::uint16_t*>(p), bits(v));
  }
  static batch round_through(batch v) {
    return bitwise_as<batch>(bits(v) << 16);
  }
  // The RNE bits with every NaN as the canonical 0x7FC0: one select instead of two.
  static ubatch canonical_bits(batch v) {
    return bitwise_as<ubatch>(xsimd::select(xsimd::isnan(v),
                                            bitwise_as<batch>(ubatch(storage_traits<bf16>::canonical_nan)),
                                            bitwise_as<batch>(rne_bits(v))));
  }
  static void store_canonical(bf16* p, batch v) {
    arch_impl::pack_u16<Arch>(reinterpret_cast<std::uint16_t*>(p), canonical_bits(v));
  }
  // AVX512-BF16: one check for NaN and subnormal lanes together, and the instruction's rounding
  // when there is neither (its NaN is not the canonical one).
  template <bool Stream = false>
  static void store2_canonical(bf16* p, batch a, batch b) {
#if defined(NORMKIT_HW_BF16)
    if (NORMKIT_EXPECT(
            (arch_impl::bf16_hw_exact<Arch, arch_impl::fpclass_denormal | arch_impl::fpclass_nan>(a, b)), 1))
      return arch_impl::bf16_hw_store2<Arch, Stream>(reinterpret_cast<std::uint16_t*>(p), a, b);
#endif
    arch_impl::pack2_u16<Arch, Stream>(reinterpret_cast<std::uint16_t*>(p), canonical_bits(a),
                                       canonical_bits(b));
  }
  // For values known not to be NaN: the RNE alone.
  static batch round_through_finite(batch v) {
    return bitwise_as<batch>(arch_impl::bf16_rne_carry<Arch>(bitwise_as<ubatch>(v)) & ubatch(0xffff0000u));
  }
  template <bool Stream>
  static void store2_finite(bf16* p, batch a, batch b) {
#if defined(NORMKIT_HW_BF16)
    if (NORMKIT_EXPECT(arch_impl::bf16_hw_exact<Arch>(a, b), 1))
      return arch_impl::bf16_hw_store2<Arch, Stream>(reinterpret_cast<std::uint16_t*>(p), a, b);
#endif
    arch_impl::pack2_u16<Arch, Stream>(reinterpret_cast<std::uint16_t*>(p), rne_bits(a), rne_bits(b));
  }
};

template <class Arch>
struct io<fp16, Arch> {
  using batch = xsimd::batch<float, Arch>;
  static batch load(const fp16* p) {
    return arch_impl::fp16_load<Arch>(reinterpret_cast<const std::uint16_t*>(p));
  }
  static void store(fp16* p, batch v) { arch_impl::fp16_store<Arch>(reinterpret_cast<std::uint16_t*>(p), v); }
  static batch round_through(batch v) { return arch_impl::fp16_round_trip<Arch>(v); }
  template <bool Stream = false>
  static void store2_canonical(fp16* p, batch a, batch b) {
    store2_finite<Stream>(p, canonical_nan<Arch>(a), canonical_nan<Arch>(b));
  }
  // F16C / fcvtn round every non-NaN value correctly; only NaN needs canonical_nan.
  static batch round_through_finite(batch v) { return round_through(v); }
  template <bool Stream>
  static void store2_finite(fp16* p, batch a, batch b) {
    arch_impl::fp16_store2<Arch, Stream>(reinterpret_cast<std::uint16_t*>(p), a, b);
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
