// SPDX-License-Identifier: MIT
// normkit: the x86 pieces xsimd 8.1 lacks -- 16-bit widen/pack and F16C conversions.
// One intrinsic per arch family (g++ 12 turns pure-xsimd 16-bit widening into stack round trips;
// docs/performance.md). Every function is a template on Arch: per-ISA
// translation units then never share a symbol with baseline code (core/abi.hpp).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)

#include <immintrin.h>  // _mm256_cvtepu16_epi32, _mm256_cvtph_ps, _mm512_cvtepi32_epi16, ...
#include <xsimd/xsimd.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int8_t, std::int32_t, std::uint8_t, std::uint16_t, std::uint32_t
#include <type_traits>  // std::is_base_of

#include "../core/abi.hpp"
#include "../core/storage.hpp"  // NORMKIT_ALWAYS_INLINE
#include "diagnostics.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {
namespace x86 {

template <class Arch>
constexpr bool is_avx512 = std::is_base_of<xsimd::avx512f, Arch>::value;
template <class Arch>
constexpr bool is_avx2 = std::is_base_of<xsimd::avx2, Arch>::value && !is_avx512<Arch>;

// u16 -> u32 zero extension of one batch worth of lanes (vpmovzxwd).
template <class Arch>
xsimd::batch<std::uint32_t, Arch> widen_u16(const std::uint16_t* p) {
  if constexpr (is_avx512<Arch>)
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  else
    return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// A chunk's 2W floats (a, b) in element order -> its even elements in a, its odd ones in b (the
// interleaved layout, simd/chunk.hpp), and back.
template <class Arch>
void unzip2(xsimd::batch<float, Arch>& a, xsimd::batch<float, Arch>& b) {
  if constexpr (is_avx512<Arch>) {
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0),
                  odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512 e = _mm512_permutex2var_ps(a, even, b), o = _mm512_permutex2var_ps(a, odd, b);
    a = e;
    b = o;
  } else {  // a0 a2 b0 b2 | a4 a6 b4 b6, then the pairs in order
    const __m256 e = _mm256_shuffle_ps(a, b, 0x88), o = _mm256_shuffle_ps(a, b, 0xdd);
    a = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8));
    b = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xd8));
  }
}
template <class Arch>
void zip2(xsimd::batch<float, Arch>& a, xsimd::batch<float, Arch>& b) {
  if constexpr (is_avx512<Arch>) {
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0),
                  hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
    const __m512 l = _mm512_permutex2var_ps(a, lo, b), h = _mm512_permutex2var_ps(a, hi, b);
    a = l;
    b = h;
  } else {  // a0 b0 a1 b1 | a4 b4 a5 b5 and a2 b2 a3 b3 | a6 b6 a7 b7, then the halves in order
    const __m256 l = _mm256_unpacklo_ps(a, b), h = _mm256_unpackhi_ps(a, b);
    a = _mm256_permute2f128_ps(l, h, 0x20);
    b = _mm256_permute2f128_ps(l, h, 0x31);
  }
}

// 32 and 16 bytes to p: non-temporal when Stream (p then aligned to them).
template <bool Stream>
void store32(void* p, __m256i v) {
  if constexpr (Stream)
    _mm256_stream_si256(static_cast<__m256i*>(p), v);
  else
    _mm256_storeu_si256(static_cast<__m256i*>(p), v);
}
template <bool Stream>
void store16(void* p, __m128i v) {
  if constexpr (Stream)
    _mm_stream_si128(static_cast<__m128i*>(p), v);
  else
    _mm_storeu_si128(static_cast<__m128i*>(p), v);
}

