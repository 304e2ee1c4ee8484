// SPDX-License-Identifier: MIT
// normkit tests, fuzz harnesses and bench: the storage types as the library lists them, their
// names, their bits and their field widths. Everything here is derived from the library's one
// trait (normkit::storage_traits, core/storage.hpp) and its type list (detail::input_types), so a
// new storage type reaches the tests without a new branch here. No gtest: the libFuzzer harnesses
// and Google Benchmark include it too.
#pragma once

#include <normkit/types.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint64_t
#include <cstdio>       // std::snprintf
#include <cstring>      // std::memcpy
#include <string>       // std::string
#include <type_traits>  // std::is_same
#include <utility>      // std::forward

namespace normkit_test {

using normkit::bf16;
using normkit::fp16;

// ---- Type lists: the library's, never a copy.
template <class... Ts>
using type_list = normkit::detail::type_list<Ts...>;
// The types an op accepts for its inputs, gains and outputs, in the library's table order.
using storage_types = normkit::detail::input_types;

template <class T>
struct type_tag {
  using type = T;
};

// f(type_tag<T>{}) for each type of the list, in order.
template <class F, class... Ts>
void for_each_type(type_list<Ts...>, F&& f) {
  (f(type_tag<Ts>{}), ...);
}

// ---- Facts of one storage type, from the trait.
template <class T>
using traits = normkit::storage_traits<T>;
template <class T>
using bits_type = typename traits<T>::bits;

template <class T>
constexpr const char* type_name() {
  return traits<T>::name;
}

// Field widths, read off the exponent mask: the mantissa lies below it, the sign above it.
constexpr int count_ones(std::uint64_t m) {
  return m == 0 ? 0 : static_cast<int>(m & 1u) + count_ones(m >> 1);
}
constexpr int trailing_zeros(std::uint64_t m) {
  return m == 0 || (m & 1u) ? 0 : 1 + trailing_zeros(m >> 1);
}
template <class T>
constexpr int exponent_bits() {
  return count_ones(traits<T>::exponent_mask);
}
template <class T>
constexpr int mantissa_bits() {
  return trailing_zeros(traits<T>::exponent_mask);
}
template <class T>
constexpr std::uint32_t sign_mask() {
  return static_cast<std::uint32_t>(traits<T>::magnitude_mask) + 1u;
}
static_assert(exponent_bits<float>() == 8 && mantissa_bits<float>() == 23 &&
                  sign_mask<float>() == 0x80000000u,
              "binary32 layout");
static_assert(exponent_bits<bf16>() == 8 && mantissa_bits<bf16>() == 7, "bfloat16 layout");
static_assert(exponent_bits<fp16>() == 5 && mantissa_bits<fp16>() == 10, "binary16 layout");

// ---- Bits of a storage value (widened to 32 bits for comparisons and messages), and back.
template <class T>
std::uint32_t bits(T v) {
  static_assert(sizeof(T) == sizeof(bits_type<T>), "a storage value is its bits");
  bits_type<T> u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

template <class T>
T from_bits(std::uint32_t u) {
  const bits_type<T> b = static_cast<bits_type<T>>(u);
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Bits of element i of a buffer of storage values of `elem` bytes (type-erased harnesses).
inline std::uint32_t bits_at(const void* p, std::size_t i, std::size_t elem) {
  std::uint32_t u = 0;  // little-endian targets only (x86-64, AArch64): the low bytes
  std::memcpy(&u, static_cast<const unsigned char*>(p) + elem * i, elem);
  return u;
}

// "0x7fc0" / "0x7fc00000": as many hex digits as the type has bits.
inline std::string hex(std::uint32_t u, std::size_t bytes) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", static_cast<int>(2 * bytes), static_cast<unsigned>(u));
  return buf;
}
template <class T>
std::string hex(T v) {
  return hex(bits(v), sizeof(T));
}

// ---- A storage type chosen at run time: its position in storage_types. The harnesses that keep
// compile time low hold buffers of any type behind one of these and visit the type where the
// values are made or compared.
struct dtype {
  std::size_t index = 0;
  friend bool operator==(dtype a, dtype b) { return a.index == b.index; }
  friend bool operator!=(dtype a, dtype b) { return a.index != b.index; }
};

template <class T>
constexpr dtype dtype_of() {
  return {normkit::detail::index_of<T, storage_types>::value};
}

template <class F, class T, class... Ts>
decltype(auto) visit_at(dtype t, F&& f, type_list<T, Ts...>) {
  if constexpr (sizeof...(Ts) == 0) {
    return f(type_tag<T>{});
  } else {
    if (t.index == 0)
      return f(type_tag<T>{});
    return visit_at(dtype{t.index - 1}, std::forward<F>(f), type_list<Ts...>{});
  }
}

// f(type_tag<T>{}) for the T at position t.index (t.index < storage_types::size).
template <class F>
decltype(auto) visit(dtype t, F&& f) {
  return visit_at(t, std::forward<F>(f), storage_types{});
}

inline const char* name_of(dtype t) {
  return visit(t, [](auto tag) { return type_name<typename decltype(tag)::type>(); });
}
inline std::size_t size_of(dtype t) {
  return visit(t, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}
inline std::string hex(std::uint32_t u, dtype t) {
  return hex(u, size_of(t));
}

}  // namespace normkit_test
