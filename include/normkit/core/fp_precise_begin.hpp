// SPDX-License-Identifier: MIT
// normkit: opens a region of IEEE floating-point semantics for clang; every normkit header that
// holds floating-point code includes it right after `#pragma once` and fp_precise_end.hpp at its
// end (no include guard on purpose: each inclusion pushes once, its end pops once).
//
// clang 14 defines no macro for -fassociative-math, -freciprocal-math, -fno-signed-zeros,
// -fno-honor-nans, -fno-honor-infinities, -fapprox-func or -funsafe-math-optimizations (only
// __FAST_MATH__ and __FINITE_MATH_ONLY__), so core/abi.hpp cannot refuse them as it does for
// g++. Instead `float_control(precise, on)` gives every floating-point operation parsed inside
// the region -- template bodies included, wherever they are instantiated later -- IEEE
// semantics: no reassociation, no reciprocals, signed zeros and NaN/Inf honoured (contraction
// stays "on", which changes nothing: the contract's a*b+c are explicit fma). It covers the
// headers normkit includes first (xsimd, the intrinsics headers, <cmath>); code a translation
// unit parsed before its first normkit include (e.g. its own earlier #include <immintrin.h>
// under -fassociative-math) keeps the command line's flags (docs/fp-environment.md).
#if defined(__clang__)
#pragma float_control(precise, on, push)
#endif
