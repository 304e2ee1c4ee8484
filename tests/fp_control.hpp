// SPDX-License-Identifier: MIT
// The floating-point control word for tests (gtest-free): flush-to-zero on and off (x86
// MXCSR.FTZ | DAZ, Arm FPCR.FZ), and a scope that restores the previous word.
#pragma once

#include <cstdint>  // std::uint64_t

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr
#endif

namespace normkit_test {

#if defined(__x86_64__) || defined(__i386__)
inline constexpr bool have_flush_to_zero = true;
inline constexpr std::uint64_t flush_bits = 0x8040u;  // MXCSR.FTZ (bit 15) | MXCSR.DAZ (bit 6)
// The control bits only: bits 0-5 are sticky exception flags that any arithmetic may set.
inline std::uint64_t fp_control() {
  return _mm_getcsr() & ~std::uint64_t{0x3f};
}
inline void set_fp_control(std::uint64_t c) {
  _mm_setcsr(static_cast<unsigned>(c | (_mm_getcsr() & 0x3fu)));
}
#elif defined(__aarch64__)
inline constexpr bool have_flush_to_zero = true;
inline constexpr std::uint64_t flush_bits = std::uint64_t{1} << 24;  // FPCR.FZ
inline std::uint64_t fp_control() {
  std::uint64_t c;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(c));
  return c;
}
inline void set_fp_control(std::uint64_t c) {
  __asm__ __volatile__("msr fpcr, %0" : : "r"(c));
}
#else
inline constexpr bool have_flush_to_zero = false;
inline constexpr std::uint64_t flush_bits = 0;
inline std::uint64_t fp_control() {
  return 0;
}
inline void set_fp_control(std::uint64_t) {}
#endif

// Flush-to-zero for the scope of a block; the previous control word comes back on exit.
class flush_to_zero_scope {
 public:
  flush_to_zero_scope() : saved_(fp_control()) { set_fp_control(saved_ | flush_bits); }
  ~flush_to_zero_scope() { set_fp_control(saved_); }
  flush_to_zero_scope(const flush_to_zero_scope&) = delete;
  flush_to_zero_scope& operator=(const flush_to_zero_scope&) = delete;

 private:
  std::uint64_t saved_;
};

}  // namespace normkit_test
