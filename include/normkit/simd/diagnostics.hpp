// SPDX-License-Identifier: MIT
// normkit: g++ 12 reports its own AVX-512 intrinsics (_mm512_undefined_* inside vpslld,
// vextractf32x8, vpmovdw, ...) as uninitialized wherever they are inlined, with -march=native
// on an AVX-512 CPU (GCC bug 105593, fixed in 13), and a user's -Werror build would fail on it.
// Every header that calls x86 intrinsics wraps its code in these two macros.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#define NORMKIT_INTRINSICS_BEGIN                                                       \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define NORMKIT_INTRINSICS_END _Pragma("GCC diagnostic pop")
#else
#define NORMKIT_INTRINSICS_BEGIN
#define NORMKIT_INTRINSICS_END
#endif
