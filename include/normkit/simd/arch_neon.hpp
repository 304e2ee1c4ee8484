// SPDX-License-Identifier: MIT
// normkit: the AArch64 NEON pieces xsimd 8.1 lacks -- 16-bit widen/pack and fp16 conversions.
// Templates on Arch, like arch_x86.hpp, so no symbol is shared with baseline code.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#if defined(__aarch64__)

#include <arm_neon.h>  // vshll_n_u16, vmovn_u32, vcvt_f32_f16, vcvt_f16_f32
#include <xsimd/xsimd.hpp>

#include <cstdint>  // std::int8_t, std::int32_t, std::uint8_t, std::uint16_t, std::uint32_t
#include <cstring>  // std::memcpy

#include "../core/abi.hpp"
#include "../core/storage.hpp"  // NORMKIT_ALWAYS_INLINE

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {
namespace neon {

template <class Arch>
xsimd::batch<std::uint32_t, Arch> widen_u16(const std::uint16_t* p) {
  return vmovl_u16(vld1_u16(p));
}

template <class Arch, bool Stream = false>
void pack_u16(std::uint16_t* p, xsimd::batch<std::uint32_t, Arch> v) {
  vst1_u16(p, vmovn_u32(v));
}

// Stream is accepted for the x86 signature: NEON has no non-temporal store worth having here.
template <class Arch, bool Stream = false>
void store_words(void* p, xsimd::batch<std::uint32_t, Arch> v) {
  vst1q_u32(static_cast<std::uint32_t*>(p), v);
}

template <class Arch, bool Stream = false>
void pack2_u16(std::uint16_t* p, xsimd::batch<std::uint32_t, Arch> a, xsimd::batch<std::uint32_t, Arch> b) {
  vst1q_u16(p, vcombine_u16(vmovn_u32(a), vmovn_u32(b)));
}

// u + 0x7fff + bit 16 of u (see arch_x86.hpp).
template <class Arch>
xsimd::batch<std::uint32_t, Arch> bf16_rne_carry(xsimd::batch<std::uint32_t, Arch> u) {
  const uint32x4_t even = vceqq_u32(vandq_u32(u, vdupq_n_u32(0x10000u)), vdupq_n_u32(0));
  return vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x8000u)), even);  // even lanes: + (2^32 - 1)
}

