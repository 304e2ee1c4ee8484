// normkit: configuration checks and the ABI tag of the entry points.
//
// The entry points are templates; two translation units built with different ISA flags would
// otherwise emit the same symbol with different code, and the linker would keep one (an
// AVX-512 body called from a baseline TU is a SIGILL). The inline namespace below gives each
// configuration its own symbols; callers never spell it.
#pragma once

// Compiler flags that change the bits are refused (docs/fp-environment.md has the table): g++
// announces each one with a macro. clang 14 defines only __FAST_MATH__ and __FINITE_MATH_ONLY__;
// its other unsafe-math flags are neutralized instead by the float_control(precise) region of
// every normkit header (fp_precise_begin.hpp). -fno-math-errno, -ffp-contract=fast,
// -fno-trapping-math, -frounding-math and -fno-signed-zeros change no bit (every a*b+c of the
// contract is an explicit fma; the corpus-hash tests build with them) and stay allowed.
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error \
    "normkit: -ffast-math / -ffinite-math-only break its bit-exact contract (NaN handling, \
IEEE sqrt and division, no reassociation). Compile the TUs that include normkit without them."
#endif
#if defined(__ASSOCIATIVE_MATH__)
#error \
    "normkit: -fassociative-math (also set by -funsafe-math-optimizations) reorders its canonical \
sums and changes the bits. Compile the TUs that include normkit without it (-fno-associative-math)."
#endif
#if defined(__RECIPROCAL_MATH__)
#error \
    "normkit: -freciprocal-math (also set by -funsafe-math-optimizations) replaces its IEEE \
divisions by reciprocal multiplies and changes the bits. Compile the TUs that include normkit \
without it (-fno-reciprocal-math)."
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
// A SIMD platform compiled without the flags of its SIMD path silently runs the scalar reference
// (about 10x slower): say so, naming the missing flags (partial sets such as -mavx2 alone, or
// -mavx512f -mavx512bw -mavx512dq -mavx512vl without FMA/F16C under g++, land here too).
#if !defined(NORMKIT_ALLOW_SCALAR) && (defined(__x86_64__) || defined(_M_X64))
#if !defined(__AVX2__) && !defined(__FMA__) && !defined(__F16C__)
#warning \
    "normkit: missing -mavx2 -mfma -mf16c: this translation unit runs the scalar reference path (static mode). Link normkit::normkit (runtime dispatch; without CMake: -DNORMKIT_RUNTIME_DISPATCH and the ISA objects, README 'Without CMake') or add -march=x86-64-v3; -DNORMKIT_ALLOW_SCALAR silences this"
#elif !defined(__FMA__) && !defined(__F16C__) && defined(__AVX2__)
#warning \
    "normkit: missing -mfma -mf16c: this translation unit runs the scalar reference path (static mode). Link normkit::normkit (runtime dispatch; without CMake: -DNORMKIT_RUNTIME_DISPATCH and the ISA objects, README 'Without CMake') or add -march=x86-64-v3; -DNORMKIT_ALLOW_SCALAR silences this"
#elif !defined(__AVX2__) && !defined(__F16C__) && defined(__FMA__)
#warning \
    "normkit: missing -mavx2 -mf16c: this translation unit runs the scalar reference path (static mode). Link normkit::normkit (runtime dispatch; without CMake: -DNORMKIT_RUNTIME_DISPATCH and the ISA objects, README 'Without CMake') or add -march=x86-64-v3; -DNORMKIT_ALLOW_SCALAR silences this"
#elif !defined(__F16C__) && defined(__AVX2__) && defined(__FMA__)
#warning \
    "normkit: missing -mf16c: this translation unit runs the scalar reference path (static mode). Link normkit::normkit (runtime dispatch; without CMake: -DNORMKIT_RUNTIME_DISPATCH and the ISA objects, README 'Without CMake') or add -march=x86-64-v3; -DNORMKIT_ALLOW_SCALAR silences this"
#elif !defined(__AVX2__) && !defined(__FMA__) && defined(__F16C__)
#warning \
    "normkit: missing -mavx2 -mfma: this translation unit runs the scalar reference path (static mode). Link normkit::normkit (runtime dispatch; without CMake: -DNORMKIT_RUNTIME_DISPATCH and the ISA objects, README 'Without CMake') or add -march=x86-64-v3; -DNORMKIT_ALLOW_SCALAR silences this"
#elif !defined(__FMA__) && defined(__AVX2__) && defined(__F16C__)
#warning \
    "normkit: missing -mfma: this translation unit runs the scalar reference path (static mode). Link normkit::normkit (runtime dispatch; without CMake: -DNORMKIT_RUNTIME_DISPATCH and the ISA objects, README 'Without CMake') or add -march=x86-64-v3; -DNORMKIT_ALLOW_SCALAR silences this"
#elif !defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#warning \
    "normkit: missing -mavx2: this translation unit runs the scalar reference path (static mode). Link normkit::normkit (runtime dispatch; without CMake: -DNORMKIT_RUNTIME_DISPATCH and the ISA objects, README 'Without CMake') or add -march=x86-64-v3; -DNORMKIT_ALLOW_SCALAR silences this"
#endif
#elif !defined(NORMKIT_ALLOW_SCALAR) && defined(__aarch64__)
#warning \
    "normkit: NEON is disabled (+nosimd / -mgeneral-regs-only): this translation unit runs the scalar reference path; link normkit::normkit or enable NEON; -DNORMKIT_ALLOW_SCALAR silences this"
#endif
#endif
