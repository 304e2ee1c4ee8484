// normkit runtime dispatch: one translation unit, compiled once per ISA with that ISA's flags into
// normkit::dispatch (cmake/normkitDispatch.cmake; by hand: README, Without CMake). It defines only
// isa_table_<isa>(); every kernel it instantiates is templated on the xsimd arch, so nothing here
// can replace a baseline symbol (TOOLCHAIN.md, X2; test_isa_symbols checks the object files).
#include <normkit/detail/table_impl.hpp>

#if defined(NORMKIT_ISA_TU_AVX512)
static_assert(xsimd::avx512bw::supported(), "compile this TU with the AVX-512 flags");
const normkit::detail::kernel_table& normkit::detail::isa_table_avx512() {
  return kernel_table_for<xsimd::avx512bw>();
}
#elif defined(NORMKIT_ISA_TU_AVX2)
static_assert(xsimd::fma3<xsimd::avx2>::supported(), "compile this TU with -mavx2 -mfma -mf16c");
const normkit::detail::kernel_table& normkit::detail::isa_table_avx2() {
  return kernel_table_for<xsimd::fma3<xsimd::avx2> >();
}
#elif defined(NORMKIT_ISA_TU_NEON)
const normkit::detail::kernel_table& normkit::detail::isa_table_neon() {
  return kernel_table_for<xsimd::neon64>();
}
#else
#error "define NORMKIT_ISA_TU_AVX2, NORMKIT_ISA_TU_AVX512 or NORMKIT_ISA_TU_NEON"
#endif