// AVX2: the 8 u32 lanes of v as 8 u16, saturating (packusdw of its two halves, in order).
template <class Arch>
__m128i narrow_u16(__m256i v) {
  return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

// AVX2: the 8 int32 lanes of v as 8 int16, saturating (packssdw).
template <class Arch>
__m128i narrow_s16(__m256i v) {
  return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

// u32 lanes (each <= 0xffff) -> u16 store (vpmovdw / packusdw).
// Stream: non-temporal, p aligned to the bytes stored.
template <class Arch, bool Stream = false>
void pack_u16(std::uint16_t* p, xsimd::batch<std::uint32_t, Arch> v) {
  if constexpr (is_avx512<Arch>) {
    store32<Stream>(p, _mm512_cvtepi32_epi16(v));
  } else {
    store16<Stream>(p, narrow_u16<Arch>(v));
  }
}

// One integer batch to p: non-temporal when Stream (p then aligned to the batch size).
template <class Arch, bool Stream = false>
void store_words(void* p, xsimd::batch<std::uint32_t, Arch> v) {
  if constexpr (is_avx512<Arch>) {
    if constexpr (Stream)
      _mm512_stream_si512(static_cast<__m512i*>(p), v);
    else
      _mm512_storeu_si512(p, v);
  } else {
    store32<Stream>(p, v);
  }
}

// Two batches of u32 lanes (each <= 0xffff) -> 2 * width u16 in order, one store (non-temporal
// when Stream: p then 64-byte aligned). AVX2's packusdw works per 128-bit lane; vpermq puts the
// quads back in order.
template <class Arch, bool Stream = false>
void pack2_u16(std::uint16_t* p, xsimd::batch<std::uint32_t, Arch> a, xsimd::batch<std::uint32_t, Arch> b) {
  if constexpr (is_avx512<Arch>) {
    store_words<Arch, Stream>(
        p, _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(a)), _mm512_cvtepi32_epi16(b), 1));
  } else {  // a0-3 b0-3 | a4-7 b4-7, then the quads in order
    store_words<Arch, Stream>(p, _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8));
  }
}

// u + 0x7fff + bit 16 of u: the bf16 round-to-nearest-even carry, before the >> 16. Written
// as u + 0x8000 - (bit 16 clear) with a compare, not a shift: vector shifts and shuffles share
// two ports on Zen, which the bf16 loops already saturate (widening, packing).
template <class Arch>
xsimd::batch<std::uint32_t, Arch> bf16_rne_carry(xsimd::batch<std::uint32_t, Arch> u) {
  if constexpr (is_avx512<Arch>) {
    const __m512i r = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));
    return _mm512_mask_add_epi32(r, _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000)), r,
                                 _mm512_set1_epi32(1));
  } else {
    const __m256i even =
        _mm256_cmpeq_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x10000)), _mm256_setzero_si256());
    return _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x8000)), even);  // even lanes: -1
  }
}

#if defined(NORMKIT_HW_BF16)
// AVX512-BF16 (the avx512bf16 ISA only: core/isa_table.hpp). vcvtneps2bf16 rounds to nearest even
// whatever MXCSR says and turns NaN into (u >> 16) | 0x40, as bf16_from_float_bits does, but reads
// a subnormal input as zero: callers take the integer path for a batch that holds one (every
// float pattern is checked per ISA by test_types' exhaustive test, through convert).
// vfpclassps immediates: the classes a lane must avoid for the instruction's result to be the
// emulation's. Subnormals always; NaN too where the caller wants the canonical NaN, which the
// instruction does not give.
constexpr int fpclass_denormal = 0x20;
constexpr int fpclass_nan = 0x81;  // quiet | signalling
template <class Arch, int Avoid = fpclass_denormal>
bool bf16_hw_exact(xsimd::batch<float, Arch> v) {
  static_assert(is_avx512<Arch>, "AVX512-BF16 is an AVX-512 extension");
  return _mm512_fpclass_ps_mask(v, Avoid) == 0;
}
template <class Arch, int Avoid = fpclass_denormal>
bool bf16_hw_exact(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
  static_assert(is_avx512<Arch>, "AVX512-BF16 is an AVX-512 extension");
  // kortestw: with `|` on the masks g++ 12 moved both to integer registers to test them.
  return _kortestz_mask16_u8(_mm512_fpclass_ps_mask(a, Avoid), _mm512_fpclass_ps_mask(b, Avoid));
}
template <class Arch>
void bf16_hw_store(std::uint16_t* p, xsimd::batch<float, Arch> v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
}
// a's lanes then b's, one 64-byte store (non-temporal when Stream: p then 64-byte aligned).
template <class Arch, bool Stream = false>
void bf16_hw_store2(std::uint16_t* p, xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
  store_words<Arch, Stream>(
      p, xsimd::batch<std::uint32_t, Arch>(reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(b, a))));
}
// The interleaved chunk (simd/chunk.hpp: a the even elements, b the odd ones) in element order:
// the instruction gives a's lanes then b's, and one word permute (vpermw) interleaves them.
template <class Arch, bool Stream = false>
void bf16_hw_store2_interleaved(std::uint16_t* p, xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
  const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                                       22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  store_words<Arch, Stream>(p, xsimd::batch<std::uint32_t, Arch>(_mm512_permutexvar_epi16(
                                   idx, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(b, a)))));
}
#endif

