// SPDX-License-Identifier: MIT
// normkit: the public ISA enum and the platform families, expanded from the ISA table
// (core/isa_table.hpp).
#pragma once

#include "abi.hpp"
#include "isa_table.hpp"

namespace normkit {

// The code paths, by the ISA they use. Values are stable (the table's second column).
#define NORMKIT_ISA_ENUMERATOR(name, value, family, arch, cap, flags) name = value,
enum class isa { scalar = 0, NORMKIT_ISA_TABLE(NORMKIT_ISA_ENUMERATOR) };
#undef NORMKIT_ISA_ENUMERATOR

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {
// The platform families of the table's third column; only the ISAs of the family a translation
// unit is compiled for can be reached from it.
constexpr int family_index_x86 = 0, family_index_arm = 1;
constexpr int family_count = 2;
// One past the largest isa value (values need not be consecutive: neon is 3, avx512bf16 4), for
// arrays indexed by isa.
constexpr int isa_value_count = [] {
#define NORMKIT_ISA_VALUE_OF(name, value, family, arch, cap, flags) value,
  constexpr int values[] = {0, NORMKIT_ISA_TABLE(NORMKIT_ISA_VALUE_OF)};
#undef NORMKIT_ISA_VALUE_OF
  int m = 0;
  for (int v : values)
    m = v > m ? v : m;
  return m + 1;
}();
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
constexpr bool defined_family_x86 = true, defined_family_arm = false;
#elif defined(__aarch64__)
constexpr bool defined_family_x86 = false, defined_family_arm = true;
#else
constexpr bool defined_family_x86 = false, defined_family_arm = false;
#endif
}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE

}  // namespace normkit
