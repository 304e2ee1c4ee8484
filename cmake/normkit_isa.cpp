// SPDX-License-Identifier: MIT
// normkit runtime dispatch: one translation unit, compiled once per ISA of the table
// (core/isa.hpp) with that ISA's flags into normkit::dispatch (cmake/normkitDispatch.cmake; by
// hand: README, Without CMake), with NORMKIT_ISA_TU_<ISA>: every function it defines or
// instantiates is in that ISA's own ABI namespace (core/abi.hpp), and every kernel is also
// templated on the xsimd arch, so nothing here can replace a baseline symbol or a user's static
// ISA code (the isa_symbols tests check the object files). NORMKIT_SELECT_* limit what it
// instantiates (dispatch/selection.hpp).
#include <normkit/dispatch/table_impl.hpp>
#include <normkit/simd/arch.hpp>

#if !defined(NORMKIT_ISA_TU)
#error "define NORMKIT_ISA_TU_<ISA> for one ISA of normkit/core/isa.hpp (e.g. NORMKIT_ISA_TU_AVX2)"
#endif

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

using tu_arch = arch_of_t<isa::NORMKIT_ISA_TU>;
static_assert(tu_arch::supported(), "compile this TU with its ISA's flags (normkit/core/isa.hpp)");

const kernel_table& isa_table() {
  return kernel_table_for<tu_arch>();
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
