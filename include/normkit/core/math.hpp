// SPDX-License-Identifier: MIT
// normkit: the few math functions the kernels and the reference call, as normkit's own functions.
//
// libstdc++'s std::fma/sqrt/fabs/frexp/ldexp(float) and std::min/max are inline functions of
// namespace std: at -O0/-Og/-O1 a per-ISA translation unit emits them as weak symbols compiled
// with its -m flags, the linker keeps one copy for the whole program, and the baseline path may
// run the AVX2 one (core/abi.hpp; the isa_symbols and sigill tests). No namespace can tag
// std::, so the code calls these wrappers, which live in the ABI-tagged namespace. The builtins are what
// libstdc++'s own float overloads call, so the bits are those of std::fma etc.: correctly rounded fma and
// sqrt, exact fabs, frexp and ldexp.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#if !defined(__GNUC__)
#include <cmath>  // std::fma, std::sqrt, std::fabs, std::frexp, std::ldexp
#endif

#include "abi.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

#if defined(__GNUC__)
inline float fma_f32(float a, float b, float c) noexcept {
  return __builtin_fmaf(a, b, c);
}
#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
// clang 14 puts the command line's ninf and afn on every sqrt call, inside float_control(precise)
// too, and under -fno-honor-infinities -fapprox-func its x86 backend (generic tuning, e.g. -mavx2;
// not x86-64-v4) then computes sqrt as a reciprocal-root estimate and Newton steps: other bits.
// The instruction itself, in asm, is out of that rewrite's reach (test: corpus_clang_*).
inline float sqrt_f32(float a) noexcept {
  float r;
#if defined(__AVX__)
  __asm__("vsqrtss {%1, %1, %0|%0, %1, %1}" : "=x"(r) : "x"(a));
#else
  __asm__("sqrtss {%1, %0|%0, %1}" : "=x"(r) : "x"(a));
#endif
  return r;
}
#else
inline float sqrt_f32(float a) noexcept {
  return __builtin_sqrtf(a);
}
#endif
inline float fabs_f32(float a) noexcept {
  return __builtin_fabsf(a);
}
inline float frexp_f32(float a, int* e) noexcept {
  return __builtin_frexpf(a, e);
}
inline float ldexp_f32(float a, int e) noexcept {
  return __builtin_ldexpf(a, e);
}
#else
// Other compilers: the standard functions (MSVC's linker has no such per-TU ISA flags problem
// with the builds normkit supports).
inline float fma_f32(float a, float b, float c) noexcept {
  return std::fma(a, b, c);
}
inline float sqrt_f32(float a) noexcept {
  return std::sqrt(a);
}
inline float fabs_f32(float a) noexcept {
  return std::fabs(a);
}
inline float frexp_f32(float a, int* e) noexcept {
  return std::frexp(a, e);
}
inline float ldexp_f32(float a, int e) noexcept {
  return std::ldexp(a, e);
}
#endif

// std::min / std::max semantics (the first argument when the two compare equal), by value.
template <class T>
constexpr T min_of(T a, T b) noexcept {
  return b < a ? b : a;
}
template <class T>
constexpr T max_of(T a, T b) noexcept {
  return a < b ? b : a;
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
