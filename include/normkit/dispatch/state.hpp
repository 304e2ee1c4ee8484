// SPDX-License-Identifier: MIT
// normkit: which ISA path runs.
//
// Runtime mode (NORMKIT_RUNTIME_DISPATCH; the CMake target normkit::normkit defines it and links
// the per-ISA kernels): the best ISA the CPU supports is picked once. Static mode (the
// header-only target normkit::headers, or a plain include without the define): the entry points
// use the best arch the including translation unit is compiled for (-mavx2 -mfma -mf16c /
// -march=x86-64-v3 -> AVX2, -march=x86-64-v4 -> AVX-512, AArch64 -> NEON, otherwise the scalar
// reference, which abi.hpp warns about).
//
// Selection, one rule for both modes (each configuration of the library keeps its own state):
// - NORMKIT_ISA=scalar|avx2|avx512|avx512bf16|avx512fp16|neon (any case, once per process): the operator's
//   ceiling: the process starts on the best runnable ISA not above it, so asking for an ISA the
//   CPU lacks falls back to the best one below it and never crashes. An ISA of another platform
//   leaves the scalar path. Any other non-empty value is ignored (no ceiling), reported once on
//   stderr and by isa_environment_error().
// - set_isa(i) selects exactly i when i is runnable (isa_available) and not above the ceiling;
//   otherwise it returns unsupported_isa or isa_above_ceiling and changes nothing.
// - The automatic choice (NORMKIT_ISA unset, empty or ignored, and no set_isa yet; runtime mode)
//   may run some kernels on a narrower ISA where this CPU runs them faster (dispatch/preference.hpp);
//   an ISA named by NORMKIT_ISA or set_isa runs its own kernels.
// Every path returns the same bits, so the choice changes speed only.
#pragma once

#include <atomic>   // std::atomic
#include <cstddef>  // std::size_t
#include <cstdio>   // std::fprintf, std::snprintf
#include <cstdlib>  // std::getenv

#include "../core/abi.hpp"
#include "../core/cpu.hpp"
#include "../core/isa.hpp"
#include "../core/status.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

constexpr const char* to_string(isa i) noexcept {
#define NORMKIT_ISA_NAME(name, value, family, arch, cap, flags) \
  case isa::name:                                               \
    return #name;
  switch (i) {
    case isa::scalar:
      return "scalar";
      NORMKIT_ISA_TABLE(NORMKIT_ISA_NAME)
  }
#undef NORMKIT_ISA_NAME
  return "unknown";
}

