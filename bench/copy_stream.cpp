// SPDX-License-Identifier: MIT
// The streaming half of the copy roof: a copy whose stores bypass the caches (non-temporal); and
// the two-pass pattern (a row read, then read again while written), streamed or not.
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

// One row: the sum pass (four independent chains), then the copy pass. Streamed rows use plain
// stores up to the first 32-byte boundary, as the copy does; the next row's lines go to L2.
__attribute__((target("avx2"))) unsigned two_pass_row_avx2(unsigned char* d, const unsigned char* s,
                                                           std::size_t bytes, const unsigned char* next,
                                                           bool stream) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  std::size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    a0 = _mm256_add_epi32(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    a1 = _mm256_add_epi32(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32)));
    a2 = _mm256_add_epi32(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64)));
    a3 = _mm256_add_epi32(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96)));
  }
  unsigned tail = 0;
  for (; i < bytes; ++i)
    tail += s[i];
  alignas(32) unsigned lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)));
  unsigned sum = tail;
  for (unsigned l : lanes)
    sum += l;
  if (!stream) {
    std::memcpy(d, s, bytes);
    return sum;
  }
  const std::size_t h = head(d, s, bytes, 32);
  const std::size_t rest = bytes - h;
  for (i = 0; i + 128 <= rest; i += 128) {
    if (next) {
      _mm_prefetch(reinterpret_cast<const char*>(next + h + i), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(next + h + i + 64), _MM_HINT_T1);
    }
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    const __m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), v0);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), v1);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), v2);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), v3);
  }
  std::memcpy(d + i, s + i, rest - i);
  return sum;
}

unsigned two_pass_row_generic(unsigned char* d, const unsigned char* s, std::size_t bytes) {
  unsigned sum = 0;
  for (std::size_t i = 0; i < bytes; ++i)
    sum += s[i];
  std::memcpy(d, s, bytes);
  return sum;
}

}  // namespace

bool stream_copy_available() {
  return true;
}

unsigned two_pass_rows(void* dst, const void* src, std::size_t rows, std::size_t row_bytes, bool stream) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  unsigned total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const unsigned char* next = r + 1 < rows ? s + (r + 1) * row_bytes : nullptr;
    total += avx2 ? two_pass_row_avx2(d + r * row_bytes, s + r * row_bytes, row_bytes, next, stream)
                  : two_pass_row_generic(d + r * row_bytes, s + r * row_bytes, row_bytes);
  }
  if (stream && avx2)
    _mm_sfence();  // once per call, as normkit's streaming loop
  return total;
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
unsigned two_pass_rows(void*, const void*, std::size_t, std::size_t, bool) {
  return 0;
}

#endif

}  // namespace normkit_bench