// fp16 -> float (vcvtph2ps): exact, sNaN quieted -- proven equal to the scalar widening over
// all 65,536 patterns by test_types.
template <class Arch>
xsimd::batch<float, Arch> fp16_load(const std::uint16_t* p) {
  if constexpr (is_avx512<Arch>)
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  else
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// float -> fp16 (vcvtps2ph) with an explicit round-to-nearest-even immediate: the
// _MM_FROUND_CUR_DIRECTION form follows MXCSR (docs/fp-environment.md). Subnormals kept, F16C ignores
// FTZ/DAZ; equal to the scalar narrowing over all 2^32 inputs (test_types, exhaustive label).
template <class Arch>
void fp16_store(std::uint16_t* p, xsimd::batch<float, Arch> v) {
  if constexpr (is_avx512<Arch>)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  else
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// f(fp16(v)) in registers: the round-twice intermediate.
template <class Arch>
xsimd::batch<float, Arch> fp16_round_trip(xsimd::batch<float, Arch> v) {
  if constexpr (is_avx512<Arch>)
    return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  else
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Two batches -> 2 * width fp16 in order, one store (non-temporal when Stream, p 64-byte aligned).
template <class Arch, bool Stream = false>
void fp16_store2(std::uint16_t* p, xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
  constexpr int rne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  if constexpr (is_avx512<Arch>) {
    store_words<Arch, Stream>(
        p, _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtps_ph(a, rne)), _mm512_cvtps_ph(b, rne), 1));
  } else {
    store_words<Arch, Stream>(p, _mm256_set_m128i(_mm256_cvtps_ph(b, rne), _mm256_cvtps_ph(a, rne)));
  }
}

#if defined(NORMKIT_HW_FP16)
// AVX512-FP16 (the avx512fp16 ISA only: core/isa_table.hpp). fp16(a), fp16(b) (RNE, as
// fp16_store2), times 2 * width fp16 gains at g, rounded once by vmulph {rn-sae}, one store. The
// product of two fp16 values is exact in fp32, so this is the fp32 product narrowed to fp16: the
// same bits as round_through, the multiply and fp16_store2, for any finite a, b and g, subnormals
// included (vmulph honours neither FTZ nor DAZ) -- 5 vector instructions per 32 values where the
// fp32 route takes 11.
template <class Arch, bool Stream = false>
void fp16_mid_product_store2(std::uint16_t* p, xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b,
                             const std::uint16_t* g) {
  static_assert(is_avx512<Arch>, "AVX512-FP16 is an AVX-512 extension");
  constexpr int rne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m512i mid =
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtps_ph(a, rne)), _mm512_cvtps_ph(b, rne), 1);
  const __m512h y =
      _mm512_mul_round_ph(_mm512_castsi512_ph(mid), _mm512_castsi512_ph(_mm512_loadu_si512(g)), rne);
  store_words<Arch, Stream>(p, _mm512_castph_si512(y));
}
#endif

// Fused multiply-add (vfmadd). xsimd 8.1 has no AVX-512 fma kernel: its generic fallback is
// x * y + z, rounded twice, which g++ fuses back only when it optimizes (-O2, whose default for
// C++ is -ffp-contract=fast); clang, g++ -O1 and -ffp-contract=off gave other bits.
template <class Arch>
xsimd::batch<float, Arch> fma(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b,
                              xsimd::batch<float, Arch> c) {
  if constexpr (is_avx512<Arch>)
    return _mm512_fmadd_ps(a, b, c);
  else
    return _mm256_fmadd_ps(a, b, c);
}

// IEEE division (vdivps).
template <class Arch>
xsimd::batch<float, Arch> div(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
  return a / b;
}

