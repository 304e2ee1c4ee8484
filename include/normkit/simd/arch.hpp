// SPDX-License-Identifier: MIT
// normkit: the xsimd arch of each ISA of the table (core/isa.hpp), and the static-mode arch.
#pragma once

#include <xsimd/xsimd.hpp>

#include "../core/abi.hpp"
#include "../core/isa.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <isa I>
struct arch_of;
#define NORMKIT_ISA_ARCH(name, value, family, arch, cap, flags) \
  template <>                                                   \
  struct arch_of<isa::name> {                                   \
    using type = arch;                                          \
  };
NORMKIT_ISA_TABLE(NORMKIT_ISA_ARCH)
#undef NORMKIT_ISA_ARCH
template <isa I>
using arch_of_t = typename arch_of<I>::type;

#if defined(NORMKIT_STATIC_ISA)
// Static mode: the arch the including translation unit's flags allow (core/isa.hpp).
using static_arch = arch_of_t<isa::NORMKIT_STATIC_ISA>;
#endif

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
