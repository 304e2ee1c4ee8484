// SPDX-License-Identifier: MIT
// normkit: from a validated call to the path that runs it (reference, static arch, or the
// runtime table). Knobs are canonicalized first so equal-bits policies share one kernel.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cfenv>        // std::fegetround, FE_TONEAREST
#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_same

#include "../dispatch.hpp"
#include "../reference.hpp"
#include "table.hpp"

#if !defined(NORMKIT_RUNTIME_DISPATCH) && \
    (defined(NORMKIT_STATIC_AVX512) || defined(NORMKIT_STATIC_AVX2) || defined(NORMKIT_STATIC_NEON))
#define NORMKIT_STATIC_SIMD 1
#include "kernels.hpp"
#endif

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
// Per-configuration internals (ABI-tagged by the inline namespace, see detail/abi.hpp).
namespace impl {
using namespace ::normkit::detail;

#if defined(NORMKIT_STATIC_AVX512)
using static_arch = xsimd::avx512bw;
#elif defined(NORMKIT_STATIC_AVX2)
using static_arch = xsimd::fma3<xsimd::avx2>;
#elif defined(NORMKIT_STATIC_NEON)
using static_arch = xsimd::neon64;
#endif

#if defined(NORMKIT_RUNTIME_DISPATCH)
inline const kernel_table* active_table() {
  switch (active_isa()) {
#if defined(__x86_64__) || defined(__i386__)
    case isa::avx2:
      return &::normkit::NORMKIT_DISPATCH_AVX2_NAMESPACE::detail::isa_table();
    case isa::avx512:
      return &::normkit::NORMKIT_DISPATCH_AVX512_NAMESPACE::detail::isa_table();
#elif defined(__aarch64__)
    case isa::neon:
      return &::normkit::NORMKIT_DISPATCH_NEON_NAMESPACE::detail::isa_table();
#endif
    default:
      return nullptr;
  }
}
#endif

// contract (FP environment): the bits are defined in the default environment, yet every path
// gives the reference's bits in every rounding mode. NEON's fp16 narrowing (fcvtn) rounds in
// FPCR's mode where the reference rounds to nearest even (types.hpp; x86 passes vcvtps2ph an
// explicit RNE immediate), so a NEON call that narrows to fp16 runs the reference when the
// rounding mode is not to-nearest: one fegetround per call, on AArch64 and only for such calls.
template <class Knobs, class In, class W, class Out>
bool fp16_narrowing_needs_reference() {
#if defined(__aarch64__)
  constexpr bool narrows_fp16 =
      std::is_same<Out, fp16>::value ||
      (Knobs::round == rounding::twice && std::is_same<mid_of<Knobs, In, W>, fp16>::value);
  if constexpr (narrows_fp16)
    return std::fegetround() != FE_TONEAREST;
#endif
  return false;
}

template <op_kind Op, class Policy, class In, class W, class Out>
void run(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows, std::size_t cols, float eps,
         std::size_t x_stride, std::size_t y_stride) {
#if defined(NORMKIT_RUNTIME_DISPATCH) || defined(NORMKIT_STATIC_SIMD)
  using Knobs = canonical_knobs<knobs_of<Policy>, In, W>;
#endif
#if defined(NORMKIT_RUNTIME_DISPATCH)
  const kernel_table* t = active_table();
  if (t && !fp16_narrowing_needs_reference<Knobs, In, W, Out>())
    return lookup<Op, Knobs, In, W, Out>(*t)(x, gamma, beta, y, rows, cols, eps, x_stride, y_stride);
#elif defined(NORMKIT_STATIC_SIMD)
  if (active_isa() != isa::scalar && !fp16_narrowing_needs_reference<Knobs, In, W, Out>()) {
    constexpr op kind = Op == op_kind::rms_norm ? op::rms_norm : op::layer_norm;
    return norm_rows<static_arch, kind, Knobs, In, W, Out>(x, gamma, beta, y, rows, cols, eps, x_stride,
                                                           y_stride);
  }
#endif
  for (std::size_t r = 0; r < rows; ++r) {
    if constexpr (Op == op_kind::rms_norm)
      reference::rms_norm_row<Policy>(x + r * x_stride, gamma, y + r * y_stride, cols, eps);
    else
      reference::layer_norm_row<Policy>(x + r * x_stride, gamma, beta, y + r * y_stride, cols, eps);
  }
}

template <class Src, class Dst>
void run_convert(const Src* src, Dst* dst, std::size_t n) {
#if defined(NORMKIT_RUNTIME_DISPATCH)
  const kernel_table* t = active_table();
  if (t && !fp16_narrowing_needs_reference<knobs_of<round_once>, Src, Src, Dst>())
    return t->convert[type_index<Src>][type_index<Dst>](src, dst, n);
#elif defined(NORMKIT_STATIC_SIMD)
  if (active_isa() != isa::scalar && !fp16_narrowing_needs_reference<knobs_of<round_once>, Src, Src, Dst>())
    return convert_n<static_arch>(src, dst, n);
#endif
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = from_float<Dst>(to_float(src[i]));
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
