// SPDX-License-Identifier: MIT
// normkit: what the CPU can run, asked once. cpuid plus XGETBV, so an OS that does not save
// AVX/AVX-512 state counts as lacking them (xsimd 8.1 skips that check).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>  // __get_cpuid_count
#endif

#include "abi.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
// Per-configuration internals (ABI-tagged by the inline namespace, see core/abi.hpp).
namespace impl {

struct cpu_caps {
  bool avx2 = false;    // AVX2 + FMA + F16C, OS saves YMM state
  bool avx512 = false;  // AVX-512 F/BW/DQ/CD/VL + the above, OS saves ZMM state
  bool neon = false;    // AArch64 Advanced SIMD (always present)
};

inline cpu_caps detect_cpu() {
  cpu_caps c;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, cx = 0, d = 0;
  if (!__get_cpuid_count(1, 0, &a, &b, &cx, &d))
    return c;
  const bool fma = cx & (1u << 12), osxsave = cx & (1u << 27), avx = cx & (1u << 28), f16c = cx & (1u << 29);
  if (!(osxsave && avx))
    return c;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool ymm_state = (xcr0_lo & 0x6u) == 0x6u;
  const bool zmm_state = (xcr0_lo & 0xe6u) == 0xe6u;
  if (!__get_cpuid_count(7, 0, &a, &b, &cx, &d))
    return c;
  const bool avx2 = b & (1u << 5);
  const bool avx512 = (b & (1u << 16)) && (b & (1u << 17)) && (b & (1u << 28)) && (b & (1u << 30)) &&
                      (b & (1u << 31));  // F, DQ, CD, BW, VL
  c.avx2 = ymm_state && avx2 && fma && f16c;
  c.avx512 = c.avx2 && zmm_state && avx512;
#elif defined(__aarch64__)
  c.neon = true;
#endif
  return c;
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
