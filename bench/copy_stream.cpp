// SPDX-License-Identifier: MIT
// The streaming half of the copy roof: a copy whose stores bypass the caches (non-temporal).
// At DRAM sizes it beats glibc's memcpy (no read-for-ownership of the destination); in cache it
// loses badly, which is why the roof is the faster of the two. The AVX2 body is compiled with a
// target attribute and chosen with __builtin_cpu_supports, so this TU needs no -m flags and the
// binary still runs on an x86-64 CPU without AVX2 (SSE2 body).
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uintptr_t
#include <cstring>  // std::memcpy

#include "baselines.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NORMKIT_BENCH_HAVE_STREAM 1
#endif

namespace normkit_bench {

#if defined(NORMKIT_BENCH_HAVE_STREAM)
namespace {

// Copies until dst is `align`-aligned; returns the bytes copied.
std::size_t head(unsigned char*& d, const unsigned char*& s, std::size_t bytes, std::size_t align) {
  const std::size_t mis = reinterpret_cast<std::uintptr_t>(d) & (align - 1);
  std::size_t n = mis ? align - mis : 0;
  if (n > bytes)
    n = bytes;
  std::memcpy(d, s, n);
  d += n;
  s += n;
  return n;
}

__attribute__((target("avx2"))) void stream_avx2(unsigned char* d, const unsigned char* s,
                                                 std::size_t bytes) {
  bytes -= head(d, s, bytes, 32);
  std::size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {  // two cache lines per step: four 32-byte streams
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), e);
  }
  std::memcpy(d + i, s + i, bytes - i);
  _mm_sfence();  // once per call: order the streamed stores before anything that follows
}

void stream_sse2(unsigned char* d, const unsigned char* s, std::size_t bytes) {
  bytes -= head(d, s, bytes, 16);
  std::size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + i, s + i, bytes - i);
  _mm_sfence();
}

}  // namespace

bool stream_copy_available() {
  return true;
}

void stream_copy(void* dst, const void* src, std::size_t bytes) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (avx2)
    stream_avx2(d, s, bytes);
  else
    stream_sse2(d, s, bytes);
}

#else

bool stream_copy_available() {
  return false;
}
void stream_copy(void*, const void*, std::size_t) {}

#endif

}  // namespace normkit_bench