// fcvtl / fcvtn: exact widening (sNaN quieted), RNE narrowing with subnormals under the default
// FPCR (no FZ16); equal to the scalar conversions (test_types, run under qemu-aarch64).
template <class Arch>
xsimd::batch<float, Arch> fp16_load(const std::uint16_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

template <class Arch>
void fp16_store(std::uint16_t* p, xsimd::batch<float, Arch> v) {
  vst1_u16(p, vreinterpret_u16_f16(vcvt_f16_f32(v)));
}

template <class Arch, bool Stream = false>
void fp16_store2(std::uint16_t* p, xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
  vst1q_u16(p, vreinterpretq_u16_f16(vcombine_f16(vcvt_f16_f32(a), vcvt_f16_f32(b))));
}

template <class Arch>
xsimd::batch<float, Arch> fp16_round_trip(xsimd::batch<float, Arch> v) {
  return vcvt_f32_f16(vcvt_f16_f32(v));
}

// Fused multiply-add (fmla): named here like the other arithmetic the contract fixes.
template <class Arch>
xsimd::batch<float, Arch> fma(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b,
                              xsimd::batch<float, Arch> c) {
  return vfmaq_f32(c, a, b);
}

// IEEE division (fdiv): xsimd 8.1's NEON operator/ is a reciprocal estimate refined by
// Newton-Raphson, which is off by an ulp on some inputs (found by the cross-ISA corpus hash).
template <class Arch>
xsimd::batch<float, Arch> div(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
  return vdivq_f32(a, b);
}

// A chunk's 2W floats (a, b) in element order -> its even elements in a, its odd ones in b (the
// interleaved layout, simd/chunk.hpp), and back.
template <class Arch>
void unzip2(xsimd::batch<float, Arch>& a, xsimd::batch<float, Arch>& b) {
  const float32x4_t e = vuzp1q_f32(a, b), o = vuzp2q_f32(a, b);
  a = e;
  b = o;
}
template <class Arch>
void zip2(xsimd::batch<float, Arch>& a, xsimd::batch<float, Arch>& b) {
  const float32x4_t l = vzip1q_f32(a, b), h = vzip2q_f32(a, b);
  a = l;
  b = h;
}

// contract fold halves on one register's lanes: v[k] + v[k + 2], then lane 0 + lane 1.
template <class Arch>
float halve_sum(xsimd::batch<float, Arch> v) {
  const float32x2_t s2 = vadd_f32(vget_low_f32(v), vget_high_f32(v));
  return vget_lane_f32(s2, 0) + vget_lane_f32(s2, 1);
}

// IEEE square root (fsqrt): xsimd 8.1's NEON sqrt is a reciprocal-root estimate plus Newton steps.
template <class Arch>
xsimd::batch<float, Arch> sqrt(xsimd::batch<float, Arch> a) {
  return vsqrtq_f32(a);
}

// Rounding toward zero to an integral value with the mode in the instruction (frintz), not
// FPCR's (arch_x86.hpp).
template <class Arch>
xsimd::batch<float, Arch> round_zero(xsimd::batch<float, Arch> v) {
  return vrndq_f32(v);
}

// Float -> int32, rounding to nearest even by the instruction (fcvtns), not FPCR's mode. It
// saturates, but raises the invalid flag out of range, so it is not quiet (arch_x86.hpp).
template <class Arch>
constexpr bool int_even_quiet = false;
template <class Arch>
xsimd::batch<std::int32_t, Arch> int_even(xsimd::batch<float, Arch> v) {
  return vcvtnq_s32_f32(v);
}

// The largest u32 lane (umaxv).
template <class Arch>
std::uint32_t hmax_u32(xsimd::batch<std::uint32_t, Arch> v) {
  return vmaxvq_u32(v);
}

// u32 lanes (each <= 0xff) -> one byte each, in order.
template <class Arch>
void pack_u8(std::uint8_t* p, xsimd::batch<std::uint32_t, Arch> v) {
  const uint16x4_t h = vmovn_u32(v);
  const std::uint32_t w = vget_lane_u32(vreinterpret_u32_u8(vmovn_u16(vcombine_u16(h, h))), 0);
  std::memcpy(p, &w, sizeof w);
}

// Two batches of such lanes -> 2 * width bytes, a's then b's (Stream: as store_words).
template <class Arch, bool Stream = false>
void pack2_u8(std::uint8_t* p, xsimd::batch<std::uint32_t, Arch> a, xsimd::batch<std::uint32_t, Arch> b) {
  vst1_u8(p, vmovn_u16(vcombine_u16(vmovn_u32(a), vmovn_u32(b))));
}

// int32 lanes -> int8 with signed saturation (sqxtn): one batch, a's then b's, or a0 b0 a1 b1 ...
// (zip2_s8: arch_x86.hpp).
template <class Arch>
void pack_s8(std::int8_t* p, xsimd::batch<std::int32_t, Arch> v) {
  const int16x4_t h = vqmovn_s32(v);
  const std::uint32_t w = vget_lane_u32(vreinterpret_u32_s8(vqmovn_s16(vcombine_s16(h, h))), 0);
  std::memcpy(p, &w, sizeof w);
}
template <class Arch, bool Stream = false>
void pack2_s8(std::int8_t* p, xsimd::batch<std::int32_t, Arch> a, xsimd::batch<std::int32_t, Arch> b) {
  vst1_s8(p, vqmovn_s16(vcombine_s16(vqmovn_s32(a), vqmovn_s32(b))));
}
template <class Arch, bool Stream = false>
void zip2_s8(std::int8_t* p, xsimd::batch<std::int32_t, Arch> a, xsimd::batch<std::int32_t, Arch> b) {
  const int16x4_t ha = vqmovn_s32(a), hb = vqmovn_s32(b);
  vst1_s8(p, vqmovn_s16(vcombine_s16(vzip1_s16(ha, hb), vzip2_s16(ha, hb))));
}

template <class Arch>
void stream_f32(float* p, xsimd::batch<float, Arch> v) {
  v.store_aligned(p);  // no non-temporal hint worth having here
}

template <class Arch>
void store_fence() {}

// Into L2 (prfm pldl2keep), as on x86 (arch_x86.hpp): not measured on Arm hardware.
template <class Arch>
NORMKIT_ALWAYS_INLINE void prefetch(const void* p) {
  __builtin_prefetch(p, 0, 2);
}
// Into L1 for a store (prfm pstl1keep), as on x86: not measured on Arm hardware.
template <class Arch>
NORMKIT_ALWAYS_INLINE void prefetch_for_write(const void* p) {
  __builtin_prefetch(p, 1, 3);
}

// The AVX-512 table lookups of the fp8 conversions (arch_x86.hpp): none here, the formula serves.
template <class Arch>
struct lane_tables {
  static constexpr bool available = false;
};

}  // namespace neon
namespace arch_impl = neon;
}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#endif

#include "../core/fp_precise_end.hpp"