// Per-configuration internals (ABI-tagged by the inline namespace, see core/abi.hpp).
namespace impl {

// The ISAs whose kernels this translation unit can reach: in runtime mode those of its family
// (the per-ISA objects of normkit::dispatch), in static mode the one its flags allow.
inline bool compiled(isa i) {
  if (i == isa::scalar)
    return true;
#define NORMKIT_ISA_COMPILED(name, value, family, arch, cap, flags) \
  if (i == isa::name)                                               \
    return NORMKIT_ISA_IN_THIS_BUILD(name, family);
#if defined(NORMKIT_RUNTIME_DISPATCH)
#define NORMKIT_ISA_IN_THIS_BUILD(name, family) ::normkit::detail::defined_family_##family
#elif defined(NORMKIT_STATIC_ISA)
#define NORMKIT_ISA_IN_THIS_BUILD(name, family) isa::name == isa::NORMKIT_STATIC_ISA
#else
#define NORMKIT_ISA_IN_THIS_BUILD(name, family) false
#endif
  NORMKIT_ISA_TABLE(NORMKIT_ISA_COMPILED)
#undef NORMKIT_ISA_IN_THIS_BUILD
#undef NORMKIT_ISA_COMPILED
  return false;
}

inline const cpu_caps& cpu() {
  static const cpu_caps caps = detect_cpu();
  return caps;
}

inline bool runnable(isa i) {
  const cpu_caps& caps = cpu();
  if (!compiled(i))
    return false;
#define NORMKIT_ISA_RUNNABLE(name, value, family, arch, cap, flags) \
  if (i == isa::name)                                               \
    return caps.cap;
  NORMKIT_ISA_TABLE(NORMKIT_ISA_RUNNABLE)
#undef NORMKIT_ISA_RUNNABLE
  return i == isa::scalar;
}

// The family of an ISA (core/isa.hpp), as an index; the scalar path is in every family.
inline int family_of(isa i) {
#define NORMKIT_ISA_FAMILY(name, value, family, arch, cap, flags) \
  if (i == isa::name)                                             \
    return ::normkit::detail::family_index_##family;
  NORMKIT_ISA_TABLE(NORMKIT_ISA_FAMILY)
#undef NORMKIT_ISA_FAMILY
  return -1;
}

// The best runnable ISA not above `cap` (an ISA of another platform caps to the scalar path).
// Not above `cap`: scalar always; otherwise the same family and not higher in the table.
inline bool not_above(isa i, isa cap) {
  return i == isa::scalar || (family_of(i) == family_of(cap) && static_cast<int>(i) <= static_cast<int>(cap));
}

inline isa best_up_to(isa cap) {
  isa best = isa::scalar;
#define NORMKIT_ISA_BEST(name, value, family, arch, cap_member, flags) \
  if (not_above(isa::name, cap) && runnable(isa::name))                \
    best = isa::name;
  NORMKIT_ISA_TABLE(NORMKIT_ISA_BEST)  // ascending within a family: the last runnable one wins
#undef NORMKIT_ISA_BEST
  return best;
}

// ASCII case-insensitive match of the whole string: NORMKIT_ISA=AVX2 means avx2.
inline bool parse_isa(const char* s, isa& out) {
#define NORMKIT_ISA_VALUE(name, value, family, arch, cap, flags) isa::name,
  const isa all[] = {isa::scalar, NORMKIT_ISA_TABLE(NORMKIT_ISA_VALUE)};
#undef NORMKIT_ISA_VALUE
  for (isa i : all) {
    const char* name = to_string(i);
    std::size_t k = 0;
    while (s[k] != '\0' && name[k] != '\0' &&
           (s[k] == name[k] || (s[k] >= 'A' && s[k] <= 'Z' && s[k] - 'A' + 'a' == name[k])))
      ++k;
    if (s[k] == '\0' && name[k] == '\0')
      return out = i, true;
  }
  return false;
}

// The highest ISA of this platform's family (the scalar path where the table has none).
inline isa top_of_family() {
  isa top = isa::scalar;
#define NORMKIT_ISA_TOP(name, value, family, arch, cap, flags) \
  if (::normkit::detail::defined_family_##family)              \
    top = isa::name;
  NORMKIT_ISA_TABLE(NORMKIT_ISA_TOP)
#undef NORMKIT_ISA_TOP
  return top;
}

// NORMKIT_ISA, read once per process (per configuration).
struct isa_environment {
  isa ceiling = top_of_family();  // no ceiling: the highest ISA of the platform
  bool automatic = true;          // no ISA named (unset, empty or not understood)
  char error[160] = {};           // empty unless the value was not understood
};

#define NORMKIT_ISA_LISTED(name, value, family, arch, cap, flags) ", " #name
inline isa_environment read_isa_environment() {
  isa_environment env;
  const char* value = std::getenv("NORMKIT_ISA");
  if (value == nullptr || value[0] == '\0')
    return env;
  if (parse_isa(value, env.ceiling))
    return env.automatic = false, env;
  std::snprintf(env.error, sizeof env.error,
                "normkit: NORMKIT_ISA=\"%.40s\" is not one of scalar" NORMKIT_ISA_TABLE(
                    NORMKIT_ISA_LISTED) "; ignored (no ceiling)",
                value);
  std::fprintf(stderr, "%s\n", env.error);
  return env;
}
#undef NORMKIT_ISA_LISTED

inline const isa_environment& isa_env() {
  static const isa_environment env = read_isa_environment();
  return env;
}

inline bool within_ceiling(isa i) {
  return not_above(i, isa_env().ceiling);
}

// The active ISA's value, plus automatic_bit while the automatic choice is in force.
constexpr int automatic_bit = 1 << 8;
inline std::atomic<int>& isa_state() {
  static std::atomic<int> state{static_cast<int>(best_up_to(isa_env().ceiling)) |
                                (isa_env().automatic ? automatic_bit : 0)};
  return state;
}

}  // namespace impl

// The ISA the entry points use now.
inline isa active_isa() {
  return static_cast<isa>(impl::isa_state().load(std::memory_order_relaxed) & ~impl::automatic_bit);
}

// Whether the automatic choice is in force: NORMKIT_ISA unset, empty or not understood, and no
// successful set_isa. In a runtime-dispatch build it may run some kernels on an ISA narrower than
// active_isa() where this CPU runs them faster (AVX2 for fp16 storage on AMD Zen 4); same bits.
inline bool isa_automatic() {
  return (impl::isa_state().load(std::memory_order_relaxed) & impl::automatic_bit) != 0;
}

// Whether `i` can run here: compiled into this configuration and supported by the CPU (the
// NORMKIT_ISA ceiling is not considered; see isa_ceiling()).
inline bool isa_available(isa i) {
  return impl::runnable(i);
}

// The ceiling NORMKIT_ISA sets for this process (the platform's highest ISA when it is unset or
// not understood).
inline isa isa_ceiling() {
  return impl::isa_env().ceiling;
}

// nullptr when NORMKIT_ISA is unset, empty or understood; otherwise the message that was printed
// on stderr (once) when the ISA was first chosen.
inline const char* isa_environment_error() {
  const char* e = impl::isa_env().error;
  return e[0] != '\0' ? e : nullptr;
}

// Selects exactly `i` when it is runnable here (isa_available) and not above the NORMKIT_ISA
// ceiling; otherwise returns status::unsupported_isa or status::isa_above_ceiling and changes
// nothing. Thread-safe; results never change, only speed.
inline status set_isa(isa i) {
  if (!impl::runnable(i))
    return status::unsupported_isa;
  if (!impl::within_ceiling(i))
    return status::isa_above_ceiling;
  impl::isa_state().store(static_cast<int>(i), std::memory_order_relaxed);
  return status::ok;
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
