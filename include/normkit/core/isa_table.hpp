// SPDX-License-Identifier: MIT
// normkit: the ISA table -- every fact about an instruction set the library uses, in one place
// (macros only: core/abi.hpp needs them to name the configuration; core/isa.hpp has the C++).
//
// NORMKIT_ISA_TABLE has one line per SIMD ISA: its name (NORMKIT_ISA values, to_string, ABI
// namespaces, CMake target names), its value in the public enum normkit::isa, the platform
// family, the xsimd arch its kernels are instantiated for, the cpu_caps member that says the CPU
// runs it (core/cpu.hpp), and the compiler flags of its translation unit. CMake reads the same
// lines (cmake/normkitDispatch.cmake parses this file) to build the per-ISA objects and the
// tests; C++ expands them with X-macros (core/isa.hpp, dispatch/state.hpp, dispatch/run.hpp, simd/arch.hpp).
// The scalar reference (value 0) is not a row: it is always there.
//
// avx512bf16 is avx512 plus AVX512-BF16's conversion instruction (NORMKIT_HW_BF16: simd/io.hpp).
// Its objects hold only the kernels that narrow to bf16 (dispatch/selection.hpp); the dispatcher
// fills every other slot of its table from the ISA below it (dispatch/run.hpp), so an ISA that
// only adds an instruction costs only the kernels that use it. avx512fp16 is avx512bf16 plus
// AVX512-FP16 (NORMKIT_HW_FP16): its objects hold the all-fp16 round-twice RMSNorm kernels, whose
// product of two fp16 values it rounds once in fp16 (simd/rows.hpp, write_row).
//
// Adding an ISA: its line here, its static-mode test in the #if chain below (and its family in
// core/isa.hpp if it is a new platform), its CPU check in
// core/cpu.hpp, its intrinsics in simd/ (arch_<family>.hpp). Order: ascending within a family;
// the best runnable ISA not above the NORMKIT_ISA ceiling is picked (dispatch/state.hpp).
#pragma once

// X(name, value, family, xsimd arch, cpu_caps member, "compile flags")
#define NORMKIT_ISA_TABLE(X)                                                                               \
  X(avx2, 1, x86, xsimd::fma3<xsimd::avx2>, avx2, "-mavx2 -mfma -mf16c")                                   \
  X(avx512, 2, x86, xsimd::avx512bw, avx512,                                                               \
    "-mavx512f -mavx512bw -mavx512dq -mavx512cd -mavx512vl -mavx2 -mfma -mf16c")                           \
  X(avx512bf16, 4, x86, xsimd::avx512bw, avx512bf16,                                                       \
    "-mavx512f -mavx512bw -mavx512dq -mavx512cd -mavx512vl -mavx2 -mfma -mf16c -mavx512bf16")              \
  X(avx512fp16, 5, x86, xsimd::avx512bw, avx512fp16,                                                       \
    "-mavx512f -mavx512bw -mavx512dq -mavx512cd -mavx512vl -mavx2 -mfma -mf16c -mavx512bf16 -mavx512fp16") \
  X(neon, 3, arm, xsimd::neon64, neon, "")

// Static mode (no runtime dispatch): the best ISA whose flags the including translation unit was
// compiled with, as NORMKIT_STATIC_ISA (a name of the table); none means the scalar reference.
// The runtime-dispatch component's own translation units say which ISA they are with
// NORMKIT_ISA_TU_<NAME> (cmake/normkit_isa.cpp), mapped here to NORMKIT_ISA_TU.
#if defined(NORMKIT_ISA_TU_AVX512FP16)
#define NORMKIT_ISA_TU avx512fp16
#define NORMKIT_HW_BF16 1
#define NORMKIT_HW_FP16 1
#elif defined(NORMKIT_ISA_TU_AVX512BF16)
#define NORMKIT_ISA_TU avx512bf16
#define NORMKIT_HW_BF16 1
#elif defined(NORMKIT_ISA_TU_AVX512)
#define NORMKIT_ISA_TU avx512
#elif defined(NORMKIT_ISA_TU_AVX2)
#define NORMKIT_ISA_TU avx2
#elif defined(NORMKIT_ISA_TU_NEON)
#define NORMKIT_ISA_TU neon
#elif defined(NORMKIT_RUNTIME_DISPATCH) || defined(NORMKIT_DISABLE_SIMD)
// no static ISA
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512CD__) && \
    defined(__FMA__) && defined(__F16C__) && defined(__AVX512BF16__) && defined(__AVX512FP16__)
#define NORMKIT_STATIC_ISA avx512fp16
#define NORMKIT_HW_BF16 1
#define NORMKIT_HW_FP16 1
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512CD__) && \
    defined(__FMA__) && defined(__F16C__) && defined(__AVX512BF16__)
#define NORMKIT_STATIC_ISA avx512bf16
#define NORMKIT_HW_BF16 1
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512CD__) && \
    defined(__FMA__) && defined(__F16C__)
#define NORMKIT_STATIC_ISA avx512
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define NORMKIT_STATIC_ISA avx2
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define NORMKIT_STATIC_ISA neon
#endif
