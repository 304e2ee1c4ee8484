// SPDX-License-Identifier: MIT
// normkit: the canonical reduction order, shared by the reference and every SIMD path.
//
// contract: csum(v) = 64 partial sums; term i goes to partial i mod 64 in increasing i; the row
// acts as if zero-padded to a multiple of 64; then fold halves, p[k] = p[k] + p[k + w] for
// w = 32, 16, ..., 1. A SIMD path keeps the 64 partials as 64 / lanes registers, so the same
// term lands in the same partial whatever the vector width.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "abi.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

constexpr std::size_t canonical_lanes = 64;  // K: fixed forever once golden data exists

// Scalar code instantiates helpers with this tag; SIMD code with its xsimd arch, so no per-ISA
// translation unit shares a symbol with baseline code (core/abi.hpp).
struct scalar_tag {};

// contract: for w = N/2 ... 1: p[k] = p[k] + p[k + w] for k < w; result p[0].
// SIMD paths fold the same pairs in registers (simd/rows.hpp, fold).
template <class Tag, std::size_t N>
float fold_halves(float* p) {
#pragma GCC unroll 8
  for (std::size_t w = N / 2; w >= 1; w /= 2)
#pragma GCC unroll 32
    for (std::size_t k = 0; k < w; ++k)
      p[k] = p[k] + p[k + w];
  return p[0];
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
