// normkit: which ISA path runs.
//
// Static mode (default, pure header-only): the entry points use the best arch the including
// translation unit is compiled for (-mavx2 -mfma -mf16c / -march=x86-64-v3 -> AVX2,
// -march=x86-64-v4 -> AVX-512, AArch64 -> NEON, otherwise the scalar reference).
// Runtime mode (NORMKIT_RUNTIME_DISPATCH, set by the CMake function normkit_enable_dispatch()):
// per-ISA translation units are compiled with their own flags and the best ISA the CPU supports
// is picked once, capped by the environment variable NORMKIT_ISA=scalar|avx2|avx512|neon (read
// once; an unknown value is ignored) and by set_isa(). Every path returns the same bits, so the
// choice changes speed only.
#pragma once

#include <atomic>   // std::atomic
#include <cstdlib>  // std::getenv
#include <cstring>  // std::strcmp

#include "detail/abi.hpp"
#include "detail/cpu.hpp"
#include "status.hpp"

namespace normkit {

enum class isa { scalar = 0, avx2 = 1, avx512 = 2, neon = 3 };

inline namespace NORMKIT_ABI_NAMESPACE {
constexpr const char* to_string(isa i) noexcept {
  switch (i) {
    case isa::scalar:
      return "scalar";
    case isa::avx2:
      return "avx2";
    case isa::avx512:
      return "avx512";
    case isa::neon:
      return "neon";
  }
  return "unknown";
}

// Per-configuration internals (ABI-tagged by the inline namespace, see detail/abi.hpp).
namespace impl {

// The ISAs whose kernels this translation unit can reach.
inline bool compiled(isa i) {
  if (i == isa::scalar)
    return true;
#if defined(NORMKIT_RUNTIME_DISPATCH)
#if defined(__x86_64__) || defined(__i386__)
  return i == isa::avx2 || i == isa::avx512;
#elif defined(__aarch64__)
  return i == isa::neon;
#else
  return false;
#endif
#elif defined(NORMKIT_STATIC_AVX512)
  return i == isa::avx512;
#elif defined(NORMKIT_STATIC_AVX2)
  return i == isa::avx2;
#elif defined(NORMKIT_STATIC_NEON)
  return i == isa::neon;
#else
  return false;
#endif
}

inline bool runnable(isa i) {
  static const cpu_caps caps = detect_cpu();
  if (!compiled(i))
    return false;
  switch (i) {
    case isa::scalar:
      return true;
    case isa::avx2:
      return caps.avx2;
    case isa::avx512:
      return caps.avx512;
    case isa::neon:
      return caps.neon;
  }
  return false;
}

// The best runnable ISA not above `cap` (an ISA of another platform caps to the scalar path).
inline isa best_up_to(isa cap) {
  const isa order[] = {isa::avx512, isa::avx2, isa::neon};
  for (isa i : order) {
    const bool same_family = (i == isa::neon) == (cap == isa::neon);
    if (same_family && static_cast<int>(i) <= static_cast<int>(cap) && runnable(i))
      return i;
  }
  return isa::scalar;
}

inline bool parse_isa(const char* s, isa& out) {
  const isa all[] = {isa::scalar, isa::avx2, isa::avx512, isa::neon};
  for (isa i : all)
    if (s && std::strcmp(s, to_string(i)) == 0)
      return out = i, true;
  return false;
}

inline isa initial_isa() {
  isa cap = isa::avx512;
#if defined(__aarch64__)
  cap = isa::neon;
#endif
  isa env;
  if (parse_isa(std::getenv("NORMKIT_ISA"), env))
    cap = env;
  return best_up_to(cap);
}

inline std::atomic<int>& isa_state() {
  static std::atomic<int> state{static_cast<int>(initial_isa())};
  return state;
}

}  // namespace impl

// The ISA the entry points use now.
inline isa active_isa() {
  return static_cast<isa>(impl::isa_state().load(std::memory_order_relaxed));
}

// Whether `i` can run here: compiled into this configuration and supported by the CPU.
inline bool isa_available(isa i) {
  return impl::runnable(i);
}

// Caps the ISA (programmatic NORMKIT_ISA). Picks the best available ISA not above `i`; returns
// status::unsupported_isa when that is not `i` itself. Thread-safe; results never change, only
// speed.
inline status set_isa(isa i) {
  const isa chosen = impl::best_up_to(i);
  impl::isa_state().store(static_cast<int>(chosen), std::memory_order_relaxed);
  return chosen == i ? status::ok : status::unsupported_isa;
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
