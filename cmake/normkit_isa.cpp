// SPDX-License-Identifier: MIT
// normkit runtime dispatch: one translation unit, compiled once per ISA with that ISA's flags into
// normkit::dispatch (cmake/normkitDispatch.cmake; by hand: README, Without CMake), with NORMKIT_ISA_TU_<ISA>: every function it defines or
// instantiates is in that ISA's own ABI namespace (detail/abi.hpp), and every kernel is also
// templated on the xsimd arch, so nothing here can replace a baseline symbol or a user's static
// ISA code (TOOLCHAIN.md, X2; the isa_symbols tests check the object files).
#include <normkit/detail/table_impl.hpp>

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

#if defined(NORMKIT_ISA_TU_AVX512)
static_assert(xsimd::avx512bw::supported(), "compile this TU with the AVX-512 flags");
const kernel_table& isa_table() {
  return kernel_table_for<xsimd::avx512bw>();
}
#elif defined(NORMKIT_ISA_TU_AVX2)
static_assert(xsimd::fma3<xsimd::avx2>::supported(), "compile this TU with -mavx2 -mfma -mf16c");
const kernel_table& isa_table() {
  return kernel_table_for<xsimd::fma3<xsimd::avx2> >();
}
#elif defined(NORMKIT_ISA_TU_NEON)
const kernel_table& isa_table() {
  return kernel_table_for<xsimd::neon64>();
}
#else
#error "define NORMKIT_ISA_TU_AVX2, NORMKIT_ISA_TU_AVX512 or NORMKIT_ISA_TU_NEON"
#endif

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