// contract fold halves on one register's lanes: v[k] + v[k + w] for w = W/2, ..., 1, in
// registers (the stack round trip of an array fold cost more than a 128-column row's sums).
template <class Arch>
float halve_sum(xsimd::batch<float, Arch> v) {
  __m256 s8;
  if constexpr (is_avx512<Arch>)  // extract, not cast, the low half: g++ 12 -Wuninitialized
    s8 = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  else
    s8 = v;
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// IEEE square root (vsqrtps). Under clang in asm, as core/math.hpp's sqrt_f32: its command-line
// ninf/afn would turn the intrinsic into a reciprocal-root estimate.
template <class Arch>
xsimd::batch<float, Arch> sqrt(xsimd::batch<float, Arch> a) {
#if defined(__clang__)
  typename xsimd::batch<float, Arch>::register_type r = a;
  __asm__("vsqrtps {%1, %0|%0, %1}" : "=v"(r) : "v"(r));
  return r;
#else
  return xsimd::sqrt(a);
#endif
}

// Rounding toward zero to an integral value with the mode in the instruction (round /
// roundscale), not MXCSR's; no exception flag (Q8_0's round-away, ops/quantize_simd.hpp).
template <class Arch>
xsimd::batch<float, Arch> round_zero(xsimd::batch<float, Arch> v) {
  if constexpr (is_avx512<Arch>)
    return _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  else
    return _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}

// Float -> int32, rounding to nearest even by the instruction, not MXCSR (v within int32 range):
// AVX-512's embedded rounding converts in one instruction.
// int_even_quiet: an out-of-range v (below -2^31, say) gives INT_MIN without raising the invalid
// flag (SAE), so a caller may skip a clamp the saturating narrowings make redundant.
template <class Arch>
constexpr bool int_even_quiet = is_avx512<Arch>;
template <class Arch>
xsimd::batch<std::int32_t, Arch> int_even(xsimd::batch<float, Arch> v) {
  if constexpr (is_avx512<Arch>)
    return _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  else
    return _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// The largest u32 lane (the quantized ops' max |v| bits): in registers, no stack round trip.
template <class Arch>
std::uint32_t hmax_u32(xsimd::batch<std::uint32_t, Arch> v) {
  __m256i m8;
  if constexpr (is_avx512<Arch>)
    m8 = _mm256_max_epu32(_mm512_extracti64x4_epi64(v, 0), _mm512_extracti64x4_epi64(v, 1));
  else
    m8 = v;
  __m128i m4 = _mm_max_epu32(_mm256_castsi256_si128(m8), _mm256_extracti128_si256(m8, 1));
  m4 = _mm_max_epu32(m4, _mm_shuffle_epi32(m4, 0x4e));
  m4 = _mm_max_epu32(m4, _mm_shuffle_epi32(m4, 0xb1));
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(m4));
}

// u32 lanes (each <= 0xff) -> one byte each, in order (vpmovdb / packusdw + packuswb).
template <class Arch>
void pack_u8(std::uint8_t* p, xsimd::batch<std::uint32_t, Arch> v) {
  if constexpr (is_avx512<Arch>) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v));
  } else {
    const __m128i w = narrow_u16<Arch>(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(w, w));
  }
}
// Two batches of such lanes -> 2 * width bytes, a's then b's, in one store (non-temporal when
// Stream: p then aligned to them).
template <class Arch, bool Stream = false>
void pack2_u8(std::uint8_t* p, xsimd::batch<std::uint32_t, Arch> a, xsimd::batch<std::uint32_t, Arch> b) {
  if constexpr (is_avx512<Arch>) {
    store32<Stream>(p, _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(a)),
                                               _mm512_cvtepi32_epi8(b), 1));
  } else {
    store16<Stream>(p, _mm_packus_epi16(narrow_u16<Arch>(a), narrow_u16<Arch>(b)));
  }
}

