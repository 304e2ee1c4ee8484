// normkit: from a validated call to the path that runs it (reference, static arch, or the
// runtime table). Knobs are canonicalized first so equal-bits policies share one kernel.
#pragma once

#include <cstddef>  // std::size_t

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

template <op_kind Op, class Policy, class In, class W, class Out>
void run(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows, std::size_t cols, float eps,
         std::size_t x_stride, std::size_t y_stride) {
#if defined(NORMKIT_RUNTIME_DISPATCH) || defined(NORMKIT_STATIC_SIMD)
  using Knobs = canonical_knobs<knobs_of<Policy>, In, W>;
#endif
#if defined(NORMKIT_RUNTIME_DISPATCH)
  if (const kernel_table* t = active_table())
    return lookup<Op, Knobs, In, W, Out>(*t)(x, gamma, beta, y, rows, cols, eps, x_stride, y_stride);
#elif defined(NORMKIT_STATIC_SIMD)
  if (active_isa() != isa::scalar) {
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
  if (const kernel_table* t = active_table())
    return t->convert[type_index<Src>][type_index<Dst>](src, dst, n);
#elif defined(NORMKIT_STATIC_SIMD)
  if (active_isa() != isa::scalar)
    return convert_n<static_arch>(src, dst, n);
#endif
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = from_float<Dst>(to_float(src[i]));
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
