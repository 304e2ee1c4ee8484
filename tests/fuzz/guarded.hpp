// SPDX-License-Identifier: MIT
// normkit fuzzing support: tensors in their own mappings between PROT_NONE guard pages, with
// everything that is not a row element filled with a canary and (under ASan) poisoned, so any
// read or write outside the rows a call was given crashes or shows up as a changed canary.
#pragma once

#include "../rng.hpp"  // normkit_test::rng

#include <sys/mman.h>  // mmap, mprotect, munmap
#include <unistd.h>    // sysconf

#include <cstdarg>  // va_list
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t, std::uintptr_t
#include <cstdio>   // std::fprintf, std::vfprintf
#include <cstdlib>  // std::abort, std::getenv
#include <cstring>  // std::memcpy, std::memset, std::memcmp
#include <vector>   // std::vector

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NORMKIT_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(NORMKIT_FUZZ_ASAN)
#define NORMKIT_FUZZ_ASAN 1
#endif
#if defined(NORMKIT_FUZZ_ASAN)
#include <sanitizer/asan_interface.h>  // ASAN_POISON_MEMORY_REGION
#endif

namespace normkit_fuzz {

// A violated harness invariant: print what and where, then abort so libFuzzer (or the replay
// driver) reports the input as a crash.
[[noreturn]] inline void fail(const char* file, int line, const char* cond, const char* fmt, ...) {
  std::fprintf(stderr, "\nnormkit fuzz: invariant violated at %s:%d: %s\n  ", file, line, cond);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "\n");
  std::abort();
}

#define FUZZ_CHECK(cond, ...)                                       \
  do {                                                              \
    if (!(cond))                                                    \
      ::normkit_fuzz::fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

// NORMKIT_FUZZ_VERBOSE=1 prints one line per input (what was called, what it must return).
inline bool verbose() {
  static const bool v = std::getenv("NORMKIT_FUZZ_VERBOSE") != nullptr;
  return v;
}

inline void poison(const void* p, std::size_t n) {
#if defined(NORMKIT_FUZZ_ASAN)
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}

inline void unpoison(const void* p, std::size_t n) {
#if defined(NORMKIT_FUZZ_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}

constexpr std::uint8_t canary = 0xCB;  // not a plausible kernel output byte pattern

inline std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

// Bytes spanned by a strided tensor: ((rows - 1) * stride + cols) * elem, 0 when empty.
inline std::size_t extent_bytes(std::size_t rows, std::size_t cols, std::size_t stride, std::size_t elem) {
  if (rows == 0 || cols == 0)
    return 0;
  return ((rows - 1) * stride + cols) * elem;
}

// One strided tensor in its own mapping: [guard page][span][guard page]. With anchor_end the
// tensor's last byte is the last byte before the back guard page (over-reads fault at once);
// otherwise it starts `lead` bytes after the front guard page (under-reads fault at once). The
// rest of the span, and the gaps between rows, hold the canary and are poisoned under ASan.
// ASan poisons whole 8-byte granules only from a granule's end: up to 7 gap bytes just before a
// row start stay addressable, which the canary check covers for writes.
class tensor {
 public:
  tensor(std::size_t rows, std::size_t cols, std::size_t stride, std::size_t elem, bool anchor_end,
         std::size_t lead)
      : rows_(rows), cols_(cols), stride_(stride), elem_(elem) {
    const std::size_t pg = page_size();
    const std::size_t bytes = extent_bytes(rows, cols, stride, elem);
    span_ = (bytes + lead + pg - 1) / pg * pg;
    if (span_ == 0)
      span_ = pg;
    map_ = static_cast<std::uint8_t*>(
        mmap(nullptr, span_ + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    FUZZ_CHECK(map_ != MAP_FAILED, "mmap of %zu bytes failed", span_ + 2 * pg);
    FUZZ_CHECK(mprotect(map_, pg, PROT_NONE) == 0, "mprotect");
    FUZZ_CHECK(mprotect(map_ + pg + span_, pg, PROT_NONE) == 0, "mprotect");
    data_ = anchor_end ? map_ + pg + span_ - bytes : map_ + pg + lead;
    std::memset(span(), canary, span_);
  }
  ~tensor() {
    unpoison(span(), span_);
    munmap(map_, span_ + 2 * page_size());
  }
  tensor(const tensor&) = delete;
  tensor& operator=(const tensor&) = delete;

  std::uint8_t* data() const { return data_; }
  std::uint8_t* span() const { return map_ + page_size(); }
  std::size_t span_bytes() const { return span_; }
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t stride() const { return stride_; }
  std::size_t elem() const { return elem_; }
  std::uint8_t* row(std::size_t r) const { return data_ + r * stride_ * elem_; }

  // Copies rows from a contiguous rows x cols buffer; everything else is canary again.
  void set_rows(const void* contiguous) {
    unpoison(span(), span_);
    std::memset(span(), canary, span_);
    for (std::size_t r = 0; r < rows_ && cols_ > 0; ++r)
      std::memcpy(row(r), static_cast<const std::uint8_t*>(contiguous) + r * cols_ * elem_, cols_ * elem_);
  }

  // Copies the rows out to a contiguous rows x cols buffer.
  void get_rows(void* contiguous) const {
    for (std::size_t r = 0; r < rows_ && cols_ > 0; ++r)
      std::memcpy(static_cast<std::uint8_t*>(contiguous) + r * cols_ * elem_, row(r), cols_ * elem_);
  }

  // Poisons every byte of the span that is not a row element.
  void arm() const {
    if (rows_ == 0 || cols_ == 0)
      return poison(span(), span_);
    poison(span(), static_cast<std::size_t>(data_ - span()));
    for (std::size_t r = 0; r + 1 < rows_; ++r)
      poison(row(r) + cols_ * elem_, (stride_ - cols_) * elem_);
    const std::uint8_t* end = row(rows_ - 1) + cols_ * elem_;
    poison(end, static_cast<std::size_t>(span() + span_ - end));
  }
  void disarm() const { unpoison(span(), span_); }

  // The whole span, for "nothing changed" checks.
  std::vector<std::uint8_t> snapshot() const {
    unpoison(span(), span_);
    return std::vector<std::uint8_t>(span(), span() + span_);
  }
  bool same_as(const std::vector<std::uint8_t>& snap) const {
    return snap.size() == span_ && std::memcmp(snap.data(), span(), span_) == 0;
  }

  // Offset (from the span start) of the first non-canary byte outside the rows, or -1.
  long outside_rows_changed() const {
    const std::uint8_t* const s = span();
    auto first_changed = [&](const std::uint8_t* b, const std::uint8_t* e) -> long {
      for (const std::uint8_t* p = b; p < e; ++p)
        if (*p != canary)
          return static_cast<long>(p - s);
      return -1;
    };
    if (rows_ == 0 || cols_ == 0)
      return first_changed(s, s + span_);
    long at = first_changed(s, data_);
    for (std::size_t r = 0; at < 0 && r + 1 < rows_; ++r)
      at = first_changed(row(r) + cols_ * elem_, row(r + 1));
    if (at < 0)
      at = first_changed(row(rows_ - 1) + cols_ * elem_, s + span_);
    return at;
  }

 private:
  std::size_t rows_, cols_, stride_, elem_;
  std::size_t span_ = 0;
  std::uint8_t* map_ = nullptr;
  std::uint8_t* data_ = nullptr;
};

// The value generator seeded from the fuzz input: the tests' splitmix64 (GoogleTest-free).
using prng = ::normkit_test::rng;

}  // namespace normkit_fuzz