// int32 lanes -> int8 with signed saturation (vpmovsdb / packssdw + packsswb): pack_s8 one batch,
// as pack_u8; for Stream as pack2_u8. pack2_s8: a's then b's. zip2_s8: a0 b0 a1 b1 ... (a chunk
// of interleaved inputs, simd/chunk.hpp): packssdw leaves each 128-bit lane as a's four words
// then b's, which one in-lane byte shuffle interleaves, so the words are in element order before
// the last narrowing.
template <class Arch>
void pack_s8(std::int8_t* p, xsimd::batch<std::int32_t, Arch> v) {
  if constexpr (is_avx512<Arch>) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtsepi32_epi8(v));
  } else {
    const __m128i w = narrow_s16<Arch>(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi16(w, w));
  }
}
template <class Arch, bool Stream = false>
void pack2_s8(std::int8_t* p, xsimd::batch<std::int32_t, Arch> a, xsimd::batch<std::int32_t, Arch> b) {
  if constexpr (is_avx512<Arch>) {
    store32<Stream>(p, _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtsepi32_epi8(a)),
                                               _mm512_cvtsepi32_epi8(b), 1));
  } else {
    store16<Stream>(p, _mm_packs_epi16(narrow_s16<Arch>(a), narrow_s16<Arch>(b)));
  }
}
template <class Arch, bool Stream = false>
void zip2_s8(std::int8_t* p, xsimd::batch<std::int32_t, Arch> a, xsimd::batch<std::int32_t, Arch> b) {
  const __m128i words = _mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
  if constexpr (is_avx512<Arch>) {
    const __m512i w = _mm512_shuffle_epi8(_mm512_packs_epi32(a, b), _mm512_broadcast_i32x4(words));
    store32<Stream>(p, _mm512_cvtsepi16_epi8(w));
  } else {
    const __m256i w = _mm256_shuffle_epi8(_mm256_packs_epi32(a, b), _mm256_broadcastsi128_si256(words));
    store16<Stream>(p, _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
  }
}

// Non-temporal store of one float batch (p aligned to the batch size).
template <class Arch>
void stream_f32(float* p, xsimd::batch<float, Arch> v) {
  if constexpr (is_avx512<Arch>)
    _mm512_stream_ps(p, v);
  else
    _mm256_stream_ps(p, v);
}

// Orders a call's non-temporal stores before whatever follows it: once per call, never per row.
template <class Arch>
void store_fence() {
  _mm_sfence();
}

// Into L2, not L1: a streamed row's x, gamma, beta and the next row's x can exceed L1, and T0
// evicted the lines the output pass was reading (docs/performance.md). Always inlined: as a call,
// g++ 12's mod/ref analysis found it free of side effects and deleted it, in the quantized kernels.
template <class Arch>
NORMKIT_ALWAYS_INLINE void prefetch(const void* p) {
  _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T1);
}
// Into L1, for a line about to be written: the store then finds it there (docs/performance.md,
// "Little per-row overhead").
template <class Arch>
NORMKIT_ALWAYS_INLINE void prefetch_for_write(const void* p) {
  _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0);
}

// What the fp8 conversions (ops/quantize_simd.hpp, bits) take per binade, on AVX-512: lanes of a
// 16- or 32-entry int32 table picked by an index's low bits (vpermd, vpermt2d), a float sum
// rounded to nearest even by the instruction, not MXCSR, raising no flag (SAE), and min(|v|, cap)
// with the sign cleared (vrangeps, SAE; a NaN v gives cap, the number of the pair). Under DAZ both
// read a subnormal operand as zero, which no fp8 rounding tells apart from it (it is below half
// the smallest fp8 subnormal). AVX2 has no such add, and its vpermd has 8 lanes: it keeps the
// formula.
template <class Arch, bool = is_avx512<Arch>>
struct lane_tables {
  static constexpr bool available = false;
};
template <class Arch>
struct lane_tables<Arch, true> {
  static constexpr bool available = true;
  using B = xsimd::batch<float, Arch>;
  using I = xsimd::batch<std::int32_t, Arch>;
  template <std::size_t N>
  static I lookup(const std::int32_t (&t)[N], I idx) {
    static_assert(N == 16 || N == 32, "one register, or two");
    if constexpr (N == 16)
      return _mm512_permutexvar_epi32(idx, _mm512_load_si512(t));
    else
      return _mm512_permutex2var_epi32(_mm512_load_si512(t), idx, _mm512_load_si512(t + 16));
  }
  static B add_even(B a, B b) {
    return _mm512_add_round_ps(a, b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static B min_magnitude(B v, B cap) {
    // imm8 0b1010: the minimum of the magnitudes, sign bit cleared.
    return _mm512_range_round_ps(v, cap, 0x0a, _MM_FROUND_NO_EXC);
  }
};

}  // namespace x86
namespace arch_impl = x86;
}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#endif

#include "../core/fp_precise_end.hpp"
