// SPDX-License-Identifier: MIT
// normkit: how the kernels hold a chunk of 2 * width consecutive elements in two registers.
// The layout is fixed per kernel instantiation:
//   split        a = elements [0, W), b = elements [W, 2W)            every storage type
//   interleaved  a = the even elements, b = the odd ones              kernels whose In, W and
//                                                                     Out are all bf16
// In the interleaved layout a 32-bit word holds elements 2k and 2k+1, so widening is one shift
// (word << 16) or one mask (word & 0xffff0000) and narrowing one shift and one or: no
// zero-extending shuffle, no pack, no lane fix-up (vector shifts and shuffles share two ports on
// Zen and were the bf16 bottleneck). Elementwise arithmetic does not care which element a lane
// holds; the reduction does, and canonical_sum folds through position() (simd/rows.hpp).
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t
#include <cstring>      // std::memcpy, std::memset
#include <type_traits>  // std::is_same

#include "../core/abi.hpp"
#include "../core/op.hpp"  // interleaved_layout
#include "../core/storage.hpp"
#include "diagnostics.hpp"
#include "io.hpp"
#include "xsimd_compat.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// The chunk element that lane l of register r (0: a, 1: b) holds.
template <bool Interleaved>
constexpr std::size_t chunk_position(std::size_t width, std::size_t r, std::size_t l) {
  return Interleaved ? 2 * l + r : r * width + l;
}

template <class T, class Arch, bool Interleaved>
struct chunk_io;

template <class T, class Arch>
struct chunk_io<T, Arch, false> {
  using batch = xsimd::batch<float, Arch>;
  static constexpr std::size_t width = batch::size;
  static void load(const T* p, batch& a, batch& b) {
    a = io<T, Arch>::load(p);
    b = io<T, Arch>::load(p + width);
  }
  // Finite: the values hold no NaN (no canonicalizing select); otherwise NaN lanes are stored as the
  // canonical NaN. Stream: non-temporal, p 64-byte aligned.
  template <bool Finite, bool Stream>
  static void store(T* p, batch a, batch b) {
    if constexpr (Finite)
      io<T, Arch>::template store2_finite<Stream>(p, a, b);
    else
      io<T, Arch>::template store2_canonical<Stream>(p, a, b);
  }
};

template <class Arch>
struct chunk_io<bf16, Arch, true> {
  using batch = xsimd::batch<float, Arch>;
  using words = xsimd::batch<std::uint32_t, Arch>;
  static constexpr std::size_t width = batch::size;
  static void load(const bf16* p, batch& a, batch& b) {
    const words w = words::load_unaligned(reinterpret_cast<const std::uint32_t*>(p));
    a = bitwise_as<batch>(w << 16);
    b = bitwise_as<batch>(w & words(0xffff0000u));
  }
  template <bool Finite, bool Stream>
  static void store(bf16* p, batch a, batch b) {
    using bf = io<bf16, Arch>;
#if defined(NORMKIT_HW_BF16)  // the backward's kernels: the forward's interleaved ones are avx512's
    constexpr int avoid =
        Finite ? arch_impl::fpclass_denormal : arch_impl::fpclass_denormal | arch_impl::fpclass_nan;
    if (NORMKIT_EXPECT((arch_impl::bf16_hw_exact<Arch, avoid>(a, b)), 1))
      return arch_impl::bf16_hw_store2_interleaved<Arch, Stream>(reinterpret_cast<std::uint16_t*>(p), a, b);
#endif
    const words w = Finite ? bf::rne_bits(a) | bitwise_as<words>(bf::round_through_finite(b))
                           : bf::canonical_bits(a) | (bf::canonical_bits(b) << 16);
    arch_impl::store_words<Arch, Stream>(p, w);
  }
};

// Copies n <= N elements in fixed-size pieces (N, N/2, ..., 1). No library call, so a row's
// tail does not make the caller spill its vector registers (a memcpy call spilled all the
// accumulators of every row, tail or not).
template <std::size_t N, class T>
NORMKIT_ALWAYS_INLINE void copy_short(T* dst, const T* src, std::size_t n) {
  std::size_t off = 0;
#pragma GCC unroll 8
  for (std::size_t s = N; s >= 1; s /= 2)
    if (n & s) {
      std::memcpy(static_cast<void*>(dst + off), src + off, s * sizeof(T));
      off += s;
    }
}

// The first n < 2W elements of a chunk, zero-padded; reads exactly n elements.
template <class Arch, bool Interleaved, class T>
NORMKIT_ALWAYS_INLINE void load_chunk_partial(const T* p, std::size_t n, xsimd::batch<float, Arch>& a,
                                              xsimd::batch<float, Arch>& b) {
  constexpr std::size_t W2 = 2 * xsimd::batch<float, Arch>::size;
  T buf[W2];
  std::memset(static_cast<void*>(buf), 0, sizeof(buf));
  copy_short<W2>(buf, p, n);
  chunk_io<T, Arch, Interleaved>::load(buf, a, b);
}

// A chunk's 2W values as floats in element order (the rare paths that finish a chunk in scalar code).
template <class Arch, bool Interleaved>
void store_chunk(float* p, xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
  constexpr std::size_t W = xsimd::batch<float, Arch>::size;
  alignas(64) float r[2][W];
  a.store_aligned(r[0]);
  b.store_aligned(r[1]);
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t l = 0; l < W; ++l)
      p[chunk_position<Interleaved>(W, k, l)] = r[k][l];
}

// Lanes of register r that hold one of the first n elements of the chunk.
template <class Arch, bool Interleaved>
xsimd::batch_bool<float, Arch> chunk_lanes_below(std::size_t r, std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  struct table {
    alignas(64) float pos[2][batch::size];
    constexpr table() : pos{} {
      for (std::size_t r = 0; r < 2; ++r)
        for (std::size_t l = 0; l < batch::size; ++l)
          pos[r][l] = static_cast<float>(chunk_position<Interleaved>(batch::size, r, l));
    }
  };
  static constexpr table t{};
  return batch::load_aligned(t.pos[r]) < batch(static_cast<float>(n));
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
