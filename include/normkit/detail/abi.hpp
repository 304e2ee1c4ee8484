// normkit: configuration checks and the ABI tag of the entry points.
//
// The entry points are templates; two translation units built with different ISA flags would
// otherwise emit the same symbol with different code, and the linker would keep one (an
// AVX-512 body called from a baseline TU is a SIGILL). The inline namespace below gives each
// configuration its own symbols; callers never spell it.
#pragma once

#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error \
    "normkit: -ffast-math / -ffinite-math-only break its bit-exact contract (NaN handling, \
IEEE sqrt and division, no reassociation). Compile the TUs that include normkit without them."
#endif

#if defined(NORMKIT_RUNTIME_DISPATCH)
#define NORMKIT_ABI_NAMESPACE abi_dispatch
#elif defined(NORMKIT_DISABLE_SIMD)
#define NORMKIT_ABI_NAMESPACE abi_scalar
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512CD__) && \
    defined(__FMA__) && defined(__F16C__)
#define NORMKIT_STATIC_AVX512 1
#define NORMKIT_ABI_NAMESPACE abi_avx512
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define NORMKIT_STATIC_AVX2 1
#define NORMKIT_ABI_NAMESPACE abi_avx2
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define NORMKIT_STATIC_NEON 1
#define NORMKIT_ABI_NAMESPACE abi_neon
#else
#define NORMKIT_ABI_NAMESPACE abi_scalar
#endif
