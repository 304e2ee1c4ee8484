// normkit: configuration checks and the ABI tag of every function normkit defines.
//
// Two translation units built with different ISA flags emit the same inline or template symbol
// with different code, and the linker keeps one copy (an AVX-512 body called from a baseline TU
// is a SIGILL; at -O0/-Og/-O1 even the scalar helpers are emitted out of line). So every normkit
// function -- entry points, detail helpers, kernels, reference, oracle, to_string -- sits in the
// inline namespace NORMKIT_ABI_NAMESPACE, which names the library version and the
// configuration: abi_v0_2_0_avx2 and so on. Callers never spell it (normkit::detail::x finds
// it). Public types (bf16, fp16, status, isa, the policies) stay in namespace normkit: they must
// be one type in every TU. No inline standard-library function may be called from code a
// per-ISA TU instantiates either (std:: cannot be tagged): detail/math.hpp has tagged wrappers.
#pragma once

#include "../version.hpp"

#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error \
    "normkit: -ffast-math / -ffinite-math-only break its bit-exact contract (NaN handling, \
IEEE sqrt and division, no reassociation). Compile the TUs that include normkit without them."
#endif

// abi_v<major>_<minor>_<patch>_<configuration>, e.g. abi_v0_2_0_avx512.
#define NORMKIT_ABI_NAME_CAT(major, minor, patch, config) abi_v##major##_##minor##_##patch##_##config
#define NORMKIT_ABI_NAME_EXPAND(major, minor, patch, config) NORMKIT_ABI_NAME_CAT(major, minor, patch, config)
#define NORMKIT_ABI_NAME(config) \
  NORMKIT_ABI_NAME_EXPAND(NORMKIT_VERSION_MAJOR, NORMKIT_VERSION_MINOR, NORMKIT_VERSION_PATCH, config)

// The per-ISA translation units of the runtime-dispatch component (cmake/normkit_isa.cpp) have
// namespaces of their own (dispatch_avx2, ...), distinct from a user's static TU built with
// similar flags: -march=sapphirerapids code of the user's must never replace a kernel that the
// dispatcher runs on a Zen 4, nor the reverse. The dispatcher names them (detail/table.hpp), and
// the kernel table type they exchange sits in a namespace of the version alone.
#define NORMKIT_DISPATCH_AVX2_NAMESPACE NORMKIT_ABI_NAME(dispatch_avx2)
#define NORMKIT_DISPATCH_AVX512_NAMESPACE NORMKIT_ABI_NAME(dispatch_avx512)
#define NORMKIT_DISPATCH_NEON_NAMESPACE NORMKIT_ABI_NAME(dispatch_neon)
#define NORMKIT_TABLE_NAMESPACE NORMKIT_ABI_NAME(table)

#if defined(NORMKIT_ISA_TU_AVX512)
#define NORMKIT_ABI_NAMESPACE NORMKIT_DISPATCH_AVX512_NAMESPACE
#elif defined(NORMKIT_ISA_TU_AVX2)
#define NORMKIT_ABI_NAMESPACE NORMKIT_DISPATCH_AVX2_NAMESPACE
#elif defined(NORMKIT_ISA_TU_NEON)
#define NORMKIT_ABI_NAMESPACE NORMKIT_DISPATCH_NEON_NAMESPACE
#elif defined(NORMKIT_RUNTIME_DISPATCH)
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(dispatch)
#elif defined(NORMKIT_DISABLE_SIMD)
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(scalar)
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512CD__) && \
    defined(__FMA__) && defined(__F16C__)
#define NORMKIT_STATIC_AVX512 1
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(avx512)
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define NORMKIT_STATIC_AVX2 1
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(avx2)
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define NORMKIT_STATIC_NEON 1
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(neon)
#else
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(scalar)
#endif
