// SPDX-License-Identifier: MIT
// normkit: what the CPU can run, asked once. cpuid plus XGETBV, so an OS that does not save
// AVX/AVX-512 state counts as lacking them (xsimd 8.1 skips that check). Also the size of the
// last-level cache it reports, which sets the streaming-store threshold (core/tuning.hpp).
#pragma once

#include <cstddef>  // std::size_t

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>  // __get_cpuid_count
#elif defined(__linux__)
#include <cstdio>  // std::fopen, std::fscanf, std::snprintf, std::fclose
#endif

#include "abi.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
// Per-configuration internals (ABI-tagged by the inline namespace, see core/abi.hpp).
namespace impl {

struct cpu_caps {
  bool avx2 = false;        // AVX2 + FMA + F16C, OS saves YMM state
  bool avx512 = false;      // AVX-512 F/BW/DQ/CD/VL + the above, OS saves ZMM state
  bool avx512bf16 = false;  // AVX512-BF16 (vcvtne2ps2bf16) + the above
  bool avx512fp16 = false;  // AVX512-FP16 (vmulph) + the above
  bool neon = false;        // AArch64 Advanced SIMD (always present)
  // AVX-512 executed as two 256-bit halves (AMD Zen 4), where the automatic choice runs fp16
  // kernels on AVX2 (dispatch/preference.hpp).
  bool avx512_split = false;
};

// The CPU family of cpuid leaf 1's EAX: the base family, plus the extended family when the base
// is 0xf (Intel SDM vol. 2A, CPUID; AMD APM vol. 3, CPUID Fn0000_0001_EAX).
constexpr unsigned cpu_family(unsigned leaf1_eax) {
  const unsigned base = (leaf1_eax >> 8) & 0xfu;
  return base == 0xfu ? base + ((leaf1_eax >> 20) & 0xffu) : base;
}

// Whether an AVX-512 CPU executes 512-bit operations as two 256-bit halves: AMD family 19h, whose
// only AVX-512 members are the Zen 4 cores (Zen 3 has none; Zen 5 is family 1Ah, full width).
constexpr bool splits_avx512(bool amd, unsigned family, bool avx512) {
  return amd && family == 0x19u && avx512;
}

inline cpu_caps detect_cpu() {
  cpu_caps c;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, cx = 0, d = 0;
  if (!__get_cpuid_count(0, 0, &a, &b, &cx, &d))
    return c;
  const bool amd = b == 0x68747541u && d == 0x69746e65u && cx == 0x444d4163u;  // "AuthenticAMD"
  if (!__get_cpuid_count(1, 0, &a, &b, &cx, &d))
    return c;
  const unsigned family = cpu_family(a);
  const bool fma = cx & (1u << 12), osxsave = cx & (1u << 27), avx = cx & (1u << 28), f16c = cx & (1u << 29);
  if (!(osxsave && avx))
    return c;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool ymm_state = (xcr0_lo & 0x6u) == 0x6u;
  const bool zmm_state = (xcr0_lo & 0xe6u) == 0xe6u;
  if (!__get_cpuid_count(7, 0, &a, &b, &cx, &d))
    return c;
  const unsigned leaf7_max_sub = a;
  const bool fp16_arith = d & (1u << 23);  // leaf 7 sub-leaf 0, EDX bit 23: AVX512-FP16
  const bool avx2 = b & (1u << 5);
  const bool avx512 = (b & (1u << 16)) && (b & (1u << 17)) && (b & (1u << 28)) && (b & (1u << 30)) &&
                      (b & (1u << 31));  // F, DQ, CD, BW, VL
  c.avx2 = ymm_state && avx2 && fma && f16c;
  c.avx512 = c.avx2 && zmm_state && avx512;
  c.avx512_split = splits_avx512(amd, family, c.avx512);
  // Leaf 7 sub-leaf 1, EAX bit 5.
  if (c.avx512 && leaf7_max_sub >= 1 && __get_cpuid_count(7, 1, &a, &b, &cx, &d))
    c.avx512bf16 = a & (1u << 5);
  c.avx512fp16 = c.avx512bf16 && fp16_arith;
#elif defined(__aarch64__)
  c.neon = true;
#endif
  return c;
}

#if defined(__x86_64__) || defined(__i386__)
// One cache of cpuid's deterministic cache parameters: type 1 data, 2 instruction, 3 unified.
struct cpuid_cache {
  unsigned type, level, ways;
  std::size_t bytes;
};
// visit(c) for every cache of leaf 4 (Intel), or of 0x8000001D (AMD) when visit accepted none of
// leaf 4's (it returns whether it did): ways x partitions x line size x sets, each stored minus one.
template <class Visit>
void visit_cpuid_caches(Visit visit) {
  for (unsigned leaf : {4u, 0x8000001du}) {
    bool accepted = false;
    for (unsigned sub = 0; sub < 16; ++sub) {
      unsigned a = 0, b = 0, cx = 0, d = 0;
      if (!__get_cpuid_count(leaf, sub, &a, &b, &cx, &d) || (a & 0x1fu) == 0)
        break;  // leaf absent, or no more caches
      const unsigned ways = ((b >> 22) & 0x3ffu) + 1;
      const std::size_t partitions = ((b >> 12) & 0x3ffu) + 1, line = (b & 0xfffu) + 1,
                        sets = std::size_t(cx) + 1;
      accepted =
          visit(cpuid_cache{a & 0x1fu, (a >> 5) & 0x7u, ways, ways * partitions * line * sets}) || accepted;
    }
    if (accepted)
      return;
  }
}
#endif

// The largest data or unified cache the CPU reports, in bytes (the last level; shared or not), or
// 0 when it reports none. x86: cpuid's deterministic cache parameters (visit_cpuid_caches). Elsewhere on
// Linux: sysfs, as the kernel has it from the firmware. A VM reports what its hypervisor passes
// through, which may be the host's whole L3 (480 MiB on the Intel VM of docs/performance.md):
// hence the override (dispatch/streaming.hpp).
inline std::size_t last_level_cache_bytes() {
  std::size_t best = 0;
#if defined(__x86_64__) || defined(__i386__)
  visit_cpuid_caches([&](const cpuid_cache& c) {
    if (c.type == 2)
      return false;  // instruction cache
    best = c.bytes > best ? c.bytes : best;
    return true;
  });
#elif defined(__linux__)
  for (int i = 0; i < 16; ++i) {
    char path[80], type[32] = {}, unit = 0;
    unsigned long long size = 0;
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    std::FILE* f = std::fopen(path, "r");
    if (!f)
      break;
    const bool typed = std::fscanf(f, "%31s", type) == 1;
    std::fclose(f);
    if (!typed || type[0] == 'I')  // Instruction
      continue;
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = std::fopen(path, "r")))
      continue;
    const int got = std::fscanf(f, "%llu%c", &size, &unit);
    std::fclose(f);
    if (got >= 1) {
      const std::size_t bytes = static_cast<std::size_t>(size) << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0);
      best = bytes > best ? bytes : best;
    }
  }
#endif
  return best;
}

// The associativity of the level-1 data cache the CPU reports (cpuid, visit_cpuid_caches), or 0
// when it reports none; not asked outside x86, where nothing uses it yet
// (core/tuning.hpp, grad_group_rows_for).
inline unsigned l1_data_cache_ways() {
  unsigned ways = 0;
#if defined(__x86_64__) || defined(__i386__)
  visit_cpuid_caches([&](const cpuid_cache& c) {
    if (c.type != 1 || c.level != 1)
      return false;
    ways = c.ways;
    return true;
  });
#endif
  return ways;
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
