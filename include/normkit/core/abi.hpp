// SPDX-License-Identifier: MIT
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
// per-ISA TU instantiates either (std:: cannot be tagged): core/math.hpp has tagged wrappers.
#pragma once

// Compiler flags that change the bits are refused (docs/fp-environment.md has the table): g++
// announces each one with a macro. clang 14 defines only __FAST_MATH__ and __FINITE_MATH_ONLY__;
// its other unsafe-math flags are neutralized instead by the float_control(precise) region of
// every normkit header (fp_precise_begin.hpp). -fno-math-errno, -ffp-contract=fast,
// -fno-trapping-math, -frounding-math and -fno-signed-zeros change no bit (every a*b+c of the
// contract is an explicit fma; the corpus-hash tests build with them) and stay allowed.

#include "isa_table.hpp"
#include "version.hpp"

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

// abi_v<major>_<minor>_<patch>_<configuration>, e.g. abi_v0_2_0_avx512.
#define NORMKIT_ABI_NAME_CAT(major, minor, patch, config) abi_v##major##_##minor##_##patch##_##config
#define NORMKIT_ABI_NAME_EXPAND(major, minor, patch, config) NORMKIT_ABI_NAME_CAT(major, minor, patch, config)
#define NORMKIT_ABI_NAME(config) \
  NORMKIT_ABI_NAME_EXPAND(NORMKIT_VERSION_MAJOR, NORMKIT_VERSION_MINOR, NORMKIT_VERSION_PATCH, config)

// The per-ISA translation units of the runtime-dispatch component (cmake/normkit_isa.cpp) have
// namespaces of their own (dispatch_avx2, ...), distinct from a user's static TU built with
// similar flags: -march=sapphirerapids code of the user's must never replace a kernel that the
// dispatcher runs on a Zen 4, nor the reverse. The dispatcher names them (dispatch/table.hpp),
// and the kernel table type they exchange sits in a namespace of the version alone.
#define NORMKIT_PASTE_(a, b) a##b
#define NORMKIT_PASTE(a, b) NORMKIT_PASTE_(a, b)
#define NORMKIT_DISPATCH_NAMESPACE_OF(isa_name) NORMKIT_ABI_NAME(NORMKIT_PASTE(dispatch_, isa_name))
#define NORMKIT_TABLE_NAMESPACE NORMKIT_ABI_NAME(table)

// The configurations (core/isa_table.hpp decides which ISA a translation unit is for).
#if defined(NORMKIT_ISA_TU)
#define NORMKIT_ABI_NAMESPACE NORMKIT_DISPATCH_NAMESPACE_OF(NORMKIT_ISA_TU)
#elif defined(NORMKIT_RUNTIME_DISPATCH)
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(dispatch)
#elif defined(NORMKIT_DISABLE_SIMD)
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(scalar)
#elif defined(NORMKIT_STATIC_ISA)
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(NORMKIT_STATIC_ISA)
#else
#define NORMKIT_ABI_NAMESPACE NORMKIT_ABI_NAME(scalar)
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
